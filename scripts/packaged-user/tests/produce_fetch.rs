//! What a user of the published crates does first: an in-process cluster (kwire-fake), a topic
//! created through the connection with the generated messages, a batch produced and fetched back.

use std::time::Duration;

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::CreateTopicsRequest;
use kwire::{ErrorCode, Records, StrBytes, TopicName};
use kwire_connection::{requests, ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression, Header, RecordsExt};

#[tokio::test]
async fn create_a_topic_produce_a_batch_and_fetch_it_back() -> Result<(), Box<dyn std::error::Error>> {
    let fake = FakeCluster::start(FakeConfig::default().nodes(3)).await?;
    let bootstrap = fake.bootstrap_servers();
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await?;

    let create = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: TopicName(StrBytes::from_static_str("orders")),
            num_partitions: 3,
            replication_factor: 3,
            ..Default::default()
        }],
        timeout_ms: 10_000,
        ..Default::default()
    };
    let created = cluster.any().await?.send(create).await?;
    assert_eq!(created.topics.len(), 1);
    assert_eq!(created.topics[0].error_code, ErrorCode::NONE);

    let mut batch = BatchBuilder::new(BatchOptions::new(2, Compression::Lz4))?;
    let headers = [Header { key: "source".into(), value: Some("packaged".into()) }];
    batch.append(1_700_000_000_000, Some(b"order-1"), Some(b"paid"), &headers)?;
    let written = cluster.produce("orders", 2, Records::from_bytes(batch.build()?), -1, Duration::from_secs(10)).await?;
    assert_eq!(written.base_offset, 0);

    let leader = cluster.leader("orders", 2).await?;
    let fetch = requests::fetch("orders", cluster.topic_id("orders").await?, 2, 0);
    let response = leader.send(fetch).await?;
    let records = response.responses[0].partitions[0].records.clone().unwrap_or_default();
    let fetched: Vec<_> = records.records().collect::<Result<_, _>>()?;
    assert_eq!(fetched.len(), 1);
    assert_eq!(fetched[0].key.as_deref(), Some(&b"order-1"[..]));
    assert_eq!(fetched[0].value.as_deref(), Some(&b"paid"[..]));
    assert_eq!(&fetched[0].headers[0].key[..], b"source");
    fake.shutdown().await;
    Ok(())
}
