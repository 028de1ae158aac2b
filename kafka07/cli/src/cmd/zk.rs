//! `kwire07 zk`: Kafka's nodes in ZooKeeper, dumped or checked against their schemas.

use clap::Subcommand;
use kwire07_client::admin::{self, WalkedNode};
use kwire07_client::zk::ZkCluster;
use kwire07_zk::TypedValue;

use crate::endpoints::{CmdResult, Endpoints};

#[derive(Debug, Subcommand)]
pub enum ZkCommand {
    /// Print every Kafka node, one per line: `PATH<TAB>KIND<TAB>DATA`, DATA being the node's
    /// value as Kafka writes it (JSON, or 0.7's plain text; `-` when empty), or
    /// `PATH<TAB>INVALID<TAB>REASON` for a node that does not match its schema.
    Dump,
    /// Print every node that does not match its schema; exit status 1 if there is any.
    Check,
}

pub async fn run(cluster: &Endpoints, command: ZkCommand) -> CmdResult {
    let Some(connect) = &cluster.zookeeper else {
        return Err("zk reads ZooKeeper: give --zookeeper CONNECT".into());
    };
    let zk = ZkCluster::connect(connect).await?;
    let nodes = admin::walk(zk.client()).await?;
    match command {
        ZkCommand::Dump => {
            for n in &nodes {
                outln!("{}", dump_line(n));
            }
            Ok(())
        }
        ZkCommand::Check => {
            let bad: Vec<&WalkedNode> = nodes.iter().filter(|n| n.result.is_err()).collect();
            for n in &bad {
                outln!("{}", dump_line(n));
            }
            match bad.len() {
                0 => {
                    outln!("{} nodes checked, all valid", nodes.len());
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
        TypedValue::Kafka07PartitionCount(_) => "partition-count",
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
