//! ListOffsets: earliest (-2), latest (-1), the largest timestamp (-3, v7+), or the first
//! record whose timestamp reaches a time, each with the leader epoch it was written in.

use kwire::messages::list_offsets_response::{ListOffsetsPartitionResponse, ListOffsetsTopicResponse};
use kwire::messages::{ListOffsetsRequest, ListOffsetsResponse};
use kwire::ErrorCode;

use super::Ctx;
use crate::log::Found;

const LATEST: i64 = -1;
const EARLIEST: i64 = -2;
const MAX_TIMESTAMP: i64 = -3;

pub(super) async fn handle(ctx: &Ctx<'_>, request: ListOffsetsRequest) -> ListOffsetsResponse {
    let (node, version) = (ctx.node, ctx.version);
    let mut state = ctx.shared.state();
    let topics = request
        .topics
        .into_iter()
        .map(|topic| {
            let name = topic.name.0.to_string();
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let mut response = partition_response(p.partition_index, ErrorCode::NONE);
                    match state.led_partition(&name, p.partition_index, node) {
                        Err(code) => response.error_code = code,
                        Ok(partition) => {
                            if let Err(code) = super::check_leader_epoch(p.current_leader_epoch, partition.leader_epoch)
                            {
                                response.error_code = code;
                                return response;
                            }
                            let log = &partition.log;
                            // Kafka's leader-epoch cache: the log end is in the current epoch,
                            // the start in the epoch of its batch (the current one if empty).
                            let current = partition.leader_epoch;
                            let found = match p.timestamp {
                                // read_committed (v2+) sees the log end only up to the last stable offset.
                                LATEST => {
                                    let offset = if request.isolation_level == 1 {
                                        partition.txns.last_stable_offset(log.end_offset())
                                    } else {
                                        log.end_offset()
                                    };
                                    Some(Found { offset, timestamp: -1, epoch: current })
                                }
                                EARLIEST => {
                                    let offset = log.start_offset();
                                    Some(Found {
                                        offset,
                                        timestamp: -1,
                                        epoch: log.epoch_at(offset).unwrap_or(current),
                                    })
                                }
                                MAX_TIMESTAMP => log.max_timestamp(),
                                ts if ts >= 0 => log.offset_for_timestamp(ts),
                                _ => {
                                    response.error_code = ErrorCode::UNSUPPORTED_VERSION;
                                    None
                                }
                            };
                            if let Some(found) = found {
                                response.offset = found.offset;
                                response.timestamp = found.timestamp;
                                if version >= 4 {
                                    response.leader_epoch = found.epoch;
                                }
                            }
                        }
                    }
                    response
                })
                .collect();
            ListOffsetsTopicResponse { name: topic.name, partitions, ..Default::default() }
        })
        .collect();
    ListOffsetsResponse { topics, ..Default::default() }
}

/// Every partition refused with `code`.
pub(super) fn error(request: &ListOffsetsRequest, _version: i16, code: ErrorCode) -> ListOffsetsResponse {
    let topics = request
        .topics
        .iter()
        .map(|t| ListOffsetsTopicResponse {
            name: t.name.clone(),
            partitions: t.partitions.iter().map(|p| partition_response(p.partition_index, code)).collect(),
            ..Default::default()
        })
        .collect();
    ListOffsetsResponse { topics, ..Default::default() }
}

/// A partition's answer before anything is found: no offset, no timestamp.
fn partition_response(partition_index: i32, error_code: ErrorCode) -> ListOffsetsPartitionResponse {
    ListOffsetsPartitionResponse { partition_index, error_code, timestamp: -1, offset: -1, ..Default::default() }
}
