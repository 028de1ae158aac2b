//! Applying a topic's configuration on this broker: overrides on the live logs, partitions
//! created, or the topic deleted. Both the ModifyTopic handler ([`crate::admin`]) and the
//! ZooKeeper watch ([`crate::zk_config`]) end here.

use std::sync::Arc;

use kwire07_protocol::log::LogError;
use kwire07_protocol::validate_topic;
use tracing::{info, warn};

use crate::config_file::{self, ConfigFileError};
use crate::state::BrokerState;
use crate::topic_settings::Overrides;

/// Why a configuration could not be applied here.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("{action} {topic}: {source}")]
    Log { action: &'static str, topic: String, source: LogError },
    #[error("applying the configuration of {topic}: the task failed: {detail}")]
    Task { topic: String, detail: String },
}

/// Applies a topic's configuration on this broker (`None`: the topic was deleted): overrides
/// on the live logs, partitions created. Blocking (file I/O).
pub fn apply_local(state: &BrokerState, topic: &str, config: Option<Overrides>) -> Result<(), ApplyError> {
    let log = |action: &'static str| move |source| ApplyError::Log { action, topic: topic.to_owned(), source };
    match config {
        Some(o) => {
            state.apply_topic_config(topic, Some(o)).map_err(log("applying settings of"))?;
            state.create_partitions(topic).map_err(log("creating partitions of"))
        }
        None if state.has_topic(topic) => {
            let n = state.delete_topic(topic).map_err(log("deleting"))?;
            info!(topic, partitions = n, "topic deleted");
            Ok(())
        }
        None => Ok(()),
    }
}

/// [`apply_local`] off the async workers.
pub async fn apply_local_async(
    state: &Arc<BrokerState>,
    topic: &str,
    config: Option<Overrides>,
) -> Result<(), ApplyError> {
    let (state, topic_owned) = (state.clone(), topic.to_owned());
    tokio::task::spawn_blocking(move || apply_local(&state, &topic_owned, config))
        .await
        .map_err(|e| ApplyError::Task { topic: topic.to_owned(), detail: e.to_string() })?
}

/// Start-up in standalone mode: loads the configuration file and applies every topic's. A
/// stored topic that cannot be applied (a name its partitions' directories cannot have, a
/// partition that cannot be opened) is skipped with a warning naming it: one bad entry must not
/// keep the broker from starting.
pub fn load_standalone(state: &BrokerState) -> Result<(), ConfigFileError> {
    let topics = config_file::load(state.logs().dir())?;
    for (topic, o) in topics {
        if let Err(e) = validate_topic(&topic, state.max_topic_name_length()) {
            warn!(topic, "ignoring the stored configuration of an invalid topic name: {e}");
            continue;
        }
        if let Err(e) = apply_local(state, &topic, Some(o)) {
            warn!(topic, "skipping a stored topic that cannot be opened: {e}");
            let _ = state.apply_topic_config(&topic, None);
        }
    }
    Ok(())
}
