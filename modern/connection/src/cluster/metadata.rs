//! What the cluster's Metadata answers said, as one immutable snapshot that producers,
//! consumers and tools read without a lock held across an await: the brokers with their racks,
//! and per topic its id, whether it is internal, and per partition its leader, leader epoch
//! (KIP-320), replicas, in-sync and offline replicas. [`Cluster`](super::Cluster) routes by it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use kwire::messages::MetadataResponse;
use kwire::{ErrorCode, Uuid};

/// The cluster as the last Metadata answers described it.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// The cluster's id, when the broker names one.
    pub cluster_id: Option<String>,
    /// The active controller, or -1.
    pub controller_id: i32,
    /// Every broker by id.
    pub brokers: BTreeMap<i32, BrokerMetadata>,
    /// The topics asked about so far (all of them after [`Cluster::refresh_all`](super::Cluster::refresh_all)).
    pub topics: HashMap<String, Arc<TopicMetadata>>,
}

/// One broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerMetadata {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

impl BrokerMetadata {
    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// One topic, as Metadata answered for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicMetadata {
    pub name: String,
    /// Nil for a broker older than topic ids.
    pub id: Uuid,
    /// `__consumer_offsets`, `__transaction_state` and the like: never matched by a pattern.
    pub is_internal: bool,
    /// The topic's error (UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED, ...).
    pub error: ErrorCode,
    /// Its partitions, by index (`partitions[i].partition == i`).
    pub partitions: Vec<PartitionMetadata>,
}

impl TopicMetadata {
    /// The partition with index `partition`.
    pub fn partition(&self, partition: i32) -> Option<&PartitionMetadata> {
        usize::try_from(partition).ok().and_then(|i| self.partitions.get(i)).filter(|p| p.partition == partition)
    }
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMetadata {
    pub partition: i32,
    /// The leader's broker id, or -1 while there is none.
    pub leader: i32,
    /// The leader's epoch (KIP-320), or -1 when the broker does not say.
    pub leader_epoch: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub offline: Vec<i32>,
    /// LEADER_NOT_AVAILABLE while a leader is being elected, and the like.
    pub error: ErrorCode,
}

impl Metadata {
    /// This snapshot with what `response` says: its brokers and controller replace the old
    /// ones; its topics replace theirs, or, when `all_topics`, every topic.
    pub(crate) fn merged(&self, response: &MetadataResponse, all_topics: bool) -> Metadata {
        let brokers = response
            .brokers
            .iter()
            .map(|b| {
                let id = b.node_id.get();
                let rack = b.rack.as_ref().map(|r| r.to_string());
                (id, BrokerMetadata { id, host: b.host.to_string(), port: b.port, rack })
            })
            .collect();
        let mut topics = if all_topics { HashMap::new() } else { self.topics.clone() };
        for topic in &response.topics {
            let Some(name) = &topic.name else { continue };
            let mut partitions: Vec<PartitionMetadata> = topic
                .partitions
                .iter()
                .map(|p| PartitionMetadata {
                    partition: p.partition_index,
                    leader: p.leader_id.get(),
                    leader_epoch: p.leader_epoch,
                    replicas: p.replica_nodes.iter().map(|b| b.get()).collect(),
                    isr: p.isr_nodes.iter().map(|b| b.get()).collect(),
                    offline: p.offline_replicas.iter().map(|b| b.get()).collect(),
                    error: p.error_code,
                })
                .collect();
            partitions.sort_by_key(|p| p.partition);
            let metadata = TopicMetadata {
                name: name.to_string(),
                id: topic.topic_id,
                is_internal: topic.is_internal,
                error: topic.error_code,
                partitions,
            };
            topics.insert(name.to_string(), Arc::new(metadata));
        }
        Metadata {
            cluster_id: response.cluster_id.as_ref().map(|c| c.to_string()),
            controller_id: response.controller_id.get(),
            brokers,
            topics,
        }
    }

    /// The leader of `topic`'s `partition`, if the snapshot knows one.
    pub fn leader(&self, topic: &str, partition: i32) -> Option<i32> {
        let p = self.topics.get(topic)?.partition(partition)?;
        (p.error == ErrorCode::NONE && p.leader >= 0).then_some(p.leader)
    }

    /// `topic`'s id, if known and not nil.
    pub fn topic_id(&self, topic: &str) -> Option<Uuid> {
        self.topics.get(topic).filter(|t| t.error == ErrorCode::NONE && !t.id.is_nil()).map(|t| t.id)
    }
}

#[cfg(test)]
mod tests {
    use kwire::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kwire::{BrokerId, StrBytes, TopicName};

    use super::*;

    fn topic(name: &'static str, leaders: &[i32]) -> MetadataResponseTopic {
        MetadataResponseTopic {
            name: Some(TopicName(StrBytes::from_static_str(name))),
            topic_id: Uuid::from_u128(leaders.len() as u128 + 1),
            // Kafka lists partitions in any order.
            partitions: leaders
                .iter()
                .enumerate()
                .rev()
                .map(|(i, &leader)| MetadataResponsePartition {
                    partition_index: i as i32,
                    leader_id: BrokerId(leader),
                    leader_epoch: 7,
                    replica_nodes: [BrokerId(leader)].into_iter().collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_refresh_replaces_the_topics_it_names_and_keeps_the_others() {
        let broker = MetadataResponseBroker {
            node_id: BrokerId(1),
            host: StrBytes::from_static_str("h"),
            port: 9092,
            rack: Some(StrBytes::from_static_str("r1")),
            ..Default::default()
        };
        let first = MetadataResponse {
            brokers: vec![broker.clone()],
            topics: vec![topic("a", &[1, 1]), topic("b", &[1])],
            ..Default::default()
        };
        let snapshot = Metadata::default().merged(&first, false);
        assert_eq!(snapshot.leader("a", 1), Some(1));
        assert_eq!(snapshot.topics["a"].partition(1).map(|p| (p.leader_epoch, p.replicas.clone())), Some((7, vec![1])));
        assert_eq!(snapshot.brokers[&1].rack.as_deref(), Some("r1"));
        let partial =
            MetadataResponse { brokers: vec![broker.clone()], topics: vec![topic("a", &[-1])], ..Default::default() };
        let snapshot = snapshot.merged(&partial, false);
        assert_eq!((snapshot.leader("a", 0), snapshot.topics["a"].partitions.len()), (None, 1));
        assert_eq!(snapshot.leader("b", 0), Some(1), "b was not asked about and stays");
        let all = MetadataResponse { brokers: vec![broker], topics: vec![topic("c", &[1])], ..Default::default() };
        let snapshot = snapshot.merged(&all, true);
        assert_eq!(snapshot.topics.keys().collect::<Vec<_>>(), ["c"]);
        assert_eq!(snapshot.topic_id("c"), Some(Uuid::from_u128(2)));
    }
}
