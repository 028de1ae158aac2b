//! OffsetForLeaderEpoch: where a leader epoch ended, for consumers checking for truncation
//! after a leader change (KIP-320).

use kwire::messages::offset_for_leader_epoch_response::{EpochEndOffset, OffsetForLeaderTopicResult};
use kwire::messages::{OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse};

use super::{check_leader_epoch, Ctx};

pub(super) async fn handle(ctx: &Ctx<'_>, request: OffsetForLeaderEpochRequest) -> OffsetForLeaderEpochResponse {
    let mut state = ctx.shared.state();
    let topics = request
        .topics
        .iter()
        .map(|topic| {
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    let mut result = EpochEndOffset {
                        partition: p.partition,
                        leader_epoch: -1,
                        end_offset: -1,
                        ..Default::default()
                    };
                    match state.led_partition(&topic.topic, p.partition, ctx.node) {
                        Err(code) => result.error_code = code,
                        Ok(partition) => match check_leader_epoch(p.current_leader_epoch, partition.leader_epoch) {
                            Err(code) => result.error_code = code,
                            Ok(()) => {
                                if let Some((epoch, end)) =
                                    partition.log.end_of_epoch(p.leader_epoch, partition.leader_epoch)
                                {
                                    (result.leader_epoch, result.end_offset) = (epoch, end);
                                }
                            }
                        },
                    }
                    result
                })
                .collect();
            OffsetForLeaderTopicResult { topic: topic.topic.clone(), partitions, ..Default::default() }
        })
        .collect();
    OffsetForLeaderEpochResponse { topics, ..Default::default() }
}
