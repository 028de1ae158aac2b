//! OffsetFetch: a group's committed offsets, for the partitions asked or all of them; one
//! group (v0–7) or several (v8+), topics by id from v10. From v9 a KIP-848 group's member
//! says who asks, and only its members at their epoch (or admins, without either) may.

use kwire::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions, OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
};
use kwire::messages::{OffsetFetchRequest, OffsetFetchResponse};
use kwire::{ErrorCode, GroupId, StrBytes, TopicName, Uuid};

use super::Ctx;
use crate::groups::Group;
use crate::state::State;

/// OffsetFetch v8 asks for several groups.
const BATCHED_FROM: i16 = 8;
/// OffsetFetch v10 names topics by id.
const TOPIC_IDS_FROM: i16 = 10;

/// One partition's answer: (offset, leader epoch, metadata, error).
type Found = (i64, i32, Option<StrBytes>, ErrorCode);

/// Partitions asked for: topic name ("" for an unknown id), id, partition indexes.
type Asked = Vec<(String, Uuid, Vec<i32>)>;
/// Partitions answered: topic name, id, and per partition what was found.
type Answered = Vec<(String, Uuid, Vec<(i32, Found)>)>;

/// Per topic (name, id), per partition: what `group` committed. `asked` None: every partition
/// with a commit. `require_stable` (v7+): a partition with an offset in an open transaction
/// is UNSTABLE_OFFSET_COMMIT, for the consumer to ask again once it ended.
fn fetch(state: &State, group: &str, asked: Option<Asked>, require_stable: bool) -> Answered {
    let offsets = state.groups().offsets();
    let unstable = |topic: &str, p: i32| require_stable && offsets.is_pending(group, topic, p);
    let found = |topic: &str, p: i32| -> Found {
        if unstable(topic, p) {
            return (-1, -1, Some(StrBytes::default()), ErrorCode::UNSTABLE_OFFSET_COMMIT);
        }
        match offsets.committed(group, topic, p) {
            Some(c) => (
                c.offset,
                c.leader_epoch,
                Some(StrBytes::from(c.metadata.clone().unwrap_or_default())),
                ErrorCode::NONE,
            ),
            None => (-1, -1, Some(StrBytes::default()), ErrorCode::NONE),
        }
    };
    match asked {
        Some(asked) => asked
            .into_iter()
            .map(|(name, id, partitions)| {
                // An id no topic has (v10+) resolves to no name.
                let rows = partitions
                    .into_iter()
                    .map(|p| {
                        if name.is_empty() {
                            (p, (-1, -1, None, ErrorCode::UNKNOWN_TOPIC_ID))
                        } else {
                            (p, found(&name, p))
                        }
                    })
                    .collect();
                (name, id, rows)
            })
            .collect(),
        None => {
            let mut by_topic: std::collections::BTreeMap<String, Vec<(i32, Found)>> = Default::default();
            for ((topic, p), _) in offsets.of_group(group) {
                by_topic.entry(topic.clone()).or_default().push((*p, found(topic, *p)));
            }
            by_topic
                .into_iter()
                .map(|(name, rows)| {
                    let id = state.topic(&name).map_or(Uuid::nil(), |t| t.id);
                    (name, id, rows)
                })
                .collect()
        }
    }
}

pub(super) async fn handle(ctx: &Ctx<'_>, request: OffsetFetchRequest) -> OffsetFetchResponse {
    let state = ctx.shared.state();
    if ctx.version < BATCHED_FROM {
        let group = request.group_id.to_string();
        if let Err(error_code) = state.coordinates(ctx.node, &group) {
            return OffsetFetchResponse { error_code, ..Default::default() };
        }
        let asked = request.topics.map(|ts| {
            ts.iter().map(|t| (t.name.to_string(), Uuid::nil(), t.partition_indexes.iter().collect())).collect()
        });
        let topics = fetch(&state, &group, asked, request.require_stable)
            .into_iter()
            .map(|(name, _, rows)| OffsetFetchResponseTopic {
                name: TopicName(StrBytes::from(name)),
                partitions: rows
                    .into_iter()
                    .map(|(p, (offset, epoch, metadata, error_code))| OffsetFetchResponsePartition {
                        partition_index: p,
                        committed_offset: offset,
                        committed_leader_epoch: epoch,
                        metadata,
                        error_code,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect();
        return OffsetFetchResponse { topics, ..Default::default() };
    }
    let groups = request
        .groups
        .iter()
        .map(|g| {
            let group = g.group_id.to_string();
            let member_id = g.member_id.as_deref();
            let allowed = state.coordinates(ctx.node, &group).and_then(|()| {
                // Kafka's `ConsumerGroup.validateOffsetFetch`; a classic group checks neither, and
                // a share group has no offsets of this kind to fetch.
                match state.group(&group) {
                    Some(Group::Consumer(consumer)) => consumer.validate_offset_fetch(member_id, g.member_epoch),
                    _ => Ok(()),
                }
            });
            if let Err(error_code) = allowed {
                return group_refused(g.group_id.clone(), error_code);
            }
            let asked = g.topics.as_ref().map(|ts| {
                ts.iter()
                    .map(|t| {
                        let name = if ctx.version >= TOPIC_IDS_FROM {
                            state.name_of(t.topic_id).unwrap_or_default().to_string()
                        } else {
                            t.name.to_string()
                        };
                        (name, t.topic_id, t.partition_indexes.iter().collect())
                    })
                    .collect()
            });
            let topics = fetch(&state, &group, asked, request.require_stable)
                .into_iter()
                .map(|(name, id, rows)| {
                    let mut topic = OffsetFetchResponseTopics {
                        partitions: rows
                            .into_iter()
                            .map(|(p, (offset, epoch, metadata, error_code))| OffsetFetchResponsePartitions {
                                partition_index: p,
                                committed_offset: offset,
                                committed_leader_epoch: epoch,
                                metadata,
                                error_code,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    };
                    if ctx.version >= TOPIC_IDS_FROM {
                        topic.topic_id = id;
                    } else {
                        topic.name = TopicName(StrBytes::from(name));
                    }
                    topic
                })
                .collect();
            OffsetFetchResponseGroup { group_id: g.group_id.clone(), topics, ..Default::default() }
        })
        .collect();
    OffsetFetchResponse { groups, ..Default::default() }
}

/// The request refused with `code`: the whole of it before v8, each group from v8.
pub(super) fn error(request: &OffsetFetchRequest, version: i16, code: ErrorCode) -> OffsetFetchResponse {
    if version < BATCHED_FROM {
        return OffsetFetchResponse { error_code: code, ..Default::default() };
    }
    let groups = request.groups.iter().map(|g| group_refused(g.group_id.clone(), code)).collect();
    OffsetFetchResponse { groups, ..Default::default() }
}

fn group_refused(group_id: GroupId, error_code: ErrorCode) -> OffsetFetchResponseGroup {
    OffsetFetchResponseGroup { group_id, error_code, ..Default::default() }
}
