//! The bytes of a classic consumer group's JoinGroup metadata and SyncGroup assignment, as
//! Kafka's `ConsumerProtocol` writes them: a version (int16), then `ConsumerProtocolSubscription`
//! or `ConsumerProtocolAssignment` at that version. A newer version than this code knows is
//! read as the newest it knows, as Kafka does, so newer members can join.

use std::collections::BTreeMap;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kwire::messages::consumer_protocol_assignment::TopicPartition as AssignedTopic;
use kwire::messages::consumer_protocol_subscription::TopicPartition as OwnedTopic;
use kwire::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kwire::{Decode, Encode, StrBytes, TopicName};

use crate::consumer::record::TopicPartition;

/// The newest versions this code writes (those Kafka 3.5+ writes).
pub const SUBSCRIPTION_VERSION: i16 = 3;
pub const ASSIGNMENT_VERSION: i16 = 3;

/// A member's subscription, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subscription {
    pub topics: Vec<String>,
    pub user_data: Option<Bytes>,
    pub owned: Vec<TopicPartition>,
    /// The generation the owned partitions are from (v2+), -1 when unknown.
    pub generation: i32,
    pub rack: Option<String>,
}

/// Groups partitions by topic, in order.
fn by_topic(partitions: &[TopicPartition]) -> BTreeMap<&str, Vec<i32>> {
    let mut topics: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        topics.entry(&tp.topic).or_default().push(tp.partition);
    }
    for partitions in topics.values_mut() {
        partitions.sort_unstable();
    }
    topics
}

/// The JoinGroup metadata of `subscription`, at the newest version.
pub fn encode_subscription(subscription: &Subscription) -> Bytes {
    let message = ConsumerProtocolSubscription {
        topics: subscription.topics.iter().map(|t| StrBytes::from(t.clone())).collect(),
        user_data: subscription.user_data.clone(),
        owned_partitions: by_topic(&subscription.owned)
            .into_iter()
            .map(|(topic, partitions)| OwnedTopic { topic: TopicName::from(topic), partitions: partitions.into() })
            .collect(),
        generation_id: subscription.generation,
        rack_id: subscription.rack.as_ref().map(|r| StrBytes::from(r.clone())),
    };
    versioned(SUBSCRIPTION_VERSION, &message)
}

/// A JoinGroup member's metadata, as a classic consumer group's members write it.
pub fn decode_subscription(bytes: &Bytes) -> Result<Subscription, String> {
    let (version, mut body) = version(bytes)?;
    let message = ConsumerProtocolSubscription::decode(&mut body, version.min(SUBSCRIPTION_VERSION))
        .map_err(|e| format!("ConsumerProtocolSubscription v{version}: {e}"))?;
    Ok(Subscription {
        topics: message.topics.iter().map(|t| t.as_str().to_owned()).collect(),
        user_data: message.user_data,
        owned: message
            .owned_partitions
            .iter()
            .flat_map(|t| t.partitions.iter().map(move |p| TopicPartition::new(t.topic.as_str(), p)))
            .collect(),
        generation: if version >= 2 { message.generation_id } else { -1 },
        rack: message.rack_id.map(|r| r.as_str().to_owned()).filter(|r| !r.is_empty()),
    })
}

/// The SyncGroup assignment of `partitions`, at the newest version.
pub fn encode_assignment(partitions: &[TopicPartition], user_data: Option<Bytes>) -> Bytes {
    let message = ConsumerProtocolAssignment {
        assigned_partitions: by_topic(partitions)
            .into_iter()
            .map(|(topic, partitions)| AssignedTopic { topic: TopicName::from(topic), partitions: partitions.into() })
            .collect(),
        user_data,
    };
    versioned(ASSIGNMENT_VERSION, &message)
}

/// The partitions of a SyncGroup assignment. An empty buffer is an empty assignment (what a leader
/// sends a member it gives nothing, in some clients).
pub fn decode_assignment(bytes: &Bytes) -> Result<Vec<TopicPartition>, String> {
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    let (version, mut body) = version(bytes)?;
    let message = ConsumerProtocolAssignment::decode(&mut body, version.min(ASSIGNMENT_VERSION))
        .map_err(|e| format!("ConsumerProtocolAssignment v{version}: {e}"))?;
    Ok(message
        .assigned_partitions
        .iter()
        .flat_map(|t| t.partitions.iter().map(move |p| TopicPartition::new(t.topic.as_str(), p)))
        .collect())
}

fn versioned(version: i16, message: &impl Encode) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(version);
    // Encoding our own well-formed message at a version it has cannot fail.
    if let Err(e) = message.encode(&mut buf, version) {
        tracing::error!(error = %e, "encoding the consumer protocol failed");
    }
    buf.freeze()
}

fn version(bytes: &Bytes) -> Result<(i16, Bytes), String> {
    let mut body = bytes.clone();
    if body.remaining() < 2 {
        return Err(format!("{} bytes: too short for the consumer protocol's version", bytes.len()));
    }
    let version = body.get_i16();
    if version < 0 {
        return Err(format!("consumer protocol version {version}"));
    }
    Ok((version, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscription_round_trips_and_matches_kafkas_bytes() {
        let subscription = Subscription {
            topics: vec!["t".into()],
            user_data: Some(Bytes::from_static(&[0, 0, 0, 5])),
            owned: vec![TopicPartition::new("t", 1), TopicPartition::new("t", 0)],
            generation: 5,
            rack: None,
        };
        let bytes = encode_subscription(&subscription);
        // Kafka 3.5+: version 3; topics [t]; user data; owned [t: 0, 1]; generation 5; no rack.
        let kafka: &[u8] = &[
            0, 3, // version
            0, 0, 0, 1, 0, 1, b't', // topics
            0, 0, 0, 4, 0, 0, 0, 5, // user data
            0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, // owned partitions
            0, 0, 0, 5, // generation
            0xff, 0xff, // rack: null
        ];
        assert_eq!(&bytes[..], kafka);
        let back = decode_subscription(&bytes).unwrap();
        assert_eq!(back.owned, [TopicPartition::new("t", 0), TopicPartition::new("t", 1)]);
        assert_eq!((back.generation, back.topics), (5, vec!["t".to_string()]));
    }

    #[test]
    fn a_newer_version_is_read_as_the_newest_known_and_garbage_is_an_error() {
        let mut bytes = encode_subscription(&Subscription { topics: vec!["a".into()], ..Default::default() }).to_vec();
        bytes[1] = 9;
        assert_eq!(decode_subscription(&Bytes::from(bytes)).unwrap().topics, ["a"]);
        assert!(decode_subscription(&Bytes::from_static(&[0])).is_err());
        assert!(decode_subscription(&Bytes::from_static(&[0, 1, 0, 0, 0, 9])).is_err());
        let assignment = encode_assignment(&[TopicPartition::new("a", 2)], None);
        assert_eq!(decode_assignment(&assignment).unwrap(), [TopicPartition::new("a", 2)]);
        assert!(decode_assignment(&Bytes::new()).unwrap().is_empty());
    }
}
