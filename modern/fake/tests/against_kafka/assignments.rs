//! Replicas assigned by the client, in CreateTopics and CreatePartitions, driven by our own
//! client against a one-node fake and a one-node Apache Kafka 4.4: accepted assignments and
//! every refusal Kafka's controller checks for (counts not left to the assignment, unknown or
//! repeated brokers, empty lists, partitions assigned twice or with gaps, uneven replica
//! counts, too few assignments), each answer's error code and message, and the partitions the
//! accepted ones made, must be the same on both.

use kwire::messages::create_partitions_request::{CreatePartitionsAssignment, CreatePartitionsTopic};
use kwire::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kwire::messages::{CreatePartitionsRequest, CreateTopicsRequest, MetadataRequest};
use std::time::{Duration, Instant};

use kwire::{BrokerId, ErrorCode, StrBytes, TopicName};
use kwire_connection::{Client, ClientConfig};

use super::support;

/// A topic to create: its name suffix, partition count and replication factor, and the
/// assignments as (partition, brokers); `B` stands for the one broker's id.
type Case = (&'static str, i32, i16, &'static [(i32, &'static [i32])]);

const B: i32 = i32::MIN;
const UNKNOWN: i32 = 99;

const TOPICS: [Case; 9] = [
    ("accepted", -1, -1, &[(0, &[B]), (1, &[B])]),
    ("counts-set", 2, -1, &[(0, &[B]), (1, &[B])]),
    ("factor-set", -1, 1, &[(0, &[B])]),
    ("unknown-broker", -1, -1, &[(0, &[UNKNOWN])]),
    ("repeated-broker", -1, -1, &[(0, &[B, B])]),
    ("empty", -1, -1, &[(0, &[])]),
    ("twice", -1, -1, &[(0, &[B]), (0, &[B])]),
    ("gap", -1, -1, &[(0, &[B]), (2, &[B])]),
    ("uneven", -1, -1, &[(0, &[B]), (1, &[B, UNKNOWN])]),
];

/// Growing "accepted" (2 partitions): the new count and the assignments of the new ones.
const GROWTHS: [(i32, &[&[i32]]); 4] = [(3, &[&[B]]), (5, &[&[B]]), (5, &[&[UNKNOWN], &[B]]), (5, &[&[B], &[B]])];

fn ids(ids: &[i32], broker: i32) -> Vec<BrokerId> {
    ids.iter().map(|&id| BrokerId(if id == B { broker } else { id })).collect()
}

fn name(suffix: &str) -> TopicName {
    TopicName(StrBytes::from(format!("assigned-{suffix}")))
}

/// Every answer as (what, error, message), then each topic's partitions as (partition,
/// replicas, leader), with the broker's id written as "B".
async fn answers(bootstrap: &str) -> Vec<String> {
    let client = Client::connect(bootstrap, ClientConfig::default()).await.unwrap();
    let metadata = client.send(MetadataRequest::default()).await.unwrap();
    let broker = metadata.brokers[0].node_id.0;
    // The broker's id as "B", where a message or a replica list names it.
    let id = |n: i32| if n == broker { "B".to_string() } else { n.to_string() };
    let message = |m: &Option<StrBytes>| m.as_ref().map(|m| m.replace(&format!("broker {broker} "), "broker B "));
    let mut out = Vec::new();
    for (suffix, partitions, factor, assignments) in TOPICS {
        let topic = CreatableTopic {
            name: name(suffix),
            num_partitions: partitions,
            replication_factor: factor,
            assignments: assignments
                .iter()
                .map(|(p, brokers)| CreatableReplicaAssignment {
                    partition_index: *p,
                    broker_ids: ids(brokers, broker).into(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        let request = CreateTopicsRequest { topics: vec![topic], timeout_ms: 10_000, ..Default::default() };
        let r = &client.send(request).await.unwrap().topics[0];
        out.push(format!(
            "create {suffix}: {} {:?} partitions {} factor {}",
            r.error_code,
            message(&r.error_message),
            r.num_partitions,
            r.replication_factor
        ));
    }
    // The partitions "accepted" has once grown: 2 as created, then each growth accepted.
    let mut grown = 2;
    for (count, assignments) in GROWTHS {
        let topic = CreatePartitionsTopic {
            name: name("accepted"),
            count,
            assignments: Some(
                assignments
                    .iter()
                    .map(|brokers| CreatePartitionsAssignment {
                        broker_ids: ids(brokers, broker).into(),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        };
        let request = CreatePartitionsRequest { topics: vec![topic], timeout_ms: 10_000, ..Default::default() };
        let r = &client.send(request).await.unwrap().results[0];
        out.push(format!("grow to {count}: {} {:?}", r.error_code, message(&r.error_message)));
        if r.error_code == ErrorCode::NONE {
            grown = count;
        }
    }
    // Kafka answers CreatePartitions before its broker's metadata has the new partitions:
    // Metadata is asked again (for up to 30 s) until it names as many as the topic has.
    let deadline = Instant::now() + Duration::from_secs(30);
    let metadata = loop {
        let metadata = client.send(MetadataRequest { topics: None, ..Default::default() }).await.unwrap();
        let accepted = metadata.topics.iter().find(|t| t.name.as_ref() == Some(&name("accepted")));
        if accepted.is_some_and(|t| t.partitions.len() == grown as usize) || Instant::now() > deadline {
            break metadata;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for topic in metadata.topics.iter().filter(|t| t.name.as_ref().is_some_and(|n| n.starts_with("assigned-"))) {
        for p in &topic.partitions {
            let replicas: Vec<String> = p.replica_nodes.iter().map(|b| id(b.0)).collect();
            out.push(format!(
                "{:?} {}: replicas {replicas:?} leader {}",
                topic.name,
                p.partition_index,
                id(p.leader_id.0)
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn assigned_replicas_are_checked_and_placed_as_kafka_does() {
    let _alone = support::one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = support::fake(&["--nodes", "1"]);
    let on_fake = runtime.block_on(answers(&fake.bootstrap));
    for line in &on_fake {
        println!("fake:  {line}");
    }
    assert!(on_fake.iter().any(|l| l.starts_with("create accepted: NONE")), "{on_fake:?}");
    let made = on_fake.iter().filter(|l| l.contains("assigned-accepted")).count();
    assert_eq!(made, 5, "2 created, 1 then 2 added: {on_fake:?}");
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = runtime.block_on(answers(&kafka.bootstrap()));
    for line in &on_kafka {
        println!("kafka: {line}");
    }
    assert_eq!(on_fake, on_kafka, "the same answers and partitions on both");
}
