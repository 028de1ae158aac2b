//! kwire vs kafka-protocol 0.18, same run, same logical messages: encode and decode of
//! four workloads at the newest version our schema corpus defines (which kafka-protocol also
//! supports):
//!
//! - MetadataResponse v12: 3 brokers, 1,000 topics × 10 partitions (3 replicas, 3 ISR).
//! - FetchResponse v17: 1 topic, 100 partitions of 64 KiB record data each.
//! - ProduceRequest v11: 1 topic, 100 partitions of 16 KiB record data each.
//! - ApiVersionsResponse v4: every API this build knows, plus features (tagged fields).
//!
//! Before timing, each workload is encoded by both sides and the bytes must be identical (a
//! cross-implementation golden check); each side must also decode the other's bytes back to
//! the message it started from. Encoding writes into a reused, cleared buffer (no allocation
//! in the loop on either side); `encode/kwire-vectored` is our `encode_vectored`, which
//! hands byte and record fields of 1 KiB or more over as shared `Bytes` chunks (for `writev`)
//! instead of copying them, where kafka-protocol can only copy; decoding clones the input `Bytes` (a reference count) and
//! includes dropping the decoded value. Throughput counts encoded message bytes.
//!
//! Run: `cargo bench -p kwire-bench --bench messages_vs_kafka_protocol`
//!
//! With `KWIRE_BENCH_CLOCK=cpu` the benches measure the bench thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) instead of wall time, and the groups get a `/cpu` suffix: on a
//! shared, oversubscribed machine that leaves out the time the thread sat descheduled, which
//! otherwise swamps the difference between the two sides.

use std::hint::black_box;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{BenchmarkGroup, Criterion, Throughput};
use kafka_protocol::messages as kp;
use kafka_protocol::protocol::{Decodable as KpDecodable, Encodable as KpEncodable, StrBytes as KpStr};
use kwire::messages as kw;
use kwire::{BrokerId, Decode, Encode, ErrorCode, Records, StrBytes, Uuid};

const METADATA_VERSION: i16 = 12;
const FETCH_VERSION: i16 = 17;
const PRODUCE_VERSION: i16 = 11;
const API_VERSIONS_VERSION: i16 = 4;

const METADATA_TOPICS: usize = 1_000;
const METADATA_PARTITIONS: usize = 10;
const FETCH_PARTITIONS: usize = 100;
const FETCH_RECORD_BYTES: usize = 64 * 1024;
const PRODUCE_PARTITIONS: usize = 100;
const PRODUCE_RECORD_BYTES: usize = 16 * 1024;

/// A deterministic topic id, distinct per topic.
fn topic_id(i: usize) -> Uuid {
    Uuid::from_u64_pair(0x5eed_0000_0000_0000 | i as u64, 0x0123_4567_89ab_cdef ^ (i as u64).rotate_left(17))
}

/// One distinct allocation of record-like bytes per partition, so neither side can share.
fn record_data(len: usize, seed: usize) -> Bytes {
    let mut state = 0x9E37_79B9_7F4A_7C15u64 ^ seed as u64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect::<Vec<u8>>()
        .into()
}

fn replicas(p: usize) -> [i32; 3] {
    [(p % 3) as i32, ((p + 1) % 3) as i32, ((p + 2) % 3) as i32]
}

fn broker_ids(p: usize) -> kwire::runtime::FixedArray<BrokerId> {
    replicas(p).map(BrokerId).as_slice().into()
}

// ---- MetadataResponse ----

fn metadata_ours() -> kw::MetadataResponse {
    use kw::metadata_response::{MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
    kw::MetadataResponse {
        throttle_time_ms: 0,
        brokers: (0..3)
            .map(|b| MetadataResponseBroker {
                node_id: BrokerId(b),
                host: format!("broker-{b}.kafka.internal").into(),
                port: 9092,
                rack: Some(format!("rack-{b}").into()),
                ..Default::default()
            })
            .collect(),
        cluster_id: Some(StrBytes::from_static_str("bench-cluster-0123456789")),
        controller_id: BrokerId(1),
        topics: (0..METADATA_TOPICS)
            .map(|t| MetadataResponseTopic {
                error_code: ErrorCode::NONE,
                name: Some(format!("topic-{t:05}").into()),
                topic_id: topic_id(t),
                is_internal: false,
                partitions: (0..METADATA_PARTITIONS)
                    .map(|p| MetadataResponsePartition {
                        error_code: ErrorCode::NONE,
                        partition_index: p as i32,
                        leader_id: BrokerId(replicas(t + p)[0]),
                        leader_epoch: 7,
                        replica_nodes: broker_ids(t + p),
                        isr_nodes: broker_ids(t + p),
                        offline_replicas: Default::default(),
                        ..Default::default()
                    })
                    .collect(),
                topic_authorized_operations: 0x0fff,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn metadata_theirs() -> kp::MetadataResponse {
    use kp::metadata_response::{MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic};
    kp::MetadataResponse::default()
        .with_throttle_time_ms(0)
        .with_brokers(
            (0..3)
                .map(|b| {
                    MetadataResponseBroker::default()
                        .with_node_id(kp::BrokerId(b))
                        .with_host(KpStr::from_string(format!("broker-{b}.kafka.internal")))
                        .with_port(9092)
                        .with_rack(Some(KpStr::from_string(format!("rack-{b}"))))
                })
                .collect(),
        )
        .with_cluster_id(Some(KpStr::from_static_str("bench-cluster-0123456789")))
        .with_controller_id(kp::BrokerId(1))
        .with_topics(
            (0..METADATA_TOPICS)
                .map(|t| {
                    MetadataResponseTopic::default()
                        .with_error_code(0)
                        .with_name(Some(kp::TopicName(KpStr::from_string(format!("topic-{t:05}")))))
                        .with_topic_id(topic_id(t))
                        .with_is_internal(false)
                        .with_partitions(
                            (0..METADATA_PARTITIONS)
                                .map(|p| {
                                    let r = replicas(t + p).map(kp::BrokerId);
                                    MetadataResponsePartition::default()
                                        .with_error_code(0)
                                        .with_partition_index(p as i32)
                                        .with_leader_id(r[0])
                                        .with_leader_epoch(7)
                                        .with_replica_nodes(r.to_vec())
                                        .with_isr_nodes(r.to_vec())
                                        .with_offline_replicas(Vec::new())
                                })
                                .collect(),
                        )
                        .with_topic_authorized_operations(0x0fff)
                })
                .collect(),
        )
}

// ---- FetchResponse ----

fn fetch_records() -> Vec<Bytes> {
    (0..FETCH_PARTITIONS).map(|p| record_data(FETCH_RECORD_BYTES, p)).collect()
}

fn fetch_ours(records: &[Bytes]) -> kw::FetchResponse {
    use kw::fetch_response::{FetchableTopicResponse, PartitionData};
    kw::FetchResponse {
        throttle_time_ms: 0,
        error_code: ErrorCode::NONE,
        session_id: 42,
        responses: vec![FetchableTopicResponse {
            topic_id: topic_id(7),
            partitions: records
                .iter()
                .enumerate()
                .map(|(p, data)| PartitionData {
                    partition_index: p as i32,
                    error_code: ErrorCode::NONE,
                    high_watermark: 1_000_000 + p as i64,
                    last_stable_offset: 1_000_000 + p as i64,
                    log_start_offset: 0,
                    aborted_transactions: Some(Vec::new()),
                    preferred_read_replica: BrokerId(-1),
                    records: Some(Records::from_bytes(data.clone())),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn fetch_theirs(records: &[Bytes]) -> kp::FetchResponse {
    use kp::fetch_response::{FetchableTopicResponse, PartitionData};
    kp::FetchResponse::default().with_throttle_time_ms(0).with_error_code(0).with_session_id(42).with_responses(vec![
        FetchableTopicResponse::default().with_topic_id(topic_id(7)).with_partitions(
            records
                .iter()
                .enumerate()
                .map(|(p, data)| {
                    PartitionData::default()
                        .with_partition_index(p as i32)
                        .with_error_code(0)
                        .with_high_watermark(1_000_000 + p as i64)
                        .with_last_stable_offset(1_000_000 + p as i64)
                        .with_log_start_offset(0)
                        .with_aborted_transactions(Some(Vec::new()))
                        .with_preferred_read_replica(kp::BrokerId(-1))
                        .with_records(Some(data.clone()))
                })
                .collect(),
        ),
    ])
}

// ---- ProduceRequest ----

fn produce_records() -> Vec<Bytes> {
    (0..PRODUCE_PARTITIONS).map(|p| record_data(PRODUCE_RECORD_BYTES, 1_000 + p)).collect()
}

fn produce_ours(records: &[Bytes]) -> kw::ProduceRequest {
    use kw::produce_request::{PartitionProduceData, TopicProduceData};
    kw::ProduceRequest {
        transactional_id: None,
        acks: -1,
        timeout_ms: 30_000,
        topic_data: vec![TopicProduceData {
            name: kwire::TopicName::from_static_str("bench-produce-topic"),
            partition_data: records
                .iter()
                .enumerate()
                .map(|(p, data)| PartitionProduceData {
                    index: p as i32,
                    records: Some(Records::from_bytes(data.clone())),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn produce_theirs(records: &[Bytes]) -> kp::ProduceRequest {
    use kp::produce_request::{PartitionProduceData, TopicProduceData};
    kp::ProduceRequest::default().with_transactional_id(None).with_acks(-1).with_timeout_ms(30_000).with_topic_data(
        vec![TopicProduceData::default()
            .with_name(kp::TopicName(KpStr::from_static_str("bench-produce-topic")))
            .with_partition_data(
                records
                    .iter()
                    .enumerate()
                    .map(|(p, data)| {
                        PartitionProduceData::default().with_index(p as i32).with_records(Some(data.clone()))
                    })
                    .collect(),
            )],
    )
}

// ---- ApiVersionsResponse ----

/// (api key, min version, max version) for every API this build knows.
fn api_list() -> Vec<(i16, i16, i16)> {
    kw::ApiKey::ALL
        .iter()
        .filter_map(|api| {
            let v = api.valid_versions()?;
            Some((api.key(), v.min, v.max))
        })
        .collect()
}

const SUPPORTED: [(&str, i16, i16); 3] =
    [("metadata.version", 1, 27), ("kraft.version", 0, 1), ("transaction.version", 0, 2)];
const FINALIZED: [(&str, i16, i16); 2] = [("metadata.version", 27, 27), ("kraft.version", 1, 1)];

fn api_versions_ours(apis: &[(i16, i16, i16)]) -> kw::ApiVersionsResponse {
    use kw::api_versions_response::{ApiVersion, FinalizedFeatureKey, SupportedFeatureKey};
    kw::ApiVersionsResponse {
        error_code: ErrorCode::NONE,
        api_keys: apis
            .iter()
            .map(|&(api_key, min_version, max_version)| ApiVersion {
                api_key,
                min_version,
                max_version,
                ..Default::default()
            })
            .collect(),
        throttle_time_ms: 0,
        supported_features: SUPPORTED
            .iter()
            .map(|&(name, min_version, max_version)| SupportedFeatureKey {
                name: StrBytes::from_static_str(name),
                min_version,
                max_version,
                ..Default::default()
            })
            .collect(),
        finalized_features_epoch: 1234,
        finalized_features: FINALIZED
            .iter()
            .map(|&(name, max_version_level, min_version_level)| FinalizedFeatureKey {
                name: StrBytes::from_static_str(name),
                max_version_level,
                min_version_level,
                ..Default::default()
            })
            .collect(),
        zk_migration_ready: false,
        ..Default::default()
    }
}

fn api_versions_theirs(apis: &[(i16, i16, i16)]) -> kp::ApiVersionsResponse {
    use kp::api_versions_response::{ApiVersion, FinalizedFeatureKey, SupportedFeatureKey};
    kp::ApiVersionsResponse::default()
        .with_error_code(0)
        .with_api_keys(
            apis.iter()
                .map(|&(key, min, max)| {
                    ApiVersion::default().with_api_key(key).with_min_version(min).with_max_version(max)
                })
                .collect(),
        )
        .with_throttle_time_ms(0)
        .with_supported_features(
            SUPPORTED
                .iter()
                .map(|&(name, min, max)| {
                    SupportedFeatureKey::default()
                        .with_name(KpStr::from_static_str(name))
                        .with_min_version(min)
                        .with_max_version(max)
                })
                .collect(),
        )
        .with_finalized_features_epoch(1234)
        .with_finalized_features(
            FINALIZED
                .iter()
                .map(|&(name, max, min)| {
                    FinalizedFeatureKey::default()
                        .with_name(KpStr::from_static_str(name))
                        .with_max_version_level(max)
                        .with_min_version_level(min)
                })
                .collect(),
        )
        .with_zk_migration_ready(false)
}

// ---- harness ----

fn encode_ours<T: Encode>(msg: &T, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    msg.encode(&mut buf, version).expect("kwire encodes the bench message");
    assert_eq!(buf.len(), msg.encoded_size(version).unwrap(), "kwire encoded_size");
    buf.freeze()
}

fn encode_theirs<T: KpEncodable>(msg: &T, version: i16) -> Bytes {
    let mut buf = BytesMut::new();
    msg.encode(&mut buf, version).expect("kafka-protocol encodes the bench message");
    assert_eq!(buf.len(), msg.compute_size(version).unwrap(), "kafka-protocol compute_size");
    buf.freeze()
}

/// Panics with the first differing offset and a hex window around it on both sides.
fn assert_same_bytes(workload: &str, ours: &[u8], theirs: &[u8]) {
    if ours == theirs {
        return;
    }
    let at = ours.iter().zip(theirs).position(|(a, b)| a != b).unwrap_or(ours.len().min(theirs.len()));
    let window = |b: &[u8]| {
        let lo = at.saturating_sub(16);
        let hi = (at + 32).min(b.len());
        b[lo..hi].iter().map(|x| format!("{x:02x}")).collect::<Vec<_>>().join(" ")
    };
    panic!(
        "{workload}: encodings differ at byte {at} (ours {} bytes, kafka-protocol {} bytes)\n  ours:   {}\n  theirs: {}",
        ours.len(),
        theirs.len(),
        window(ours),
        window(theirs)
    );
}

/// The golden check, then encode and decode timings for both sides in one group.
fn bench_workload<M, O, K>(c: &mut Criterion<M>, name: &str, version: i16, ours: &O, theirs: &K)
where
    M: Measurement,
    O: Encode + Decode + PartialEq + std::fmt::Debug,
    K: KpEncodable + KpDecodable + PartialEq + std::fmt::Debug,
{
    let ours_bytes = encode_ours(ours, version);
    let theirs_bytes = encode_theirs(theirs, version);
    assert_same_bytes(name, &ours_bytes, &theirs_bytes);
    // Each side decodes the other's bytes back to the message it started from, using them all.
    let mut rest = theirs_bytes.clone();
    assert!(O::decode(&mut rest, version).unwrap() == *ours && rest.is_empty(), "{name}: kwire decode");
    let mut rest = ours_bytes.clone();
    assert!(K::decode(&mut rest, version).unwrap() == *theirs && rest.is_empty(), "{name}: kafka-protocol decode");
    // The vectored encode must give the same bytes, in chunks.
    let (mut scratch, mut chunks) = (BytesMut::new(), Vec::new());
    ours.encode_vectored(&mut scratch, &mut chunks, version).expect("kwire encodes vectored");
    assert_eq!(chunks.concat(), &ours_bytes[..], "{name}: vectored encode");
    let input = ours_bytes;
    println!("{name}: {} bytes, identical from kwire and kafka-protocol", input.len());

    let mut group = c.benchmark_group(format!("{name}{}", group_suffix()));
    configure(&mut group, input.len());
    let mut buf = BytesMut::with_capacity(input.len());
    group.bench_function("encode/kwire", |b| {
        b.iter(|| {
            buf.clear();
            black_box(ours).encode(&mut buf, version).unwrap();
            black_box(buf.len())
        })
    });
    group.bench_function("encode/kwire-vectored", |b| {
        b.iter(|| {
            chunks.clear();
            black_box(ours).encode_vectored(&mut scratch, &mut chunks, version).unwrap();
            black_box(chunks.len())
        })
    });
    group.bench_function("encode/kafka-protocol", |b| {
        b.iter(|| {
            buf.clear();
            black_box(theirs).encode(&mut buf, version).unwrap();
            black_box(buf.len())
        })
    });
    group.bench_function("decode/kwire", |b| b.iter(|| O::decode(&mut black_box(&input).clone(), version).unwrap()));
    group.bench_function("decode/kafka-protocol", |b| {
        b.iter(|| K::decode(&mut black_box(&input).clone(), version).unwrap())
    });
    group.finish();
}

fn configure<M: Measurement>(group: &mut BenchmarkGroup<'_, M>, bytes: usize) {
    group.throughput(Throughput::Bytes(bytes as u64));
    group.sample_size(25);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
}

fn benches<M: Measurement>(c: &mut Criterion<M>) {
    bench_workload(c, "metadata_response_v12_1000x10", METADATA_VERSION, &metadata_ours(), &metadata_theirs());

    let fetch = fetch_records();
    bench_workload(c, "fetch_response_v17_100x64KiB", FETCH_VERSION, &fetch_ours(&fetch), &fetch_theirs(&fetch));

    let produce = produce_records();
    bench_workload(
        c,
        "produce_request_v11_100x16KiB",
        PRODUCE_VERSION,
        &produce_ours(&produce),
        &produce_theirs(&produce),
    );

    let apis = api_list();
    bench_workload(
        c,
        "api_versions_response_v4_all_apis",
        API_VERSIONS_VERSION,
        &api_versions_ours(&apis),
        &api_versions_theirs(&apis),
    );
}

// ---- clocks ----

fn cpu_clock() -> bool {
    std::env::var("KWIRE_BENCH_CLOCK").is_ok_and(|v| v == "cpu")
}

fn group_suffix() -> &'static str {
    if cpu_clock() {
        "/cpu"
    } else {
        ""
    }
}

/// CPU time of the calling thread; criterion runs every iteration on the main thread.
struct ThreadCpuTime(WallTime);

#[allow(unsafe_code)]
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid, exclusive pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

impl Measurement for ThreadCpuTime {
    type Intermediate = Duration;
    type Value = Duration;
    fn start(&self) -> Duration {
        thread_cpu_time()
    }
    fn end(&self, start: Duration) -> Duration {
        thread_cpu_time().saturating_sub(start)
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        // Values are nanoseconds, as with wall time, so its formatter (and MB/s) applies.
        self.0.formatter()
    }
}

fn main() {
    if cpu_clock() {
        let mut c = Criterion::default().with_measurement(ThreadCpuTime(WallTime)).configure_from_args();
        benches(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        benches(&mut c);
        c.final_summary();
    }
}
