//! DeleteRecords: moves a partition's log start offset forward (-1: to its end).

use kwire::messages::delete_records_response::{DeleteRecordsPartitionResult, DeleteRecordsTopicResult};
use kwire::messages::{DeleteRecordsRequest, DeleteRecordsResponse};
use kwire::ErrorCode;

use super::Ctx;

pub(super) async fn handle(ctx: &Ctx<'_>, request: DeleteRecordsRequest) -> DeleteRecordsResponse {
    let mut state = ctx.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let mut result = DeleteRecordsPartitionResult {
                        partition_index: p.partition_index,
                        low_watermark: -1,
                        ..Default::default()
                    };
                    match state.led_partition(&topic.name, p.partition_index, ctx.node) {
                        Err(code) => result.error_code = code,
                        Ok(partition) => {
                            let end = partition.log.end_offset();
                            let to = if p.offset == -1 { end } else { p.offset };
                            if to < 0 || to > end {
                                result.error_code = ErrorCode::OFFSET_OUT_OF_RANGE;
                            } else {
                                partition.log.delete_before(to);
                                partition.txns.delete_before(partition.log.start_offset());
                                result.low_watermark = partition.log.start_offset();
                            }
                        }
                    }
                    result
                })
                .collect();
            DeleteRecordsTopicResult { name: topic.name.clone(), partitions, ..Default::default() }
        })
        .collect();
    DeleteRecordsResponse { topics, ..Default::default() }
}
