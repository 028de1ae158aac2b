//! `kwire metadata`: the cluster as Metadata describes it (kcat -L): brokers with their racks
//! and the controller, topics with their ids and internal flag, partitions with their leader,
//! leader epoch, replicas, in-sync and offline replicas; as text or as JSON (`-J`).

use clap::Args;
use kwire_connection::cluster::Metadata;
use kwire_connection::{ClientConfig, Cluster};

use crate::cmd::CmdResult;

#[derive(Debug, Args)]
#[command(about = "List brokers, topics and partitions, as kcat -L does")]
pub struct MetadataArgs {
    /// Bootstrap brokers, HOST:PORT, comma-separated.
    #[arg(short = 'b', long = "brokers", value_name = "HOST:PORT,...")]
    pub brokers: String,
    /// Only these topics (repeatable); every topic otherwise.
    #[arg(short = 't', long = "topic")]
    pub topics: Vec<String>,
    /// As JSON.
    #[arg(short = 'J', long = "json")]
    pub json: bool,
}

pub async fn run(a: MetadataArgs) -> CmdResult {
    let servers: Vec<&str> = a.brokers.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default().client_id("kwire-metadata")).await?;
    if a.topics.is_empty() {
        cluster.refresh_all().await?;
    } else {
        let topics: Vec<&str> = a.topics.iter().map(String::as_str).collect();
        cluster.refresh_topics(&topics, false).await?;
    }
    let metadata = cluster.metadata();
    let mut names: Vec<&String> =
        metadata.topics.keys().filter(|t| a.topics.is_empty() || a.topics.contains(t)).collect();
    names.sort();
    let text = if a.json { json(&metadata, &names).to_string() + "\n" } else { text(&metadata, &names) };
    use std::io::Write;
    match std::io::stdout().write_all(text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// A topic id as Kafka prints it: its 16 bytes in URL-safe base64, unpadded.
fn topic_id(id: kwire::Uuid) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

fn list(ids: &[i32]) -> String {
    ids.iter().map(ToString::to_string).collect::<Vec<_>>().join(",")
}

fn text(metadata: &Metadata, names: &[&String]) -> String {
    let mut out = String::new();
    let cluster = metadata.cluster_id.as_deref().unwrap_or("?");
    out += &format!(
        "Metadata for {} (cluster {cluster}):\n",
        if names.len() == 1 { names[0].as_str() } else { "all topics" }
    );
    out += &format!(" {} brokers:\n", metadata.brokers.len());
    for b in metadata.brokers.values() {
        let controller = if b.id == metadata.controller_id { " (controller)" } else { "" };
        let rack = b.rack.as_deref().map(|r| format!(" rack {r}")).unwrap_or_default();
        out += &format!("  broker {} at {}{rack}{controller}\n", b.id, b.address());
    }
    out += &format!(" {} topics:\n", names.len());
    for name in names {
        let t = &metadata.topics[*name];
        if t.error != kwire::ErrorCode::NONE {
            out += &format!("  topic \"{name}\" Broker: {}\n", t.error);
            continue;
        }
        let internal = if t.is_internal { " (internal)" } else { "" };
        out +=
            &format!("  topic \"{name}\" with {} partitions{internal} (id {}):\n", t.partitions.len(), topic_id(t.id));
        for p in &t.partitions {
            let error =
                if p.error == kwire::ErrorCode::NONE { String::new() } else { format!(", Broker: {}", p.error) };
            out += &format!(
                "    partition {}, leader {}, epoch {}, replicas: {}, isrs: {}{}{error}\n",
                p.partition,
                p.leader,
                p.leader_epoch,
                list(&p.replicas),
                list(&p.isr),
                if p.offline.is_empty() { String::new() } else { format!(", offline: {}", list(&p.offline)) },
            );
        }
    }
    out
}

fn json(metadata: &Metadata, names: &[&String]) -> serde_json::Value {
    let ids = |ids: &[i32]| ids.iter().map(|id| serde_json::json!({ "id": id })).collect::<Vec<_>>();
    serde_json::json!({
        "cluster_id": metadata.cluster_id,
        "controllerid": metadata.controller_id,
        "brokers": metadata.brokers.values().map(|b| serde_json::json!({
            "id": b.id,
            "name": b.address(),
            "rack": b.rack,
        })).collect::<Vec<_>>(),
        "topics": names.iter().map(|name| {
            let t = &metadata.topics[*name];
            let mut topic = serde_json::json!({
                "topic": name,
                "topic_id": topic_id(t.id),
                "is_internal": t.is_internal,
                "partitions": t.partitions.iter().map(|p| {
                    let mut partition = serde_json::json!({
                        "partition": p.partition,
                        "leader": p.leader,
                        "leader_epoch": p.leader_epoch,
                        "replicas": ids(&p.replicas),
                        "isrs": ids(&p.isr),
                        "offline": ids(&p.offline),
                    });
                    if p.error != kwire::ErrorCode::NONE {
                        partition["error"] = serde_json::Value::String(p.error.to_string());
                    }
                    partition
                }).collect::<Vec<_>>(),
            });
            if t.error != kwire::ErrorCode::NONE {
                topic["error"] = serde_json::Value::String(t.error.to_string());
            }
            topic
        }).collect::<Vec<_>>(),
    })
}
