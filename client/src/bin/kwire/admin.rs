//! `kwire topics create|alter|delete|describe` (ModifyTopic) and `kwire zk dump|check`.

use std::time::Duration;

use kafka_wire_client::admin::{self, WalkedNode};
use kafka_wire_client::zk::ZkCluster;
use kafka_wire_generated::{ModifyTopicRequest, ModifyTopicResponse};
use kafka_wire_zk::TypedValue;

use crate::cli::{Cluster, TopicAlterArgs, TopicCreateArgs, TopicsCommand, ZkCommand};
use crate::commands::{CmdResult, DEFAULT_BROKER};

/// How long one ModifyTopic exchange may take (CREATE writes files on every broker).
const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

pub async fn topics(cluster: &Cluster, command: TopicsCommand) -> CmdResult {
    let (operation, topic, properties) = match command {
        TopicsCommand::List => return crate::commands::topics(cluster).await,
        TopicsCommand::Create(a) => ("CREATE", a.topic.clone(), create_properties(&a)),
        TopicsCommand::Alter(a) => ("ALTER", a.topic.clone(), alter_properties(&a)?),
        TopicsCommand::Delete(a) => ("DELETE", a.topic, Vec::new()),
        TopicsCommand::Describe(a) => ("DESCRIBE", a.topic, Vec::new()),
    };
    let properties: Vec<(&str, Option<&str>)> = properties.iter().map(|(k, v)| (k.as_str(), v.as_deref())).collect();
    let resp = send(cluster, &admin::request(operation, &topic, &properties)).await?;
    if resp.error_code != 0 {
        let why = resp.error_message.as_ref().map_or("no message", |m| m.as_str());
        return Err(
            format!("{} {topic:?} refused: {why} (error code {})", operation.to_lowercase(), resp.error_code).into()
        );
    }
    match operation {
        "DELETE" => println!("deleted topic {topic}"),
        _ => print!("{}", admin::describe_table(&resp)),
    }
    Ok(())
}

fn create_properties(a: &TopicCreateArgs) -> Vec<(String, Option<String>)> {
    let partitions = a.partitions.map(|n| ("partitions".to_owned(), Some(n.to_string())));
    partitions.into_iter().chain(a.configs.iter().map(|(k, v)| (k.clone(), Some(v.clone())))).collect()
}

fn alter_properties(a: &TopicAlterArgs) -> CmdResult<Vec<(String, Option<String>)>> {
    if a.configs.is_empty() && a.delete_configs.is_empty() {
        return Err("topics alter: give --config NAME=VALUE or --delete-config NAME".into());
    }
    if let Some(name) = a.delete_configs.iter().find(|d| a.configs.iter().any(|(k, _)| k == *d)) {
        return Err(format!("topics alter: {name:?} is both set and deleted").into());
    }
    let set = a.configs.iter().map(|(k, v)| (k.clone(), Some(v.clone())));
    Ok(set.chain(a.delete_configs.iter().map(|k| (k.clone(), None))).collect())
}

/// To --broker, else to a live broker found through --zookeeper, else to the default broker.
async fn send(cluster: &Cluster, req: &ModifyTopicRequest) -> CmdResult<ModifyTopicResponse> {
    if let Some(addr) = cluster.broker.first() {
        return Ok(admin::modify_topic(addr, req, ADMIN_TIMEOUT).await?);
    }
    match &cluster.zookeeper {
        Some(connect) => {
            let zk = ZkCluster::connect(connect).await?;
            Ok(admin::modify_topic_via_zookeeper(zk.client(), req, ADMIN_TIMEOUT).await?)
        }
        None => Ok(admin::modify_topic(DEFAULT_BROKER, req, ADMIN_TIMEOUT).await?),
    }
}

pub async fn zk(cluster: &Cluster, command: ZkCommand) -> CmdResult {
    let Some(connect) = &cluster.zookeeper else {
        return Err("zk reads ZooKeeper: give --zookeeper CONNECT".into());
    };
    let zk = ZkCluster::connect(connect).await?;
    let nodes = admin::walk(zk.client()).await?;
    match command {
        ZkCommand::Dump => {
            for n in &nodes {
                println!("{}", dump_line(n));
            }
            Ok(())
        }
        ZkCommand::Check => {
            let bad: Vec<&WalkedNode> = nodes.iter().filter(|n| n.result.is_err()).collect();
            for n in &bad {
                println!("{}", dump_line(n));
            }
            match bad.len() {
                0 => {
                    println!("{} nodes checked, all valid", nodes.len());
                    Ok(())
                }
                1 => Err("1 node does not match its schema".into()),
                n => Err(format!("{n} nodes do not match their schema").into()),
            }
        }
    }
}

/// `PATH<TAB>KIND<TAB>DATA`: DATA is the node's value as Kafka writes it (JSON, or 0.7's plain
/// text), re-encoded from the decoded value so that equal values print alike; `-` for an empty
/// node. A node that does not match its schema is `PATH<TAB>INVALID<TAB>REASON`.
fn dump_line(n: &WalkedNode) -> String {
    match &n.result {
        Ok(v) => {
            let data = v.to_bytes();
            let data = if data.is_empty() { "-".to_owned() } else { String::from_utf8_lossy(&data).into_owned() };
            format!("{}\t{}\t{data}", n.path, kind(v))
        }
        Err(e) => format!("{}\tINVALID\t{e}", n.path),
    }
}

fn kind(v: &TypedValue) -> &'static str {
    match v {
        TypedValue::Empty => "empty",
        TypedValue::Broker(_) => "broker",
        TypedValue::Topic(_) => "topic",
        TypedValue::PartitionState(_) => "partition-state",
        TypedValue::LegacyPartitionCount(_) => "partition-count",
        TypedValue::Controller(_) => "controller",
        TypedValue::ControllerEpoch(_) => "controller-epoch",
        TypedValue::ConsumerRegistration(_) => "consumer-registration",
        TypedValue::ConsumerOwner(_) => "consumer-owner",
        TypedValue::ConsumerOffset(_) => "consumer-offset",
        TypedValue::ReassignPartitions(_) => "reassign-partitions",
        TypedValue::PreferredReplicaElection(_) => "preferred-replica-election",
        TypedValue::DeleteTopics(_) => "delete-topics",
        TypedValue::TopicConfig(_) => "topic-config",
        TypedValue::ConfigChange(_) => "config-change",
    }
}
