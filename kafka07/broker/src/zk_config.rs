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

use kwire07_zk::{ConfigChange, Container, NodeKind, TopicName};
use tracing::{debug, info, warn};
use zookeeper_client::{Client, Error as ZkError, OneshotWatcher};

use crate::state::BrokerState;
use crate::topic_apply::{apply_local_async, ApplyError};
use crate::topic_store::{ensure_paths, read_zk, zk_err, StoreError};

/// How long change notifications are kept (Kafka: 15 minutes).
pub const CHANGE_EXPIRY: Duration = Duration::from_secs(15 * 60);

/// Why following the configuration in ZooKeeper failed.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Apply(#[from] ApplyError),
}

fn changes_path() -> String {
    Container::ConfigChanges.path()
}

/// Reads the topic's configuration and applies it here (deleting the topic if it has none).
pub async fn sync_topic(client: &Client, state: &Arc<BrokerState>, topic: &str) -> Result<(), SyncError> {
    let config = read_zk(client, topic).await?.map(|s| s.overrides);
    Ok(apply_local_async(state, topic, config).await?)
}

/// Applies every topic's configuration node (start-up, after a session expiry).
pub async fn sync_all(client: &Client, state: &Arc<BrokerState>) -> Result<(), SyncError> {
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
    kwire07_zk::config_change_sequence(name).map(i64::from)
}

/// Highest notification sequence present (−1 when none), and a watch on new ones.
pub async fn watch_changes(client: &Client) -> Result<(i64, OneshotWatcher), SyncError> {
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
) -> Result<OneshotWatcher, SyncError> {
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
                Err(e) => return Err(zk_err("read", &path)(e).into()),
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
