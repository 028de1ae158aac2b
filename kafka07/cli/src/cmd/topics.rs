//! `kwire07 topics`: list, create, alter, describe and delete topics (ModifyTopic), or list
//! what ZooKeeper knows.

use std::io::Write;
use std::time::Duration;

use clap::{Args, Subcommand};
use kwire07_admin_messages::{ModifyTopicRequest, ModifyTopicResponse};
use kwire07_client::admin;
use kwire07_client::zk::ZkCluster;
use kwire07_client::BrokerConnection;

use crate::endpoints::{CmdResult, Endpoints, DEFAULT_BROKER};
use crate::parse::{parse_partition_count, parse_setting};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct TopicsArgs {
    #[command(subcommand)]
    pub command: Option<TopicsCommand>,
}

#[derive(Debug, Subcommand)]
pub enum TopicsCommand {
    /// List topics: with --zookeeper what ZooKeeper knows (brokers, topics, partitions,
    /// consumer groups and their lag), else the broker's own topics (ModifyTopic LIST).
    List,
    /// Create a topic with its partitions and setting overrides.
    Create(TopicCreateArgs),
    /// Change a topic's setting overrides.
    Alter(TopicAlterArgs),
    /// Delete a topic, its logs and its settings.
    Delete(TopicNameArg),
    /// Show each setting of a topic and whether it is overridden or inherited.
    Describe(TopicNameArg),
}

#[derive(Debug, Args)]
pub struct TopicNameArg {
    pub topic: String,
}

#[derive(Debug, Args)]
pub struct TopicCreateArgs {
    pub topic: String,
    /// Number of partitions, 1 or more (default: the broker's num.partitions).
    #[arg(long, allow_hyphen_values = true, value_parser = parse_partition_count)]
    pub partitions: Option<i32>,
    /// A setting override NAME=VALUE (repeatable).
    #[arg(long = "config", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub configs: Vec<(String, String)>,
}

#[derive(Debug, Args)]
pub struct TopicAlterArgs {
    pub topic: String,
    /// Set an override NAME=VALUE (repeatable).
    #[arg(long = "config", value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub configs: Vec<(String, String)>,
    /// Remove an override, so the broker default applies again (repeatable).
    #[arg(long = "delete-config", value_name = "NAME")]
    pub delete_configs: Vec<String>,
}

/// How long one ModifyTopic exchange may take (CREATE writes files on every broker).
const ADMIN_TIMEOUT: Duration = Duration::from_secs(30);

pub async fn run(cluster: &Endpoints, args: TopicsArgs) -> CmdResult {
    let command = args.command.unwrap_or(TopicsCommand::List);
    let (operation, topic, properties) = match command {
        TopicsCommand::List => return list(cluster).await,
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
        "DELETE" => outln!("deleted topic {topic}"),
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
async fn send(cluster: &Endpoints, req: &ModifyTopicRequest) -> CmdResult<ModifyTopicResponse> {
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

/// `kwire07 topics` against one broker (no ZooKeeper): its own topics, through ModifyTopic LIST.
async fn broker_topics(cluster: &Endpoints) -> CmdResult {
    let addr = cluster.broker.first().map_or(DEFAULT_BROKER, String::as_str);
    let req = admin::request("LIST", "", &[]);
    let resp = admin::modify_topic(addr, &req, Duration::from_secs(30)).await?;
    if resp.error_code != 0 {
        let why = resp.error_message.as_ref().map_or("no message", |m| m.as_str());
        return Err(format!(
            "broker {addr} cannot list its topics: {why} (error code {}); with ZooKeeper, give --zookeeper",
            resp.error_code
        )
        .into());
    }
    let mut out = format!("topics on {addr} ({}):\n", resp.topics.len());
    for t in &resp.topics {
        let how = if t.configured { "configured" } else { "created by produce" };
        out.push_str(&format!("  {}  {} partitions  ({how})\n", t.name.as_str(), t.partitions));
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// `kwire07 topics` with no subcommand: with ZooKeeper the brokers, topics and groups it knows,
/// else the broker's own topics.
async fn list(cluster: &Endpoints) -> CmdResult {
    let Some(connect) = &cluster.zookeeper else {
        return broker_topics(cluster).await;
    };
    let zk = ZkCluster::connect(connect).await?;
    // A malformed registration is reported and skipped; the rest is still listed.
    let (brokers, unreadable) = zk.brokers_lenient().await?;
    for e in &unreadable {
        eprintln!("kwire07: warning: skipping {e}");
    }
    let mut out = String::new();
    out.push_str(&format!("brokers ({}):\n", brokers.len()));
    for b in brokers.values() {
        out.push_str(&format!("  {}  {}  (creator {})\n", b.id, b.addr(), b.creator));
    }
    let topics = zk.topics().await?;
    out.push_str(&format!("topics ({}):\n", topics.len()));
    for t in &topics {
        let counts = zk.topic_partition_counts(t).await?;
        let per: Vec<String> = counts.iter().map(|(b, n)| format!("broker {b}: {n}")).collect();
        let total: i32 = counts.values().sum();
        out.push_str(&format!("  {t}  {total} partitions  ({})\n", per.join(", ")));
    }
    let groups = zk.groups().await?;
    out.push_str(&format!("consumer groups ({}):\n", groups.len()));
    let mut conns: std::collections::BTreeMap<i32, Option<BrokerConnection>> = Default::default();
    for g in &groups {
        let members = zk.group_members(g).await?;
        out.push_str(&format!("  {g}  ({} members)\n", members.len()));
        for (id, sub) in &members {
            let s = match sub {
                Ok(s) => kwire07_client::zk::subscription_value(s),
                Err(e) => format!("unreadable: {e}"),
            };
            out.push_str(&format!("    member {id}  {s}\n"));
        }
        for t in zk.group_topics(g).await? {
            let committed = zk.group_offsets(g, &t).await?;
            let partitions = kwire07_client::assignment::sorted_partitions(&zk.topic_partition_counts(&t).await?);
            let mut all: Vec<_> = partitions.clone();
            for bp in committed.keys() {
                if !all.contains(bp) {
                    all.push(bp.clone());
                }
            }
            let mut total_lag = 0u64;
            for bp in &all {
                let owner = zk.data(&ZkCluster::owner_path(g, &t, bp)?).await?.unwrap_or_else(|| "-".into());
                let end = log_end(&mut conns, &brokers, &t, bp).await;
                let c = committed.get(bp).copied();
                let lag = match (end, c) {
                    (Some(e), Some(c)) => Some(e.saturating_sub(c)),
                    (Some(e), None) => Some(e),
                    _ => None,
                };
                total_lag += lag.unwrap_or(0);
                out.push_str(&format!(
                    "    {t} {}  committed {}  end {}  lag {}  owner {owner}\n",
                    bp.name(),
                    c.map_or("-".into(), |v| v.to_string()),
                    end.map_or("?".into(), |v| v.to_string()),
                    lag.map_or("?".into(), |v| v.to_string()),
                ));
            }
            out.push_str(&format!("    {t} total lag {total_lag} bytes\n"));
        }
    }
    std::io::stdout().lock().write_all(out.as_bytes())?;
    Ok(())
}

/// A partition's log end (OFFSETS −1), or `None` when its broker cannot be asked.
async fn log_end(
    conns: &mut std::collections::BTreeMap<i32, Option<BrokerConnection>>,
    brokers: &std::collections::BTreeMap<i32, kwire07_client::zk::BrokerInfo>,
    topic: &str,
    bp: &kwire07_client::assignment::BrokerPartition,
) -> Option<u64> {
    let conn = match conns.entry(bp.broker_id) {
        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::btree_map::Entry::Vacant(e) => {
            let conn = match brokers.get(&bp.broker_id) {
                Some(b) => BrokerConnection::connect(&b.addr()).await.ok(),
                None => None,
            };
            e.insert(conn)
        }
    };
    let conn = conn.as_mut()?;
    conn.offset_at(topic, bp.partition, -1).await.ok()
}
