//! Where topic configuration is stored, behind one interface: the configuration file in the log
//! dir (standalone, [`crate::config_file`]) or ZooKeeper's `/config/topics/<topic>` with a
//! `/config/changes` notification per change (Kafka's layout, paths from `kwire07-zk`).
//! ModifyTopic ([`crate::admin`]) runs one implementation of each operation over either.

use std::path::PathBuf;

use kwire07_zk::{config_change_create_path, ConfigChange, Container, NodeKind, TopicConfig, TopicName, ZkDataError};
use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, Error as ZkError, MultiWriteError};

use crate::config_file::{self, ConfigFileError};
use crate::state::BrokerState;
use crate::topic_settings::{Overrides, SettingError};

/// Why the store could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("topic {0:?} already exists")]
    Exists(String),
    /// An optimistic write lost a race with another broker's change of the same topic.
    #[error("{path} was changed concurrently by another broker; retry")]
    Concurrent { path: String },
    #[error(transparent)]
    File(#[from] ConfigFileError),
    #[error("ZooKeeper {op} {path}: {source}")]
    ZooKeeper { op: &'static str, path: String, source: ZkError },
    #[error("ZooKeeper transaction on {path}: {detail}")]
    Transaction { path: String, detail: String },
    #[error(transparent)]
    Data(#[from] ZkDataError),
    #[error("{path}: {source}")]
    Setting { path: String, source: SettingError },
    #[error("the configuration task failed: {0}")]
    Task(String),
}

pub(crate) fn zk_err<'a>(op: &'static str, path: &'a str) -> impl FnOnce(ZkError) -> StoreError + 'a {
    move |source| StoreError::ZooKeeper { op, path: path.to_owned(), source }
}

/// A topic's stored overrides and the version they were read at (ZooKeeper's node version;
/// the file has none), so that a write can refuse to overwrite a change it did not see.
#[derive(Debug, Clone)]
pub struct Stored {
    pub overrides: Overrides,
    version: Option<i32>,
}

/// The store of this broker's topic configuration.
#[derive(Debug, Clone)]
pub enum TopicStore {
    /// Standalone: the configuration file in the log dir; the broker's state holds its content.
    File { log_dir: PathBuf },
    /// A cluster: ZooKeeper.
    ZooKeeper(Client),
}

fn persistent() -> CreateOptions<'static> {
    CreateMode::Persistent.with_acls(Acls::anyone_all())
}

fn sequential() -> CreateOptions<'static> {
    CreateMode::PersistentSequential.with_acls(Acls::anyone_all())
}

/// Creates `/config/topics` and `/config/changes` if missing.
pub async fn ensure_paths(client: &Client) -> Result<(), StoreError> {
    for p in [Container::ConfigTopics.path(), Container::ConfigChanges.path()] {
        client.mkdir(&p, &persistent()).await.map_err(zk_err("create", &p))?;
    }
    Ok(())
}

/// `/config/topics/<topic>` read from ZooKeeper: the overrides and the node's version.
pub async fn read_zk(client: &Client, topic: &str) -> Result<Option<Stored>, StoreError> {
    let path = NodeKind::TopicConfig { topic: TopicName::new(topic)? }.path();
    match client.get_data(&path).await {
        Ok((data, stat)) => {
            let cfg = TopicConfig::parse(&path, &data)?;
            let overrides = Overrides::from_map(&cfg.config).map_err(|source| StoreError::Setting { path, source })?;
            Ok(Some(Stored { overrides, version: Some(stat.version) }))
        }
        Err(ZkError::NoNode) => Ok(None),
        Err(e) => Err(zk_err("read", &path)(e)),
    }
}

impl TopicStore {
    /// The topic's stored configuration, `None` when it has none.
    pub async fn read(&self, state: &BrokerState, topic: &str) -> Result<Option<Stored>, StoreError> {
        match self {
            TopicStore::File { .. } => {
                Ok(state.topic_config(topic).map(|overrides| Stored { overrides, version: None }))
            }
            TopicStore::ZooKeeper(client) => read_zk(client, topic).await,
        }
    }

    /// Whether another broker registered the topic (0.7: `/brokers/topics/<topic>/<brokerId>`),
    /// so that it exists even without a configuration or a log here.
    pub async fn registered_elsewhere(&self, topic: &str) -> Result<bool, StoreError> {
        let TopicStore::ZooKeeper(client) = self else { return Ok(false) };
        let path = NodeKind::TopicRegistration { topic: TopicName::new(topic)? }.path();
        match client.list_children(&path).await {
            Ok(children) => Ok(!children.is_empty()),
            Err(ZkError::NoNode) => Ok(false),
            Err(e) => Err(zk_err("list", &path)(e)),
        }
    }

    /// Stores `config` for the topic (`None`: removes it) if the stored one is still `read`.
    pub async fn write(
        &self,
        state: &BrokerState,
        topic: &str,
        config: Option<&Overrides>,
        read: Option<&Stored>,
    ) -> Result<(), StoreError> {
        match self {
            TopicStore::File { log_dir } => {
                let mut all = state.topic_configs();
                let changed = match config {
                    Some(o) => all.insert(topic.to_owned(), o.clone()).as_ref() != Some(o),
                    None => all.remove(topic).is_some(),
                };
                if !changed {
                    return Ok(());
                }
                let dir = log_dir.clone();
                tokio::task::spawn_blocking(move || config_file::save(&dir, &all))
                    .await
                    .map_err(|e| StoreError::Task(e.to_string()))??;
                Ok(())
            }
            TopicStore::ZooKeeper(client) => {
                write_zk(client, topic, config, read.and_then(|s| s.version), read.is_none()).await
            }
        }
    }

    /// Puts back `before`, what was stored before a [`TopicStore::write`] of a configuration
    /// whose local application failed.
    pub async fn undo(&self, state: &BrokerState, topic: &str, before: Option<&Stored>) -> Result<(), StoreError> {
        match self {
            TopicStore::File { .. } => self.write(state, topic, before.map(|s| &s.overrides), None).await,
            TopicStore::ZooKeeper(client) => {
                // The write made the node one version newer, or created it at version 0.
                let now = before.and_then(|s| s.version).map_or(0, |v| v + 1);
                write_zk(client, topic, before.map(|s| &s.overrides), Some(now), false).await
            }
        }
    }
}

/// Writes the topic's new configuration (`None`: removes it) and a change notification in one
/// transaction. `version` is the configuration node's version read before (`None` with
/// `create`: it did not exist), so a concurrent change by another broker makes this one fail
/// rather than be lost.
async fn write_zk(
    client: &Client,
    topic: &str,
    config: Option<&Overrides>,
    version: Option<i32>,
    create: bool,
) -> Result<(), StoreError> {
    ensure_paths(client).await?;
    let name = TopicName::new(topic)?;
    let path = NodeKind::TopicConfig { topic: name.clone() }.path();
    let data = config.map(|o| TopicConfig { config: o.as_map().clone() }.to_bytes());
    let note = ConfigChange { topic: name }.to_bytes();
    let mut w = client.new_multi_writer();
    let added = match (&data, version) {
        (Some(d), None) if create => w.add_create(&path, d, &persistent()),
        (Some(d), v) => w.add_set_data(&path, d, v),
        (None, Some(v)) => w.add_delete(&path, Some(v)),
        (None, None) => Ok(()),
    };
    let transaction = |detail: String| StoreError::Transaction { path: path.clone(), detail };
    added
        .and_then(|()| w.add_create(&config_change_create_path(), &note, &sequential()))
        .map_err(|e| transaction(e.to_string()))?;
    match w.commit().await {
        Ok(_) => Ok(()),
        Err(MultiWriteError::OperationFailed { index: 0, source: ZkError::NodeExists }) => {
            Err(StoreError::Exists(topic.to_owned()))
        }
        Err(MultiWriteError::OperationFailed { index: 0, source: ZkError::BadVersion | ZkError::NoNode }) => {
            Err(StoreError::Concurrent { path })
        }
        Err(e) => Err(transaction(e.to_string())),
    }
}
