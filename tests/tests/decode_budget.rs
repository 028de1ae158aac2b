//! The memory budget of a decode (a small multiple of the input) refuses frames built to
//! expand, and never the large messages real clusters send: each of these decodes, and its
//! peak allocation is printed beside its size. They are why the budget is 8× and not less:
//! a Produce response v3 of many partitions takes 5.1× its size once decoded, a Metadata
//! response of a cluster with one replica per partition 4.6×.

use bytes::{Bytes, BytesMut};
use kwire::messages::metadata_response::{
    MetadataResponse, MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use kwire::messages::offset_commit_request::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kwire::messages::produce_response::{PartitionProduceResponse, ProduceResponse, TopicProduceResponse};
use kwire::{BrokerId, Message, StrBytes, TopicName, Uuid};
use kwire_test_support::alloc::{peak_during, Counting};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Held by each test throughout: the allocator counts every thread.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Encodes `value`, decodes it back from shared bytes, and reports the peak allocation.
fn decodes<T: Message>(what: &str, value: &T, version: i16) {
    let mut buf = BytesMut::new();
    value.encode(&mut buf, version).expect("encodes");
    let bytes: Bytes = buf.freeze();
    let len = bytes.len();
    let (decoded, peak) = peak_during(|| T::decode(&mut bytes.clone(), version));
    println!("{what}: {len} bytes, peak {peak} bytes ({:.2}× the input)", peak as f64 / len as f64);
    let decoded = decoded.unwrap_or_else(|e| panic!("{what} must decode: {e}"));
    let mut again = BytesMut::new();
    decoded.encode(&mut again, version).expect("re-encodes");
    assert!(again[..] == bytes[..], "{what} must decode to what was encoded");
}

fn metadata(brokers: i32, topics: usize, partitions: i32, replicas: i32) -> MetadataResponse {
    MetadataResponse {
        brokers: (0..brokers)
            .map(|id| MetadataResponseBroker {
                node_id: BrokerId(id),
                host: StrBytes::from(format!("broker-{id}.kafka.svc")),
                port: 9092,
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(StrBytes::from_static_str("MkU3OEVBNTcwNTJENDM2Qg")),
        topics: (0..topics)
            .map(|t| MetadataResponseTopic {
                name: Some(TopicName(StrBytes::from(format!("orders.events.v{t}")))),
                topic_id: Uuid::from_u128(t as u128 + 1),
                partitions: (0..partitions)
                    .map(|p| {
                        let nodes: Vec<BrokerId> = (0..replicas).map(|r| BrokerId((p + r) % brokers)).collect();
                        MetadataResponsePartition {
                            partition_index: p,
                            leader_id: nodes[0],
                            leader_epoch: 7,
                            replica_nodes: nodes.iter().copied().collect(),
                            isr_nodes: nodes.iter().copied().collect(),
                            ..Default::default()
                        }
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

#[test]
fn metadata_of_large_clusters_decodes() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    decodes("Metadata v12, one broker, 20,000 partitions", &metadata(1, 100, 200, 1), 12);
    decodes("Metadata v12, three brokers, RF 3, 20,000 partitions", &metadata(3, 100, 200, 3), 12);
    decodes("Metadata v9, one broker, 20,000 partitions", &metadata(1, 100, 200, 1), 9);
    decodes("Metadata v1, one broker, 20,000 partitions", &metadata(1, 100, 200, 1), 1);
}

#[test]
fn offset_commits_and_produce_responses_of_many_partitions_decode() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let commit = OffsetCommitRequest {
        group_id: StrBytes::from_static_str("payments").into(),
        generation_id_or_member_epoch: 3,
        member_id: StrBytes::from_static_str("consumer-1-5f0c"),
        topics: (0..50)
            .map(|t| OffsetCommitRequestTopic {
                name: TopicName(StrBytes::from(format!("orders.events.v{t}"))),
                partitions: (0..400)
                    .map(|p| OffsetCommitRequestPartition {
                        partition_index: p,
                        committed_offset: 1_000_000 + i64::from(p),
                        committed_metadata: Some(StrBytes::from_static_str("")),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    decodes("OffsetCommit v9, 20,000 partitions", &commit, 9);
    decodes("OffsetCommit v2, 20,000 partitions", &commit, 2);
    let produced = ProduceResponse {
        responses: (0..50)
            .map(|t| TopicProduceResponse {
                name: TopicName(StrBytes::from(format!("orders.events.v{t}"))),
                partition_responses: (0..400)
                    .map(|p| PartitionProduceResponse { index: p, base_offset: 42, ..Default::default() })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    decodes("Produce response v9, 20,000 partitions", &produced, 9);
    decodes("Produce response v3, 20,000 partitions", &produced, 3);
}
