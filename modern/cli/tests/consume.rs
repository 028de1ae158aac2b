//! `kwire consume`, `kwire metadata` and `kwire groups` against the in-process cluster (the
//! `kwire-fake` library, on loopback ports): records printed with kcat's format tokens and as
//! JSON, counts and offsets, a group read to the end and its lag, the cluster listed.

use std::process::Command;
use std::time::Duration;

use kwire::Records;
use kwire_connection::{ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression, Header};

async fn cluster_with_records() -> (FakeCluster, String) {
    let fake =
        FakeCluster::start(FakeConfig::default().nodes(2).group_initial_rebalance_delay(Duration::ZERO)).await.unwrap();
    fake.create_topic("orders", 2).unwrap();
    let bootstrap = fake.bootstrap_servers();
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    for partition in 0..2 {
        let mut batch = BatchBuilder::new(BatchOptions::new(2, Compression::Zstd)).unwrap();
        for i in 0..5 {
            let headers = [Header::new("h", Some(format!("{partition}")))];
            batch
                .append(
                    1_000 + i,
                    Some(format!("k{i}").as_bytes()),
                    Some(format!("v{partition}-{i}").as_bytes()),
                    &headers,
                )
                .unwrap();
        }
        let records = Records::from_bytes(batch.build().unwrap());
        cluster.produce("orders", partition, records, -1, Duration::from_secs(5)).await.unwrap();
    }
    (fake, bootstrap)
}

/// Runs `kwire` with `args` off the async runtime (the in-process cluster serves meanwhile).
async fn kwire(args: &[&str]) -> (String, String, bool) {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    let out =
        tokio::task::spawn_blocking(move || Command::new(env!("CARGO_BIN_EXE_kwire")).args(&args).output().unwrap())
            .await
            .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consume_prints_with_kcats_formats_and_stops_where_asked() {
    let (fake, b) = cluster_with_records().await;
    let (out, err, ok) =
        kwire(&["consume", "-b", &b, "-t", "orders", "-p", "1", "-e", "-f", "%t/%p@%o %k=%s [%h] %S\\n"]).await;
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&"orders/1@0 k0=v1-0 [h=1] 4"), "{out}");
    assert_eq!(lines.len(), 5);
    assert!(err.contains("Reached end of topic orders [1] at offset 5"), "{err}");

    let (out, _, ok) = kwire(&["consume", "-b", &b, "-t", "orders", "-c", "3", "-q"]).await;
    assert!(ok);
    assert_eq!(out.lines().count(), 3, "{out}");

    let (out, _, ok) =
        kwire(&["consume", "-b", &b, "-t", "orders", "-p", "0", "-o", "-2", "-e", "-q", "-K", ":"]).await;
    assert!(ok);
    assert_eq!(out, "k3:v0-3\nk4:v0-4\n");

    let (out, _, ok) = kwire(&["consume", "-b", &b, "-t", "orders", "-p", "0", "-o", "s@1003", "-e", "-q", "-J"]).await;
    assert!(ok);
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["offset"], 3);
    assert_eq!(
        (first["key"].as_str(), first["payload"].as_str(), first["ts"].as_i64()),
        (Some("k3"), Some("v0-3"), Some(1003))
    );
    assert_eq!(first["headers"], serde_json::json!(["h", "0"]));

    let (_, err, ok) = kwire(&["consume", "-b", &b, "-t", "missing", "-e"]).await;
    assert!(!ok && err.contains("missing"), "{err}");
    let (_, err, ok) = kwire(&["consume", "-b", &b, "-t", "orders", "-X", "fetch.max.bytes=lots"]).await;
    assert!(!ok && err.contains("fetch.max.bytes"), "{err}");
    let (_, err, ok) = kwire(&["consume", "-b", &b, "-t", "orders", "-f", "%z"]).await;
    assert!(!ok && err.contains("%z"), "{err}");
    fake.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_reads_to_the_end_and_groups_shows_no_lag() {
    let (fake, b) = cluster_with_records().await;
    let (out, err, ok) =
        kwire(&["consume", "-b", &b, "-G", "billing", "orders", "-e", "-J", "-X", "enable.auto.commit=true"]).await;
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 10, "{out}");

    let (out, err, ok) = kwire(&["groups", "-b", &b, "-J"]).await;
    assert!(ok, "{err}");
    let groups: serde_json::Value = serde_json::from_str(&out).unwrap();
    let billing = groups.as_array().unwrap().iter().find(|g| g["group"] == "billing").expect("listed");
    assert_eq!(billing["state"], "Empty", "{billing}");
    let offsets = billing["offsets"].as_array().unwrap();
    assert_eq!(offsets.len(), 2);
    assert!(offsets.iter().all(|o| o["committed"] == 5 && o["end"] == 5 && o["lag"] == 0), "{billing}");
    let (text, _, ok) = kwire(&["groups", "-b", &b, "-g", "billing"]).await;
    assert!(ok && text.starts_with("group billing (classic, Empty"), "{text}");

    let (out, err, ok) = kwire(&["metadata", "-b", &b, "-J"]).await;
    assert!(ok, "{err}");
    let metadata: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(metadata["brokers"].as_array().unwrap().len(), 2);
    let topics = metadata["topics"].as_array().unwrap();
    let orders = topics.iter().find(|t| t["topic"] == "orders").unwrap();
    assert_eq!(
        (orders["partitions"].as_array().unwrap().len(), &orders["is_internal"]),
        (2, &serde_json::json!(false))
    );
    let offsets_topic = topics.iter().find(|t| t["topic"] == "__consumer_offsets").expect("the group committed");
    assert_eq!(offsets_topic["is_internal"], true);
    let (text, _, ok) = kwire(&["metadata", "-b", &b, "-t", "orders"]).await;
    assert!(
        ok && text.contains("topic \"orders\" with 2 partitions") && text.contains("partition 1, leader"),
        "{text}"
    );
    fake.shutdown().await;
}
