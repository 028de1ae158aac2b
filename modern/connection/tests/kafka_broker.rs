//! The connection against a real Apache Kafka 4.4.0 broker (KRaft, one combined node, shared by
//! the tests of this file; each test uses topics of its own): negotiation and KIP-511's
//! fallback, admin requests, produce and fetch in every codec, offsets, SASL, pipelining and
//! the limits that close a connection.

use std::io::{Read, Write};
use std::net::TcpStream as StdTcpStream;
use std::sync::OnceLock;
use std::time::Duration;

use kwire::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kwire::messages::delete_topics_request::DeleteTopicState;
use kwire::messages::describe_configs_request::DescribeConfigsResource;
use kwire::messages::incremental_alter_configs_request::{AlterConfigsResource, AlterableConfig};
use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::{
    ApiKey, ApiVersionsRequest, CreateTopicsRequest, DeleteTopicsRequest, DescribeClusterRequest,
    DescribeConfigsRequest, IncrementalAlterConfigsRequest, ListOffsetsRequest, MetadataRequest,
};
use kwire::{Encode, ErrorCode, Uuid};
use kwire_connection::{Client, ClientConfig, Connection, Credentials, Error};
use kwire_records::{Compression, RecordsExt};
use kwire_test_support::kafka::{PLAIN_USER, SCRAM_SHA256_USER, SCRAM_SHA512_USER};
use kwire_test_support::Kafka;

mod common;
use common::{batch, create_topic, fetch_request, now_ms, produce_request};

/// One broker for every test of this file (stopped when the test binary exits).
fn kafka() -> Option<&'static Kafka> {
    static KAFKA: OnceLock<Option<Kafka>> = OnceLock::new();
    KAFKA.get_or_init(|| Kafka::start_or_skip(1)).as_ref()
}

async fn client(kafka: &Kafka) -> Client {
    Client::connect(kafka.plaintext(), ClientConfig::default()).await.expect("connects to Kafka")
}

#[tokio::test]
async fn negotiates_with_kafka_4_4() {
    let Some(kafka) = kafka() else { return };
    let client = client(kafka).await;
    // Our newest ApiVersions (v5 in Kafka 4.4.0's schemas) is one Kafka 4.4 knows: no fallback.
    assert_eq!(client.api_versions_version(), 5);
    let answer = client.api_versions();
    assert_eq!(answer.error_code, ErrorCode::NONE);
    assert!(answer.api_keys.len() > 50, "Kafka 4.4 offers {} APIs", answer.api_keys.len());
    // Kafka 4.0 removed the oldest versions (KIP-896): Fetch starts at 4. Produce is still
    // advertised from 0 (KAFKA-18659, for librdkafka), though 4.x refuses v0-2.
    let range = |api: ApiKey| answer.api_keys.iter().find(|k| k.api_key == api.key()).unwrap();
    assert!(range(ApiKey::Produce).max_version >= 11, "{:?}", range(ApiKey::Produce));
    assert!(
        range(ApiKey::Fetch).min_version >= 4 && range(ApiKey::Fetch).max_version >= 17,
        "{:?}",
        range(ApiKey::Fetch)
    );
    assert_eq!(client.version_of(ApiKey::Produce), Some(13), "our newest Produce (topic ids)");
    assert_eq!(client.version_of(ApiKey::Fetch), Some(18), "our newest Fetch");
    // An API Kafka 4.x retired is not negotiated.
    assert_eq!(client.version_of(ApiKey::LeaderAndIsr), None);
    let metadata = client.send(MetadataRequest::default()).await.unwrap();
    assert_eq!(metadata.brokers.len(), 1);
    assert_eq!(metadata.cluster_id.as_deref(), Some(kafka.cluster_id.as_str()));
}

#[tokio::test]
async fn kip_511_fallback_when_the_broker_does_not_know_the_version() {
    let Some(kafka) = kafka() else { return };
    // By hand first: ApiVersions under version 100, read back at 0 (the broker's fallback).
    let mut conn = Connection::new(Some("kip-511"), 1 << 20);
    let body = ApiVersionsRequest {
        client_software_name: "t".into(),
        client_software_version: "1".into(),
        ..Default::default()
    };
    let sent = conn.send_encoded(ApiKey::ApiVersions, 100, &body.encode_to_bytes(3).unwrap(), 3).unwrap();
    let mut socket = StdTcpStream::connect(kafka.plaintext()).unwrap();
    socket.write_all(&conn.outgoing()).unwrap();
    let mut buf = [0u8; 4096];
    let received = loop {
        let n = socket.read(&mut buf).unwrap();
        assert!(n > 0, "Kafka closed the connection");
        conn.receive(&buf[..n]);
        if let Some(r) = conn.next_response().unwrap() {
            break r;
        }
    };
    assert_eq!(received.correlation_id, sent.correlation_id);
    assert_eq!(received.version, 0, "Kafka answers an unknown ApiVersions version in version 0");
    let answer = received.into_typed::<ApiVersionsRequest>().unwrap();
    assert_eq!(answer.error_code, ErrorCode::UNSUPPORTED_VERSION);
    let theirs = answer.api_keys.iter().find(|k| k.api_key == ApiKey::ApiVersions.key()).unwrap();
    assert!(theirs.max_version >= 4 && theirs.max_version < 100, "{theirs:?}");

    // The client does the same and retries at the newest version both know.
    let config = ClientConfig { first_api_versions_version: Some(100), ..ClientConfig::default() };
    let client = Client::connect(kafka.plaintext(), config).await.unwrap();
    assert_eq!(client.api_versions_version(), 5);
    client.send(MetadataRequest::default()).await.unwrap();
}

#[tokio::test]
async fn admin_create_describe_alter_and_delete_a_topic() {
    let Some(kafka) = kafka() else { return };
    let client = client(kafka).await;
    let topic = "admin-round";
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: topic.into(),
            num_partitions: 3,
            replication_factor: 1,
            configs: vec![CreatableTopicConfig {
                name: "cleanup.policy".into(),
                value: Some("compact".into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let created = client.send(request.clone()).await.unwrap();
    assert_eq!(created.topics[0].error_code, ErrorCode::NONE);
    assert_eq!(created.topics[0].num_partitions, 3);
    assert_ne!(created.topics[0].topic_id, Uuid::nil());
    // Again: TOPIC_ALREADY_EXISTS, a typed code with Kafka's message.
    let again = client.send(request).await.unwrap();
    assert_eq!(again.topics[0].error_code, ErrorCode::TOPIC_ALREADY_EXISTS);
    assert!(again.topics[0].error_message.as_deref().is_some_and(|m| m.contains(topic)), "{:?}", again.topics[0]);

    let describe = |keys: &[&str]| DescribeConfigsRequest {
        resources: vec![DescribeConfigsResource {
            resource_type: 2,
            resource_name: topic.into(),
            configuration_keys: Some(keys.iter().map(|k| (*k).into()).collect()),
            ..Default::default()
        }],
        ..Default::default()
    };
    let configs = client.send(describe(&["cleanup.policy", "retention.ms"])).await.unwrap();
    let value = |response: &kwire::messages::DescribeConfigsResponse, name: &str| {
        response.results[0]
            .configs
            .iter()
            .find(|c| c.name.as_str() == name)
            .and_then(|c| c.value.as_deref().map(str::to_string))
    };
    assert_eq!(value(&configs, "cleanup.policy").as_deref(), Some("compact"));

    let alter = IncrementalAlterConfigsRequest {
        resources: vec![AlterConfigsResource {
            resource_type: 2,
            resource_name: topic.into(),
            configs: vec![AlterableConfig {
                name: "retention.ms".into(),
                config_operation: 0,
                value: Some("3600000".into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let altered = client.send(alter).await.unwrap();
    assert_eq!(altered.responses[0].error_code, ErrorCode::NONE, "{:?}", altered.responses[0].error_message);
    // The broker answers once the controller committed the change and applies it to what it
    // describes a moment later (KRaft replays the record asynchronously): read until it shows.
    let mut retention = None;
    for _ in 0..100 {
        let configs = client.send(describe(&["retention.ms"])).await.unwrap();
        retention = value(&configs, "retention.ms");
        if retention.as_deref() == Some("3600000") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(retention.as_deref(), Some("3600000"));

    let cluster = client.send(DescribeClusterRequest::default()).await.unwrap();
    assert_eq!(cluster.error_code, ErrorCode::NONE);
    assert_eq!(cluster.cluster_id.as_str(), kafka.cluster_id);
    assert_eq!(cluster.brokers.len(), 1);
    assert_eq!(cluster.brokers[0].port, i32::from(kafka.nodes[0].plaintext));

    let deleted = client
        .send(DeleteTopicsRequest {
            topics: vec![DeleteTopicState { name: Some(topic.into()), ..Default::default() }],
            topic_names: vec![topic.into()],
            timeout_ms: 30_000,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(deleted.responses[0].error_code, ErrorCode::NONE);
    // DeleteTopics answers once the controller has committed the deletion; the broker's own
    // metadata follows shortly after (on a loaded machine, after this request).
    let request = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic { name: Some(topic.into()), ..Default::default() }]),
        ..Default::default()
    };
    let mut code = ErrorCode::NONE;
    for _ in 0..100 {
        code = client.send(request.clone()).await.unwrap().topics[0].error_code;
        if code != ErrorCode::NONE {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(code, ErrorCode::UNKNOWN_TOPIC_OR_PARTITION);
}

#[tokio::test]
async fn produce_in_every_codec_then_fetch_and_list_offsets() {
    let Some(kafka) = kafka() else { return };
    let client = client(kafka).await;
    let topic = "codecs";
    let topic_id = create_topic(&client, topic, 1).await;
    let codecs = [
        (Compression::None, "none"),
        (Compression::Gzip, "gzip"),
        (Compression::Snappy, "snappy"),
        (Compression::Lz4, "lz4"),
        (Compression::Zstd, "zstd"),
    ];
    let before = now_ms();
    let mut expected = Vec::new();
    for (codec, tag) in codecs {
        let records = batch(codec, 50, tag);
        expected.extend(records.to_vec(Default::default()).unwrap());
        let response = client.send(produce_request(topic, topic_id, 0, records, -1)).await.unwrap();
        let p = &response.responses[0].partition_responses[0];
        assert_eq!(p.error_code, ErrorCode::NONE, "{tag}: {:?}", p.error_message);
        assert_eq!(p.base_offset, (expected.len() - 50) as i64, "{tag}");
    }

    // Fetch until all 250 are back, at Fetch v17 (by topic id), and with read_committed.
    for isolation in [0, 1] {
        let mut got = Vec::new();
        while got.len() < expected.len() {
            let response = client.send(fetch_request(topic, topic_id, got.len() as i64, isolation)).await.unwrap();
            let partition = &response.responses[0].partitions[0];
            assert_eq!(partition.error_code, ErrorCode::NONE);
            assert_eq!(partition.high_watermark, expected.len() as i64);
            let records = partition.records.clone().unwrap_or_default();
            records.verify().unwrap();
            for record in records.records() {
                let record = record.unwrap();
                if record.offset >= got.len() as i64 {
                    got.push(record);
                }
            }
        }
        for (ours, theirs) in expected.iter().zip(&got) {
            assert_eq!((&ours.key, &ours.value, &ours.headers), (&theirs.key, &theirs.value, &theirs.headers));
        }
        let codecs_seen: Vec<&[u8]> = got.iter().map(|r| r.headers[0].value.as_deref().unwrap()).collect();
        assert_eq!(codecs_seen[0], b"none");
        assert_eq!(codecs_seen[249], b"zstd");
    }

    let list = |timestamp: i64| ListOffsetsRequest {
        replica_id: (-1).into(),
        topics: vec![ListOffsetsTopic {
            name: topic.into(),
            partitions: vec![ListOffsetsPartition { partition_index: 0, timestamp, ..Default::default() }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let offset = |response: kwire::messages::ListOffsetsResponse| {
        let p = &response.topics[0].partitions[0];
        assert_eq!(p.error_code, ErrorCode::NONE);
        p.offset
    };
    assert_eq!(offset(client.send(list(-2)).await.unwrap()), 0, "earliest");
    assert_eq!(offset(client.send(list(-1)).await.unwrap()), 250, "latest");
    let by_time = offset(client.send(list(before)).await.unwrap());
    assert_eq!(by_time, 0, "the first record at or after the time before producing");
    assert_eq!(offset(client.send(list(now_ms() + 60_000)).await.unwrap()), -1, "nothing after the future");
}

#[tokio::test]
async fn acks_zero_returns_without_a_response_and_the_data_arrives() {
    let Some(kafka) = kafka() else { return };
    let client = client(kafka).await;
    let topic = "acks-zero";
    let topic_id = create_topic(&client, topic, 1).await;
    let response =
        client.send(produce_request(topic, topic_id, 0, batch(Compression::None, 10, "a0"), 0)).await.unwrap();
    assert!(response.responses.is_empty(), "no response exists for acks = 0");
    // The connection stays in step: the next request's response is its own.
    let mut fetched = 0;
    for _ in 0..50 {
        let response = client.send(fetch_request(topic, topic_id, 0, 0)).await.unwrap();
        fetched = response.responses[0].partitions[0].high_watermark;
        if fetched == 10 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(fetched, 10);
}

#[tokio::test]
async fn pipelined_requests_all_get_their_own_responses() {
    let Some(kafka) = kafka() else { return };
    let client = Client::connect(kafka.plaintext(), ClientConfig::default().max_in_flight(5)).await.unwrap();
    let tasks: Vec<_> = (0..64)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let name = format!("no-such-topic-{i}");
                let request = MetadataRequest {
                    topics: Some(vec![MetadataRequestTopic { name: Some(name.as_str().into()), ..Default::default() }]),
                    ..Default::default()
                };
                let response = client.send(request).await.unwrap();
                assert_eq!(
                    response.topics[0].name.as_deref(),
                    Some(name.as_str()),
                    "a response matched to its request"
                );
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

#[tokio::test]
async fn a_response_over_the_frame_limit_closes_the_connection_for_everyone() {
    let Some(kafka) = kafka() else { return };
    // ApiVersions' answer fits in 4 KiB; a Metadata answer with the cluster's topics does not
    // fit in 64 bytes.
    let client = Client::connect(kafka.plaintext(), ClientConfig::default().max_frame_size(4096)).await.unwrap();
    let small = Client::connect(kafka.plaintext(), ClientConfig::default()).await.unwrap();
    create_topic(&small, "frame-limit-topic-with-a-long-name", 1).await;
    let big = ClientConfig::default().max_frame_size(64);
    let err = Client::connect(kafka.plaintext(), big).await.unwrap_err();
    assert!(matches!(err, Error::FrameTooLarge { max: 64, .. }), "{err}");
    drop(client);
}

#[tokio::test]
async fn sasl_plain_and_scram_logins() {
    let Some(kafka) = kafka() else { return };
    for credentials in [
        Credentials::plain(PLAIN_USER.0, PLAIN_USER.1),
        Credentials::scram_sha256(SCRAM_SHA256_USER.0, SCRAM_SHA256_USER.1),
        Credentials::scram_sha512(SCRAM_SHA512_USER.0, SCRAM_SHA512_USER.1),
    ] {
        let what = format!("{credentials:?}");
        let client = Client::connect(kafka.sasl(), ClientConfig::default().sasl(credentials)).await.expect(&what);
        let metadata = client.send(MetadataRequest::default()).await.expect(&what);
        assert_eq!(metadata.cluster_id.as_deref(), Some(kafka.cluster_id.as_str()), "{what}");
    }
}

#[tokio::test]
async fn a_wrong_password_is_a_typed_error_with_kafkas_message() {
    let Some(kafka) = kafka() else { return };
    for credentials in
        [Credentials::plain(PLAIN_USER.0, "wrong"), Credentials::scram_sha256(SCRAM_SHA256_USER.0, "wrong")]
    {
        let err = Client::connect(kafka.sasl(), ClientConfig::default().sasl(credentials)).await.unwrap_err();
        match err {
            Error::Authentication { code, message } => {
                assert_eq!(code, ErrorCode::SASL_AUTHENTICATION_FAILED);
                assert!(message.contains("Authentication failed"), "Kafka's message: {message}");
            }
            other => panic!("expected an authentication error, got {other}"),
        }
    }
    // A user the broker does not know.
    let stranger = Credentials::scram_sha512("nobody", "x");
    let err = Client::connect(kafka.sasl(), ClientConfig::default().sasl(stranger)).await.unwrap_err();
    assert!(matches!(err, Error::Authentication { .. }), "{err}");
}

#[tokio::test]
async fn a_sasl_listener_without_sasl_closes_the_connection() {
    let Some(kafka) = kafka() else { return };
    // ApiVersions is allowed before authentication; anything else is not.
    let client = Client::connect(kafka.sasl(), ClientConfig::default()).await.unwrap();
    let err = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(err, Error::Closed(_) | Error::Io(_)), "{err}");
    // Every later request gets the same answer, at once.
    let again = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(again, Error::Closed(_) | Error::Io(_)), "{again}");
}

/// A client id over its produce quota: Kafka answers with `throttle_time_ms` (KIP-219), the
/// client reports it, and its next request is written only once the throttle has passed.
#[tokio::test]
async fn a_throttled_client_reports_the_quota_and_waits_it_out() {
    use kwire::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
    use kwire::messages::AlterClientQuotasRequest;
    let Some(kafka) = kafka() else { return };
    let client_id = format!("throttled-{}", std::process::id());
    let admin = client(kafka).await;
    let quota = AlterClientQuotasRequest {
        entries: vec![EntryData {
            entity: vec![EntityData {
                entity_type: "client-id".into(),
                entity_name: Some(client_id.as_str().into()),
                ..Default::default()
            }],
            ops: vec![OpData { key: "producer_byte_rate".into(), value: 2048.0, remove: false, ..Default::default() }],
            ..Default::default()
        }],
        validate_only: false,
        ..Default::default()
    };
    let answer = admin.send(quota).await.unwrap();
    assert!(answer.entries.iter().all(|e| e.error_code == ErrorCode::NONE), "{answer:?}");
    let topic = "throttled";
    let topic_id = create_topic(&admin, topic, 1).await;

    let throttled = Client::connect(kafka.plaintext(), ClientConfig::default().client_id(&client_id)).await.unwrap();
    // Quotas reach the broker's cache shortly after the controller takes them: produce until
    // one answer is throttled (about 26 KB a round against 2 KiB/s over Kafka's window of about 11 s).
    let mut throttle_ms = 0;
    for round in 0..20 {
        let request = produce_request(topic, topic_id, 0, batch(Compression::None, 300, &format!("t{round}")), -1);
        let sent = throttled.send_kind(request.into(), throttled.version_of(ApiKey::Produce).unwrap()).await.unwrap();
        let received = sent.expect("acks=-1 is answered");
        throttle_ms = received.throttle_time_ms().expect("Produce v1+ has throttle_time_ms");
        let produced = received.into_typed::<kwire::messages::ProduceRequest>().unwrap();
        assert_eq!(produced.responses[0].partition_responses[0].error_code, ErrorCode::NONE);
        if throttle_ms > 0 {
            println!("round {round}: throttled for {throttle_ms} ms");
            break;
        }
    }
    assert!(throttle_ms > 0, "Kafka never throttled {client_id}");
    let until = throttled.throttled_until().expect("the client reports the throttle");
    throttled.send(MetadataRequest::default()).await.unwrap();
    assert!(std::time::Instant::now() >= until, "answered before the throttle of {throttle_ms} ms had passed");
    assert_eq!(throttled.throttled_until(), None, "the throttle is over");
}

fn tls() -> kwire_connection::TlsConfig {
    kwire_connection::TlsConfig::with_ca_pem(kafka().unwrap().ca_pem.as_bytes()).unwrap()
}

/// Kafka's SSL listener: the handshake checks the broker's certificate against the test CA
/// and the address dialled; a client, and a `Cluster` whose brokers come from Metadata, then
/// produce and fetch over TLS.
#[tokio::test]
async fn tls_to_the_ssl_listener() {
    let Some(kafka) = kafka() else { return };
    let client = Client::connect(kafka.ssl(), ClientConfig::default().tls(tls())).await.expect("TLS to Kafka");
    let topic = "over-tls";
    let topic_id = create_topic(&client, topic, 1).await;
    let records = batch(Compression::Zstd, 100, "tls");
    let expected = records.to_vec(Default::default()).unwrap();
    let response = client.send(produce_request(topic, topic_id, 0, records, -1)).await.unwrap();
    assert_eq!(response.responses[0].partition_responses[0].error_code, ErrorCode::NONE);

    let cluster = kwire_connection::Cluster::connect(&[&kafka.ssl().to_string()], ClientConfig::default().tls(tls()))
        .await
        .unwrap();
    let produced =
        cluster.produce(topic, 0, batch(Compression::Lz4, 10, "tls2"), -1, Duration::from_secs(30)).await.unwrap();
    assert_eq!(produced.base_offset, 100);
    let leader = cluster.leader(topic, 0).await.unwrap();
    assert_eq!(leader.peer(), kafka.ssl(), "the SSL listener, as Metadata advertises it");
    let fetched = leader.send(fetch_request(topic, topic_id, 0, 0)).await.unwrap();
    let records = fetched.responses[0].partitions[0].records.clone().unwrap();
    records.verify().unwrap();
    let got: Vec<_> = records.records().map(Result::unwrap).collect();
    assert!(got.len() >= 100, "{} records", got.len());
    for (ours, theirs) in expected.iter().zip(&got) {
        assert_eq!((&ours.key, &ours.value, &ours.headers), (&theirs.key, &theirs.value, &theirs.headers));
    }
}

#[tokio::test]
async fn sasl_scram_over_tls() {
    let Some(kafka) = kafka() else { return };
    let config =
        ClientConfig::default().tls(tls()).sasl(Credentials::scram_sha512(SCRAM_SHA512_USER.0, SCRAM_SHA512_USER.1));
    let client = Client::connect(kafka.sasl_ssl(), config).await.expect("SASL_SSL");
    let metadata = client.send(MetadataRequest::default()).await.unwrap();
    assert_eq!(metadata.cluster_id.as_deref(), Some(kafka.cluster_id.as_str()));
    let wrong = ClientConfig::default().tls(tls()).sasl(Credentials::plain(PLAIN_USER.0, "wrong"));
    match Client::connect(kafka.sasl_ssl(), wrong).await {
        Err(Error::Authentication { code, .. }) => assert_eq!(code, ErrorCode::SASL_AUTHENTICATION_FAILED),
        other => panic!("expected an authentication error, got {other:?}"),
    }
}

/// A certificate for another name, a CA that did not sign it, TLS to a plaintext listener:
/// each a typed error, never a connection.
#[tokio::test]
async fn tls_refuses_what_it_cannot_trust() {
    let Some(kafka) = kafka() else { return };
    let wrong_name = ClientConfig::default().tls(tls().server_name("kafka.example.com").unwrap());
    match Client::connect(kafka.ssl(), wrong_name).await {
        Err(Error::Tls(why)) => assert!(why.contains("certificate"), "{why}"),
        other => panic!("a certificate for another name: {other:?}"),
    }
    // Another CA, of the same (empty) name: the signature does not verify.
    let other = kwire_connection::TlsConfig::with_ca_pem(kwire_test_support::kafka::other_ca_pem().as_bytes()).unwrap();
    match Client::connect(kafka.ssl(), ClientConfig::default().tls(other)).await {
        Err(Error::Tls(why)) => assert!(why.contains("invalid peer certificate"), "{why}"),
        other => panic!("an untrusted CA: {other:?}"),
    }
    match Client::connect(kafka.plaintext(), ClientConfig::default().tls(tls())).await {
        Err(Error::Tls(_) | Error::Closed(_) | Error::Io(_)) => {}
        other => panic!("TLS to a plaintext listener: {other:?}"),
    }
}
