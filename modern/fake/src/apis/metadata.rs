//! Metadata: the live nodes, and each topic asked for (all when the list is null) with its
//! id, leaders and replicas; unknown topics are created when the request and the cluster
//! allow it (Kafka's `auto.create.topics.enable`). Kafka's internal topics are listed as Kafka
//! lists them, `is_internal` set, once they exist: `__consumer_offsets` when a group has
//! committed, `__transaction_state` when a transactional producer has run (clients listing
//! every topic, or matching a pattern, meet them and must skip them).

use kwire::messages::metadata_response::{MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
use kwire::messages::{MetadataRequest, MetadataResponse};
use kwire::{BrokerId, ErrorCode, StrBytes, TopicName, Uuid};

use super::Ctx;
use crate::state::{valid_topic_name, State};

pub(super) async fn handle(ctx: &Ctx<'_>, request: MetadataRequest) -> MetadataResponse {
    let version = ctx.version;
    let mut state = ctx.shared.state();
    // Before v4 every request may create topics.
    let may_create = version < 4 || request.allow_auto_topic_creation;
    // In v0 an empty list asks for every topic; from v1 on, null does.
    let every = match &request.topics {
        None => true,
        Some(asked) => version == 0 && asked.is_empty(),
    };
    // Asked for from v8 (the cluster's only until v10), answered as Kafka without an authorizer.
    let (cluster_ops, topic_ops) = (
        (8..=10).contains(&version) && request.include_cluster_authorized_operations,
        version >= 8 && request.include_topic_authorized_operations,
    );
    let mut topics: Vec<MetadataResponseTopic> = match request.topics {
        _ if every => state
            .topics()
            .names()
            .map(|name| topic(&state, name, Uuid::nil()))
            .chain(internal_topics(&state).into_iter().map(|name| internal(&state, name)))
            .collect(),
        None => Vec::new(),
        Some(asked) => asked
            .into_iter()
            .map(|t| {
                let name = match t.name {
                    Some(name) => name.0.to_string(),
                    None => match state.name_of(t.topic_id) {
                        Some(name) => name.to_string(),
                        None => match INTERNAL.iter().find(|n| internal_id(&state, n) == t.topic_id) {
                            Some(name) if internal_topics(&state).contains(name) => name.to_string(),
                            _ => return refused(None, t.topic_id, ErrorCode::UNKNOWN_TOPIC_ID),
                        },
                    },
                };
                if let Some(name) = INTERNAL.iter().find(|n| **n == name) {
                    // Made by the coordinators, never by a Metadata request.
                    return if internal_topics(&state).contains(name) {
                        internal(&state, name)
                    } else {
                        refused(Some(topic_name(name)), t.topic_id, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION)
                    };
                }
                if !valid_topic_name(&name) {
                    return refused(Some(topic_name(&name)), Uuid::nil(), ErrorCode::INVALID_TOPIC_EXCEPTION);
                }
                if may_create {
                    state.auto_create(&name);
                }
                topic(&state, &name, t.topic_id)
            })
            .collect(),
    };
    if topic_ops {
        for t in topics.iter_mut().filter(|t| t.name.is_some()) {
            t.topic_authorized_operations = super::authorized::TOPIC;
        }
    }
    MetadataResponse {
        brokers: state
            .nodes()
            .filter(|(_, n)| n.alive)
            .map(|(id, n)| MetadataResponseBroker {
                node_id: BrokerId(id),
                host: StrBytes::from(n.host.clone()),
                port: n.port,
                rack: None,
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(StrBytes::from(state.cluster_id().to_string())),
        controller_id: BrokerId(state.live_nodes().first().copied().unwrap_or(-1)),
        cluster_authorized_operations: if cluster_ops { super::authorized::CLUSTER } else { i32::MIN },
        topics,
        ..Default::default()
    }
}

/// A topic's entry, or UNKNOWN_TOPIC_OR_PARTITION.
fn topic(state: &State, name: &str, asked_id: Uuid) -> MetadataResponseTopic {
    let Some(topic) = state.topic(name) else {
        return refused(Some(topic_name(name)), asked_id, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
    };
    MetadataResponseTopic {
        name: Some(TopicName(StrBytes::from(name.to_string()))),
        topic_id: topic.id,
        partitions: topic
            .partitions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let replicas: Vec<BrokerId> = p.replicas.iter().map(|r| BrokerId(*r)).collect();
                let offline: Vec<BrokerId> =
                    replicas.iter().copied().filter(|r| !state.node(r.0).is_some_and(|n| n.alive)).collect();
                let isr: Vec<BrokerId> = replicas.iter().copied().filter(|r| !offline.contains(r)).collect();
                MetadataResponsePartition {
                    error_code: if isr.contains(&BrokerId(p.leader)) {
                        ErrorCode::NONE
                    } else {
                        ErrorCode::LEADER_NOT_AVAILABLE
                    },
                    partition_index: i as i32,
                    leader_id: BrokerId(p.leader),
                    leader_epoch: p.leader_epoch,
                    replica_nodes: replicas.into(),
                    isr_nodes: isr.into(),
                    offline_replicas: offline.into(),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    }
}

/// A topic refused with `error_code`.
fn refused(name: Option<TopicName>, id: Uuid, error_code: ErrorCode) -> MetadataResponseTopic {
    MetadataResponseTopic { error_code, name, topic_id: id, ..Default::default() }
}

fn topic_name(name: &str) -> TopicName {
    TopicName(StrBytes::from(name.to_string()))
}

/// Every topic asked for refused with `code`.
pub(super) fn error(request: &MetadataRequest, _version: i16, code: ErrorCode) -> MetadataResponse {
    let topics = request.topics.iter().flatten().map(|t| refused(t.name.clone(), t.topic_id, code)).collect();
    MetadataResponse { topics, ..Default::default() }
}

/// Kafka's internal topics, as Kafka names them.
const INTERNAL: [&str; 2] = ["__consumer_offsets", "__transaction_state"];

/// Their partition count: Kafka's default `offsets.topic.num.partitions` and
/// `transaction.state.log.num.partitions`.
const INTERNAL_PARTITIONS: i32 = 50;

/// The internal topics that exist by now.
fn internal_topics(state: &State) -> Vec<&'static str> {
    let committed = !state.groups().offsets().is_empty();
    let transactions = !state.transactions().by_id.is_empty();
    INTERNAL.into_iter().zip([committed, transactions]).filter(|(_, exists)| *exists).map(|(name, _)| name).collect()
}

/// An internal topic's id: fixed for the cluster (FNV-1a of its id and the name), never nil.
fn internal_id(state: &State, name: &str) -> Uuid {
    let hash = |seed: u64| {
        let mut h = seed;
        for b in state.cluster_id().bytes().chain([b'/']).chain(name.bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        h
    };
    let (high, low) = (hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4));
    Uuid::from_u64_pair(high, low | 1)
}

/// An internal topic's entry: its partitions led by the live nodes in turn.
fn internal(state: &State, name: &str) -> MetadataResponseTopic {
    let live = state.live_nodes();
    MetadataResponseTopic {
        name: Some(TopicName(StrBytes::from(name.to_string()))),
        topic_id: internal_id(state, name),
        is_internal: true,
        partitions: (0..INTERNAL_PARTITIONS)
            .map(|p| {
                let leader = live.get(p as usize % live.len().max(1)).copied().unwrap_or(-1);
                let replicas: Vec<BrokerId> = if leader >= 0 { vec![BrokerId(leader)] } else { Vec::new() };
                MetadataResponsePartition {
                    error_code: if leader >= 0 { ErrorCode::NONE } else { ErrorCode::LEADER_NOT_AVAILABLE },
                    partition_index: p,
                    leader_id: BrokerId(leader),
                    leader_epoch: 0,
                    replica_nodes: replicas.clone().into(),
                    isr_nodes: replicas.into(),
                    ..Default::default()
                }
            })
            .collect(),
        ..Default::default()
    }
}
