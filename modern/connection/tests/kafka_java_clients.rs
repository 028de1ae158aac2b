//! Kafka's own Java client and ours on the same Apache Kafka 4.4 broker: the Java consumer reads
//! every record we wrote (each codec, headers, CRCs checked), we read every record the Java
//! producer wrote (each codec, headers, and a committed and an aborted transaction), and the Java
//! consumer in read_committed sees exactly the records of the transactions we committed.

use std::sync::OnceLock;

use kwire::ErrorCode;
use kwire_connection::{Client, ClientConfig, Cluster};
use kwire_records::{Compression, RecordsExt};
use kwire_test_support::kafka::java_client;
use kwire_test_support::Kafka;
use serde_json::Value;

mod common;
use common::{batch, create_topic, fetch_request, produce_request, Transactional, TxnProtocol};

fn kafka() -> Option<&'static Kafka> {
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA.get_or_init(|| Kafka::start_or_skip(1)).as_ref()
}

/// A record as both sides see it: key, value, headers.
type Seen = (Option<String>, Option<String>, Vec<(String, Option<String>)>);

/// The Java consumer's records of partition 0 of `topic`.
fn java_consume(kafka: &Kafka, topic: &str, n: usize, isolation: &str) -> Vec<Seen> {
    let out = java_client(&["consume", &kafka.bootstrap(), topic, &n.to_string(), isolation]).unwrap();
    assert!(out.status.success(), "Java consumer: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            let s = |v: &Value| v.as_str().map(str::to_string);
            let headers = v["headers"].as_array().unwrap().iter().map(|h| (s(&h[0]).unwrap(), s(&h[1]))).collect();
            (s(&v["key"]), s(&v["value"]), headers)
        })
        .collect()
}

fn text(bytes: Option<&kwire::Bytes>) -> Option<String> {
    bytes.map(|b| String::from_utf8(b.to_vec()).unwrap())
}

/// The records of `records` as the Java consumer prints them.
fn seen(records: &kwire::Records) -> Vec<Seen> {
    let header = |h: &kwire_records::Header| (String::from_utf8(h.key.to_vec()).unwrap(), text(h.value.as_ref()));
    let all = records.to_vec(Default::default()).unwrap();
    all.iter().map(|r| (text(r.key.as_ref()), text(r.value.as_ref()), r.headers.iter().map(header).collect())).collect()
}

#[tokio::test]
async fn kafkas_java_consumer_reads_every_record_we_wrote() {
    let Some(kafka) = kafka() else { return };
    let client = Client::connect(kafka.plaintext(), ClientConfig::default()).await.unwrap();
    let topic = "rust-to-java";
    let topic_id = create_topic(&client, topic, 1).await;
    let mut ours: Vec<Seen> = Vec::new();
    for (codec, tag) in [
        (Compression::None, "none"),
        (Compression::Gzip, "gzip"),
        (Compression::Snappy, "snappy"),
        (Compression::Lz4, "lz4"),
        (Compression::Zstd, "zstd"),
    ] {
        let records = batch(codec, 40, tag);
        ours.extend(seen(&records));
        let answer = client.send(produce_request(topic, topic_id, 0, records, -1)).await.unwrap();
        assert_eq!(answer.responses[0].partition_responses[0].error_code, ErrorCode::NONE);
    }
    let theirs = java_consume(kafka, topic, ours.len(), "read_uncommitted");
    assert_eq!(theirs.len(), ours.len());
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "record {i}");
    }
}

#[tokio::test]
async fn we_read_every_record_kafkas_java_producer_wrote() {
    let Some(kafka) = kafka() else { return };
    let client = Client::connect(kafka.plaintext(), ClientConfig::default()).await.unwrap();
    let topic = "java-to-rust";
    let topic_id = create_topic(&client, topic, 1).await;
    let n = 30;
    let out = java_client(&["produce", &kafka.bootstrap(), topic, &n.to_string()]).unwrap();
    assert!(out.status.success(), "Java producer: {}", String::from_utf8_lossy(&out.stderr));

    // Everything the log holds: 5 codecs × n, then n committed and n aborted, and markers.
    let mut batches = Vec::new();
    let mut offset = 0;
    loop {
        let response = client.send(fetch_request(topic, topic_id, offset, 0)).await.unwrap();
        let partition = &response.responses[0].partitions[0];
        assert_eq!(partition.error_code, ErrorCode::NONE);
        let records = partition.records.clone().unwrap_or_default();
        records.verify().unwrap();
        let before = offset;
        for b in records.batches() {
            let b = b.unwrap();
            if b.last_offset() >= offset {
                offset = b.last_offset() + 1;
                batches.push(b);
            }
        }
        if offset >= partition.high_watermark || offset == before {
            break;
        }
    }
    let mut codecs_seen = Vec::new();
    let mut values = Vec::new();
    for b in &batches {
        codecs_seen.push(b.compression().unwrap());
        if b.is_control() {
            continue;
        }
        for r in b.records().unwrap() {
            let r = r.unwrap();
            let value = text(r.value.as_ref()).unwrap();
            if let Some(codec) =
                value.strip_prefix("java-").and_then(|v| v.split('-').next()).filter(|c| !c.starts_with("txn"))
            {
                assert_eq!(text(r.key.as_ref()).unwrap(), value.replace("-value-", "-key-"));
                assert_eq!(text(r.headers[0].value.as_ref()).as_deref(), Some(codec));
            }
            values.push(value);
        }
    }
    for codec in [Compression::None, Compression::Gzip, Compression::Snappy, Compression::Lz4, Compression::Zstd] {
        assert!(codecs_seen.contains(&codec), "no {codec:?} batch from the Java producer: {codecs_seen:?}");
    }
    for tag in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let expected: Vec<String> = (0..n).map(|i| format!("java-{tag}-value-{i}")).collect();
        let got: Vec<&String> = values.iter().filter(|v| v.starts_with(&format!("java-{tag}-value-"))).collect();
        assert_eq!(got, expected.iter().collect::<Vec<_>>(), "{tag}");
    }
    // read_uncommitted sees both transactions' records; read_committed (Kafka's aborted list)
    // only the committed one.
    assert_eq!(values.iter().filter(|v| v.starts_with("java-txn-committed-")).count(), n);
    assert_eq!(values.iter().filter(|v| v.starts_with("java-txn-aborted-")).count(), n);
    let committed = client.send(fetch_request(topic, topic_id, 0, 1)).await.unwrap();
    let aborted = committed.responses[0].partitions[0].aborted_transactions.clone().unwrap_or_default();
    assert_eq!(aborted.len(), 1, "one aborted transaction: {aborted:?}");
}

#[tokio::test]
async fn kafkas_java_consumer_in_read_committed_sees_exactly_our_committed_transactions() {
    let Some(kafka) = kafka() else { return };
    let cluster = Cluster::connect(&[&kafka.bootstrap()], ClientConfig::default()).await.unwrap();
    let client = cluster.any().await.unwrap();
    let topic = "rust-transactions-for-java";
    let topic_id = create_topic(&client, topic, 1).await;
    // Transactions v2, as Kafka 4.4's own producer runs them.
    let mut txn = Transactional::init_with(&cluster, "rust-txn-for-java", TxnProtocol::V2).await;
    let mut expected: Vec<Seen> = Vec::new();
    for (commit, tag) in [(true, "first"), (false, "dropped"), (true, "second")] {
        txn.begin(&cluster, topic).await;
        let request = txn.produce(topic, topic_id, Compression::Snappy, 7, tag);
        if commit {
            expected.extend(seen(request.topic_data[0].partition_data[0].records.as_ref().unwrap()));
        }
        // The previous transaction's markers may still be being written: Kafka answers
        // CONCURRENT_TRANSACTIONS (retriable, as its producer treats it) until they are.
        let mut tries = 0;
        let produced = loop {
            let produced = client.send_at(request.clone(), txn.produce_version(&client)).await.unwrap();
            let code = produced.responses[0].partition_responses[0].error_code;
            if code != ErrorCode::CONCURRENT_TRANSACTIONS || tries == 100 {
                break produced;
            }
            tries += 1;
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        assert_eq!(produced.responses[0].partition_responses[0].error_code, ErrorCode::NONE);
        txn.end(commit).await;
    }
    let seen = java_consume(kafka, topic, expected.len(), "read_committed");
    assert_eq!(seen, expected, "read_committed: the first and second transactions, nothing of the aborted one");
}
