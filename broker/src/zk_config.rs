//! Topic configuration in ZooKeeper (seed 003, Kafka 0.8.1's layout):
//!
//! * `/config/topics/<topic>` = `{"version":1,"config":{…}}`: only the overrides.
//! * `/config/changes/config_change_<seq>` = `"<topic>"` (a JSON string): created with every
//!   change, in the same transaction as the change itself.
//!
//! Every broker watches `/config/changes`; for each new notification it reads the topic's
//! current `/config/topics/<topic>` and applies it (or, when the node is gone, deletes the
//! topic here). At start-up and after a session expiry a broker applies every topic's
//! configuration node, then continues with the notifications newer than the last it handled.
//! Notifications older than [`CHANGE_EXPIRY`] are removed, as Kafka's `TopicConfigManager` does.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_wire_generated::modify_topic_response::TopicConfig as ConfigEntry;
use kafka_wire_zk::{config_change_create_path, ConfigChange, Container, NodeKind, TopicConfig, TopicName};
use tracing::{debug, info, warn};
use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, Error as ZkError, MultiWriteError, OneshotWatcher};

use crate::admin::{altered, apply_local_async, describe, AdminError, Checked, Operation};
use crate::state::BrokerState;
use crate::topic_settings::Overrides;

/// How long change notifications are kept (Kafka: 15 minutes).
pub const CHANGE_EXPIRY: Duration = Duration::from_secs(15 * 60);

fn persistent() -> CreateOptions<'static> {
    CreateMode::Persistent.with_acls(Acls::anyone_all())
}

fn sequential() -> CreateOptions<'static> {
    CreateMode::PersistentSequential.with_acls(Acls::anyone_all())
}

/// `/config/topics/<topic>`; a name that cannot be a topic is an error naming it.
pub fn topic_config_path(topic: &str) -> Result<String, String> {
    let topic = TopicName::new(topic).map_err(|e| e.to_string())?;
    Ok(NodeKind::TopicConfig { topic }.path())
}

fn changes_path() -> String {
    Container::ConfigChanges.path()
}

fn zk_err<'a>(what: &'a str, path: &'a str) -> impl FnOnce(ZkError) -> String + 'a {
    move |e| format!("ZooKeeper {what} {path}: {e}")
}

/// Creates `/config/topics` and `/config/changes` if missing.
pub async fn ensure_paths(client: &Client) -> Result<(), String> {
    for p in [Container::ConfigTopics.path(), Container::ConfigChanges.path()] {
        client.mkdir(&p, &persistent()).await.map_err(zk_err("create", &p))?;
    }
    Ok(())
}

/// The topic's overrides and node version; `None` when it has no configuration node.
pub async fn read_config(client: &Client, topic: &str) -> Result<Option<(Overrides, i32)>, String> {
    let path = topic_config_path(topic)?;
    match client.get_data(&path).await {
        Ok((data, stat)) => {
            let cfg = TopicConfig::parse(&path, &data).map_err(|e| e.to_string())?;
            let o = Overrides::from_map(&cfg.config).map_err(|e| format!("{path}: {e}"))?;
            Ok(Some((o, stat.version)))
        }
        Err(ZkError::NoNode) => Ok(None),
        Err(e) => Err(zk_err("read", &path)(e)),
    }
}

/// Reads the topic's configuration and applies it here (deleting the topic if it has none).
pub async fn sync_topic(client: &Client, state: &Arc<BrokerState>, topic: &str) -> Result<(), String> {
    let config = read_config(client, topic).await?.map(|(o, _)| o);
    apply_local_async(state, topic, config).await
}

/// Applies every topic's configuration node (start-up, after a session expiry).
pub async fn sync_all(client: &Client, state: &Arc<BrokerState>) -> Result<(), String> {
    ensure_paths(client).await?;
    let config_topics = Container::ConfigTopics.path();
    let topics = client.list_children(&config_topics).await.map_err(zk_err("list", &config_topics))?;
    let count = topics.len();
    for topic in topics {
        if TopicName::new(topic.as_str()).is_err() {
            warn!(topic, "ignoring {config_topics}/{topic}: not a valid topic name");
            continue;
        }
        if let Err(e) = sync_topic(client, state, &topic).await {
            warn!(topic, "cannot apply the topic configuration: {e}");
        }
    }
    info!(topics = count, "applied the topic configuration from ZooKeeper");
    Ok(())
}

/// The sequence number of a `config_change_<seq>` node.
fn change_seq(name: &str) -> Option<i64> {
    kafka_wire_zk::config_change_sequence(name).map(i64::from)
}

/// Highest notification sequence present (−1 when none), and a watch on new ones.
pub async fn watch_changes(client: &Client) -> Result<(i64, OneshotWatcher), String> {
    let (children, _, watcher) =
        client.get_and_watch_children(&changes_path()).await.map_err(zk_err("watch", &changes_path()))?;
    Ok((children.iter().filter_map(|c| change_seq(c)).max().unwrap_or(-1), watcher))
}

/// Handles every notification newer than `last` (in order), updating `last`, removes expired
/// ones, and re-arms the watch.
pub async fn process_changes(
    client: &Client,
    state: &Arc<BrokerState>,
    last: &mut i64,
) -> Result<OneshotWatcher, String> {
    let (children, _, watcher) =
        client.get_and_watch_children(&changes_path()).await.map_err(zk_err("watch", &changes_path()))?;
    let mut changes: Vec<(i64, String)> = children.into_iter().filter_map(|c| Some((change_seq(&c)?, c))).collect();
    changes.sort();
    let now_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
    for (seq, name) in changes {
        let Ok(sequence) = u32::try_from(seq) else { continue };
        let path = NodeKind::ConfigChange { sequence }.path();
        if seq > *last {
            match client.get_data(&path).await {
                Ok((data, _)) => match ConfigChange::parse(&path, &data) {
                    Ok(change) => {
                        let topic = change.topic.as_str();
                        sync_topic(client, state, topic).await?;
                        info!(topic, change = name, "topic configuration changed");
                    }
                    Err(e) => warn!("ignoring a malformed change notification: {e}"),
                },
                Err(ZkError::NoNode) => {}
                Err(e) => return Err(zk_err("read", &path)(e)),
            }
            *last = seq;
        }
        if let Ok(Some(stat)) = client.check_stat(&path).await {
            if now_ms.saturating_sub(stat.ctime) > CHANGE_EXPIRY.as_millis() as i64 {
                debug!(path, "removing an expired change notification");
                let _ = client.delete(&path, None).await;
            }
        }
    }
    Ok(watcher)
}

/// Whether any broker registered the topic (0.7: `/brokers/topics/<topic>/<brokerId>`).
async fn registered(client: &Client, topic: &str) -> Result<bool, String> {
    let path = NodeKind::TopicRegistration { topic: TopicName::new(topic).map_err(|e| e.to_string())? }.path();
    match client.list_children(&path).await {
        Ok(children) => Ok(!children.is_empty()),
        Err(ZkError::NoNode) => Ok(false),
        Err(e) => Err(zk_err("list", &path)(e)),
    }
}

/// Writes the topic's new configuration (`None`: removes it) and a change notification in one
/// transaction. `version` is the configuration node's version read before (`None`: it did not
/// exist), so a concurrent change by another broker makes this one fail rather than be lost.
async fn write(
    client: &Client,
    topic: &str,
    config: Option<&Overrides>,
    version: Option<i32>,
) -> Result<(), AdminError> {
    ensure_paths(client).await.map_err(AdminError::server)?;
    let name = TopicName::new(topic).map_err(|e| AdminError::server(e.to_string()))?;
    let path = NodeKind::TopicConfig { topic: name.clone() }.path();
    let data = config.map(|o| TopicConfig { config: o.as_map().clone() }.to_bytes());
    let note = ConfigChange { topic: name }.to_bytes();
    let change_prefix = config_change_create_path();
    let mut w = client.new_multi_writer();
    let added = match (&data, version) {
        (Some(d), None) => w.add_create(&path, d, &persistent()),
        (Some(d), Some(v)) => w.add_set_data(&path, d, Some(v)),
        (None, Some(v)) => w.add_delete(&path, Some(v)),
        (None, None) => Ok(()),
    };
    added
        .and_then(|()| w.add_create(&change_prefix, &note, &sequential()))
        .map_err(|e| AdminError::server(format!("ZooKeeper transaction on {path}: {e}")))?;
    match w.commit().await {
        Ok(_) => Ok(()),
        Err(MultiWriteError::OperationFailed { index: 0, source: ZkError::NodeExists }) => {
            Err(AdminError::exists(topic))
        }
        Err(MultiWriteError::OperationFailed { index: 0, source: ZkError::BadVersion | ZkError::NoNode }) => {
            Err(AdminError::server(format!("{path} {CONCURRENT}")))
        }
        Err(e) => Err(AdminError::server(format!("ZooKeeper transaction on {path}: {e}"))),
    }
}

/// Ends the message of a write that lost a race with another broker's change of the same topic.
const CONCURRENT: &str = "was changed concurrently by another broker; retry";
/// How often a write that lost such a race is retried on the newer configuration.
const ATTEMPTS: usize = 5;

/// One checked ModifyTopic operation with ZooKeeper as the store; applied here at once, and on
/// the other brokers through their watch. A concurrent change of the same topic by another
/// broker is not lost: the operation is redone on top of it.
pub async fn execute(state: &Arc<BrokerState>, client: &Client, c: &Checked) -> Result<Vec<ConfigEntry>, AdminError> {
    let mut attempt = 1;
    loop {
        match execute_once(state, client, c).await {
            Err(e) if e.message.ends_with(CONCURRENT) && attempt < ATTEMPTS => attempt += 1,
            r => return r,
        }
    }
}

async fn execute_once(state: &Arc<BrokerState>, client: &Client, c: &Checked) -> Result<Vec<ConfigEntry>, AdminError> {
    let topic = c.topic.as_str();
    let current = read_config(client, topic).await.map_err(AdminError::server)?;
    let exists =
        current.is_some() || state.has_topic(topic) || registered(client, topic).await.map_err(AdminError::server)?;
    let version = current.as_ref().map(|(_, v)| *v);
    let current = current.map(|(o, _)| o).unwrap_or_default();
    let local = |config: Option<Overrides>| apply_local_async(state, topic, config);
    match c.op {
        Operation::Create => {
            if exists {
                return Err(AdminError::exists(topic));
            }
            let o = altered(state, topic, &Overrides::default(), &c.changes, 0)?;
            write(client, topic, Some(&o), None).await?;
            if let Err(e) = local(Some(o.clone())).await {
                // Undo the stored change (the new node has version 0) and what was made here.
                if let Err(undo) = write(client, topic, None, Some(0)).await {
                    warn!(topic, "rolling back a failed CREATE in ZooKeeper: {}", undo.message);
                }
                let _ = local(None).await;
                return Err(AdminError::server(e));
            }
            Ok(describe(state, topic, &o))
        }
        Operation::Alter => {
            if !exists {
                return Err(AdminError::unknown_topic(topic));
            }
            let o = altered(state, topic, &current, &c.changes, state.partition_count(topic))?;
            write(client, topic, Some(&o), version).await?;
            if let Err(e) = local(Some(o.clone())).await {
                // The node as it was: its previous data, or none when the write created it.
                let undone = match version {
                    Some(v) => write(client, topic, Some(&current), Some(v + 1)).await,
                    None => write(client, topic, None, Some(0)).await,
                };
                if let Err(undo) = undone {
                    warn!(topic, "rolling back a failed ALTER in ZooKeeper: {}", undo.message);
                }
                let _ = local(Some(current.clone())).await;
                return Err(AdminError::server(e));
            }
            Ok(describe(state, topic, &o))
        }
        Operation::Delete => {
            if !exists {
                return Err(AdminError::unknown_topic(topic));
            }
            write(client, topic, None, version).await?;
            local(None).await.map_err(AdminError::server)?;
            Ok(Vec::new())
        }
        // LIST is answered from this broker's state (`admin::list`), not from the store.
        Operation::List => Ok(Vec::new()),
        Operation::Describe => {
            if !exists {
                return Err(AdminError::unknown_topic(topic));
            }
            Ok(describe(state, topic, &current))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_sequence_numbers() {
        assert_eq!(change_seq("config_change_0000000012"), Some(12));
        assert_eq!(change_seq("config_change_"), None);
        assert_eq!(change_seq("config_change_12a"), None);
        assert_eq!(change_seq("other_0000000001"), None);
    }
}
