//! Three Apache Kafka 4.4 nodes; the leader of a partition replicated three times is killed
//! (SIGKILL) in the middle of a stream of acks=all produces. `Cluster` finds the new leader, and
//! every record acknowledged before or after is there when the partition is read back.

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kwire::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::{CreateTopicsRequest, FetchRequest, MetadataRequest};
use kwire::{ErrorCode, Records};
use kwire_connection::{requests, ClientConfig, Cluster};
use kwire_records::{BatchBuilder, BatchOptions, Compression, RecordsExt};
use kwire_test_support::Kafka;

const TOPIC: &str = "failover";

fn batch(first: usize, n: usize) -> Records {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
    let mut builder = BatchBuilder::new(BatchOptions::new(2, Compression::Zstd)).unwrap();
    for i in first..first + n {
        builder.append(now, None, Some(format!("record-{i}").as_bytes()), &[]).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

async fn leader_of(cluster: &Cluster) -> i32 {
    let client = cluster.any().await.unwrap();
    let request = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic { name: Some(TOPIC.into()), ..Default::default() }]),
        ..Default::default()
    };
    let metadata = client.send(request).await.unwrap();
    metadata.topics[0].partitions[0].leader_id.get()
}

#[tokio::test]
async fn killing_the_leader_loses_nothing_acknowledged() {
    let Some(mut kafka) = Kafka::start_or_skip(3) else { return };
    let mut cluster =
        Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default().request_timeout(Duration::from_secs(10)))
            .await
            .unwrap();
    // A leader is fenced 3 s after its heartbeats stop (test-support's setting): retry for
    // long enough to see the new one.
    cluster.attempts = 30;
    let admin = cluster.any().await.unwrap();
    let created = admin
        .send(CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: TOPIC.into(),
                num_partitions: 1,
                replication_factor: 3,
                configs: vec![CreatableTopicConfig {
                    name: "min.insync.replicas".into(),
                    value: Some("2".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            timeout_ms: 30_000,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(created.topics[0].error_code, ErrorCode::NONE, "{:?}", created.topics[0].error_message);
    drop(admin);

    let (batches, per_batch) = (60, 10);
    let mut acknowledged = BTreeSet::new();
    let mut killed = None;
    for b in 0..batches {
        if b == batches / 2 {
            let leader = leader_of(&cluster).await;
            kafka.kill9(leader).unwrap();
            killed = Some(leader);
        }
        let produced = cluster.produce(TOPIC, 0, batch(b * per_batch, per_batch), -1, Duration::from_secs(10)).await;
        let answer = produced.unwrap_or_else(|e| panic!("batch {b}: {e}\n{}", kafka.logs()));
        assert!(answer.base_offset >= 0);
        acknowledged.extend((b * per_batch..(b + 1) * per_batch).map(|i| format!("record-{i}")));
    }
    let killed = killed.unwrap();
    let new_leader = leader_of(&cluster).await;
    assert_ne!(new_leader, killed, "a new leader was elected");

    // Read everything back from the new leader (a retried batch may be there twice: these
    // batches are not idempotent; what matters is that nothing acknowledged is missing).
    let client = cluster.leader(TOPIC, 0).await.unwrap();
    let topic_id = cluster.topic_id(TOPIC).await.unwrap();
    let mut seen = BTreeSet::new();
    let mut offset = 0;
    loop {
        let request = FetchRequest { max_wait_ms: 100, ..requests::fetch(TOPIC, topic_id, 0, offset) };
        let response = client.send(request).await.unwrap();
        let partition = &response.responses[0].partitions[0];
        assert_eq!(partition.error_code, ErrorCode::NONE);
        let mut progressed = false;
        for record in partition.records.clone().unwrap_or_default().records() {
            let record = record.unwrap();
            if record.offset >= offset {
                seen.insert(String::from_utf8(record.value.unwrap().to_vec()).unwrap());
                offset = record.offset + 1;
                progressed = true;
            }
        }
        if offset >= partition.high_watermark || !progressed {
            break;
        }
    }
    let missing: Vec<&String> = acknowledged.difference(&seen).collect();
    assert!(
        missing.is_empty(),
        "{} acknowledged records missing, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert_eq!(acknowledged.len(), batches * per_batch);
}
