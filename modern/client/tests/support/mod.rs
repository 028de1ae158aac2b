//! What the producer's test binaries share: reading a partition back from the in-process
//! cluster's log, and the checks every produce test makes (nothing acknowledged lost, nothing
//! written twice, each partition in the order sent).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};

use bytes::Bytes;
use kwire::Records;
use kwire_client::producer::RecordMetadata;
use kwire_fake::FakeCluster;
use kwire_records::{Batch, RecordsExt};

/// A record as the log holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub offset: i64,
    pub timestamp: i64,
    pub key: Option<Bytes>,
    pub value: Option<Bytes>,
    pub headers: Vec<(Bytes, Option<Bytes>)>,
    pub producer_id: i64,
    pub producer_epoch: i16,
}

/// Every data record of `topic`'s `partition` in the fake's log (control batches skipped).
pub fn read_back(fake: &FakeCluster, topic: &str, partition: i32) -> Vec<Stored> {
    let mut out = Vec::new();
    for stored in fake.batches(topic, partition).unwrap_or_default() {
        let records = Records::from_bytes(stored.bytes);
        for batch in records.batches() {
            let Ok(Batch::V2(batch)) = batch else { panic!("a v2 batch") };
            let header = *batch.header();
            if header.attributes.is_control() {
                continue;
            }
            let one = Records::from_bytes(batch.as_bytes().clone());
            for record in one.records() {
                let r = record.expect("a readable record");
                out.push(Stored {
                    offset: r.offset,
                    timestamp: r.timestamp,
                    key: r.key,
                    value: r.value,
                    headers: r.headers.into_iter().map(|h| (h.key, h.value)).collect(),
                    producer_id: header.producer_id,
                    producer_epoch: header.producer_epoch,
                });
            }
        }
    }
    out
}

/// Checks that every acknowledged value is in the log exactly once, at the offset its
/// acknowledgement named (when known), and that each partition holds its values in the order
/// they were sent. `sent` is (value, metadata) in sending order.
pub fn check_exactly_once_in_order(fake: &FakeCluster, topic: &str, partitions: i32, sent: &[(Bytes, RecordMetadata)]) {
    let mut logs = BTreeMap::new();
    for p in 0..partitions {
        logs.insert(p, read_back(fake, topic, p));
    }
    let mut seen = HashSet::new();
    for (p, log) in &logs {
        for r in log {
            let value = r.value.clone().expect("values are set");
            assert!(seen.insert(value.clone()), "partition {p}: {value:?} written twice");
        }
    }
    for (value, meta) in sent {
        let log = &logs[&meta.partition];
        let found = log.iter().find(|r| r.value.as_ref() == Some(value));
        let found = found.unwrap_or_else(|| panic!("acknowledged {value:?} ({meta:?}) is not in the log"));
        if meta.offset >= 0 {
            assert_eq!(found.offset, meta.offset, "{value:?}");
        }
    }
    for p in 0..partitions {
        let order: Vec<&Bytes> = sent.iter().filter(|(_, m)| m.partition == p).map(|(v, _)| v).collect();
        let logged: Vec<&Bytes> = logs[&p].iter().filter_map(|r| r.value.as_ref()).collect();
        assert_eq!(logged, order, "partition {p} holds its records in the order sent");
    }
}

/// The transaction markers of `topic`'s `partition`: (offset, producer id, committed).
pub fn markers(fake: &FakeCluster, topic: &str, partition: i32) -> Vec<(i64, i64, bool)> {
    let mut out = Vec::new();
    for stored in fake.batches(topic, partition).unwrap_or_default() {
        let records = Records::from_bytes(stored.bytes);
        for batch in records.batches() {
            let Ok(Batch::V2(batch)) = batch else { panic!("a v2 batch") };
            let header = *batch.header();
            if !header.attributes.is_control() {
                continue;
            }
            for record in Records::from_bytes(batch.as_bytes().clone()).records() {
                let r = record.expect("a readable marker");
                let key = r.key.expect("a marker has a key");
                out.push((r.offset, header.producer_id, key.get(3) == Some(&1)));
            }
        }
    }
    out
}

/// Creates `name` with `partitions` partitions and `replicas` replicas (and `configs`) on a
/// real Kafka, and waits until Metadata names a leader for each.
pub async fn create_topic(
    cluster: &kwire_connection::Cluster,
    name: &str,
    partitions: i32,
    replicas: i16,
    configs: &[(&str, &str)],
) {
    use kwire::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
    use kwire::messages::CreateTopicsRequest;
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: replicas,
            configs: configs
                .iter()
                .map(|(k, v)| CreatableTopicConfig {
                    name: (*k).into(),
                    value: Some((*v).into()),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let answer = cluster.any().await.unwrap().send(request).await.unwrap();
    let topic = &answer.topics[0];
    assert_eq!(topic.error_code, kwire::ErrorCode::NONE, "{:?}", topic.error_message);
    for _ in 0..100 {
        cluster.refresh_topics(&[name], false).await.unwrap();
        let metadata = cluster.metadata();
        if let Some(t) = metadata.topics.get(name) {
            if t.partitions.len() == partitions as usize && t.partitions.iter().all(|p| p.leader >= 0) {
                return;
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("{name} has no leaders after 10 s");
}

/// A record as Kafka's Java consumer read it (`ProducerCheck read`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaRecord {
    pub partition: i32,
    pub offset: i64,
    pub timestamp: i64,
    pub timestamp_type: String,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// Every record of `topic` as Kafka's Java consumer reads it at `isolation`.
pub fn java_read(bootstrap: &str, topic: &str, isolation: &str) -> Vec<JavaRecord> {
    use base64::Engine;
    kwire_test_support::kafka::java_program_built("ProducerCheck").expect("scripts/kafka-release built the oracle");
    let out = kwire_test_support::kafka::java_program("ProducerCheck", &["read", bootstrap, topic, isolation])
        .output()
        .expect("java runs");
    assert!(out.status.success(), "ProducerCheck read failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let b64 = |v: &serde_json::Value| v.as_str().map(|s| base64::engine::general_purpose::STANDARD.decode(s).unwrap());
    let mut records = Vec::new();
    let mut end = None;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if let Some(total) = v.get("end") {
            end = total.as_u64();
            continue;
        }
        records.push(JavaRecord {
            partition: v["partition"].as_i64().unwrap() as i32,
            offset: v["offset"].as_i64().unwrap(),
            timestamp: v["timestamp"].as_i64().unwrap(),
            timestamp_type: v["timestampType"].as_str().unwrap().to_string(),
            key: b64(&v["key"]),
            value: b64(&v["value"]),
            headers: v["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| (h[0].as_str().unwrap().to_string(), b64(&h[1])))
                .collect(),
        });
    }
    assert_eq!(end, Some(records.len() as u64), "the reader reached the end offsets");
    records
}
