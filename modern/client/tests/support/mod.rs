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
            let header = batch.header().clone();
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
            let header = batch.header().clone();
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
