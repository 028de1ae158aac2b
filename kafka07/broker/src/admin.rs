//! ModifyTopic (request type 5, seed 004): CREATE, ALTER, DELETE and DESCRIBE a topic and its
//! topic-level settings ([`crate::topic_settings`]). Bodies are the generated
//! `ModifyTopicRequest` / `ModifyTopicResponse` (schemas/ModifyTopic*.json), version 0.
//!
//! Where the configuration lives:
//! * with ZooKeeper, `/config/topics/<topic>` holds the overrides and every change also creates
//!   a sequential `/config/changes/config_change_<n>` naming the topic, in one ZooKeeper
//!   transaction; every broker watches `/config/changes` ([`crate::zk_config`]) and applies it.
//! * standalone, [`crate::config_file`] in the log dir, written atomically.
//!
//! Both are a [`TopicStore`]; every operation is implemented once over it.
//!
//! Every broker hosts every partition of every topic that has a configuration, so CREATE makes
//! the partitions on all brokers and DELETE removes them from all live brokers.
//!
//! A refused request changes nothing. The body's `ErrorCode` uses Kafka's modern codes
//! (`kwire_runtime::ErrorCode`); the 0.7 envelope's error is 0 on success and −1 otherwise.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::BytesMut;
use kwire07_admin_messages::modify_topic_response::{ListedTopic, TopicConfig as ConfigEntry};
use kwire07_admin_messages::{ModifyTopicRequest, ModifyTopicResponse};
use kwire07_protocol::{validate_topic, validate_topic_dirs, ErrorCode, VersionedRequest, VersionedResponse};
use kwire_runtime::{Decode, Encode, ErrorCode as KafkaCode, StrBytes, TopicName};
use tracing::{info, warn};

use crate::state::BrokerState;
use crate::topic_apply::{apply_local_async, ApplyError};
use crate::topic_settings::{Overrides, SettingError};
use crate::topic_store::{StoreError, TopicStore};

/// The ModifyTopic version of CREATE, ALTER, DELETE and DESCRIBE.
pub const VERSION: i16 = 0;
/// The newest ModifyTopic version this broker speaks (1 adds LIST).
pub const MAX_VERSION: i16 = 1;

/// Why an operation was refused (or failed): a Kafka error code and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminError {
    /// Kafka's code (the 0.7 protocol's own codes are `kwire07_protocol::ErrorCode`).
    pub code: KafkaCode,
    pub message: String,
}

impl AdminError {
    pub fn new(code: KafkaCode, message: impl Into<String>) -> AdminError {
        AdminError { code, message: message.into() }
    }

    pub(crate) fn server(message: impl Into<String>) -> AdminError {
        AdminError::new(KafkaCode::UNKNOWN_SERVER_ERROR, message)
    }

    pub(crate) fn unknown_topic(topic: &str) -> AdminError {
        AdminError::new(KafkaCode::UNKNOWN_TOPIC_OR_PARTITION, format!("topic {topic:?} does not exist"))
    }

    pub(crate) fn exists(topic: &str) -> AdminError {
        AdminError::new(KafkaCode::TOPIC_ALREADY_EXISTS, format!("topic {topic:?} already exists"))
    }
}

impl From<SettingError> for AdminError {
    fn from(e: SettingError) -> Self {
        AdminError::new(KafkaCode::INVALID_CONFIG, e.to_string())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Alter,
    Delete,
    Describe,
    /// Every topic of the broker (version 1).
    List,
}

impl Operation {
    pub fn parse(s: &str) -> Result<Operation, AdminError> {
        Ok(match s {
            "CREATE" => Operation::Create,
            "ALTER" => Operation::Alter,
            "DELETE" => Operation::Delete,
            "DESCRIBE" => Operation::Describe,
            "LIST" => Operation::List,
            other => {
                return Err(AdminError::new(
                    KafkaCode::INVALID_REQUEST,
                    format!("unknown operation {other:?}: expected CREATE, ALTER, DELETE, DESCRIBE or LIST"),
                ))
            }
        })
    }
}

/// A checked request: the topic name is valid, property names are unique.
#[derive(Debug, Clone)]
pub struct Checked {
    pub op: Operation,
    pub topic: String,
    pub changes: Vec<(String, Option<String>)>,
}

/// Checks everything that does not depend on the topic's current state.
pub fn check_request(req: &ModifyTopicRequest, max_topic_len: usize) -> Result<Checked, AdminError> {
    let op = Operation::parse(req.operation.as_str())?;
    let topic = req.topic_name.as_str().to_owned();
    if op == Operation::List {
        if !topic.is_empty() || !req.properties.is_empty() {
            return Err(AdminError::new(KafkaCode::INVALID_REQUEST, "LIST takes no topic name and no properties"));
        }
        return Ok(Checked { op, topic, changes: Vec::new() });
    }
    validate_topic(&topic, max_topic_len).map_err(|e| {
        AdminError::new(KafkaCode::INVALID_TOPIC_EXCEPTION, format!("invalid topic name {topic:?}: {e}"))
    })?;
    let mut seen = BTreeSet::new();
    let mut changes = Vec::with_capacity(req.properties.len());
    for p in &req.properties {
        let name = p.prop_name.as_str().to_owned();
        if !seen.insert(name.clone()) {
            return Err(AdminError::new(KafkaCode::INVALID_REQUEST, format!("property {name:?} is given twice")));
        }
        changes.push((name, p.prop_value.as_ref().map(|v| v.as_str().to_owned())));
    }
    match op {
        Operation::Delete | Operation::Describe if !changes.is_empty() => {
            return Err(AdminError::new(KafkaCode::INVALID_REQUEST, format!("{op:?} takes no properties")));
        }
        Operation::Create => {
            if let Some((name, _)) = changes.iter().find(|(_, v)| v.is_none()) {
                return Err(AdminError::new(
                    KafkaCode::INVALID_CONFIG,
                    format!("CREATE: property {name:?} has no value"),
                ));
            }
        }
        _ => {}
    }
    // Names and values are checked before anything is looked up or changed.
    let mut scratch = Overrides::default();
    for (name, value) in &changes {
        scratch.set(name, value.as_deref())?;
    }
    Ok(Checked { op, topic, changes })
}

/// `current` with `changes` applied; the partition count may only grow.
pub fn altered(
    state: &BrokerState,
    topic: &str,
    current: &Overrides,
    changes: &[(String, Option<String>)],
    existing_partitions: i32,
) -> Result<Overrides, AdminError> {
    let mut o = current.clone();
    for (name, value) in changes {
        o.set(name, value.as_deref())?;
    }
    let count = o.partitions().unwrap_or_else(|| state.defaults().partitions(topic));
    if count < existing_partitions {
        return Err(AdminError::new(
            KafkaCode::INVALID_PARTITIONS,
            format!(
                "topic {topic:?} has {existing_partitions} partitions; the count can only grow, not become {count}"
            ),
        ));
    }
    check_placement(state, topic, count)?;
    Ok(o)
}

/// What must hold before anything is stored: every partition's directory name fits on disk,
/// and the new partitions fit under the broker's limit of open partitions.
fn check_placement(state: &BrokerState, topic: &str, count: i32) -> Result<(), AdminError> {
    validate_topic_dirs(topic, count).map_err(|e| {
        AdminError::new(KafkaCode::INVALID_TOPIC_EXCEPTION, format!("invalid topic name {topic:?}: {e}"))
    })?;
    let logs = state.logs();
    let Some(max) = logs.max_partitions() else { return Ok(()) };
    let have = (0..count).filter(|p| logs.get(topic, *p).is_some()).count();
    let new = usize::try_from(count).unwrap_or(0).saturating_sub(have);
    let open = logs.partition_count();
    if open + new > max {
        return Err(AdminError::new(
            KafkaCode::INVALID_PARTITIONS,
            format!(
                "{new} more partitions would exceed this broker's limit: {open} of {max} are open \
                 (kwire.max.partitions)"
            ),
        ));
    }
    Ok(())
}

/// The response's configuration list.
pub fn describe(state: &BrokerState, topic: &str, overrides: &Overrides) -> Vec<ConfigEntry> {
    state
        .defaults()
        .describe(topic, overrides)
        .into_iter()
        .map(|s| ConfigEntry {
            name: StrBytes::from(s.name),
            value: StrBytes::from(s.value),
            is_override: s.is_override,
            ..Default::default()
        })
        .collect()
}

/// LIST: every topic with a log or a configuration here, sorted.
pub fn list(state: &BrokerState) -> Vec<ListedTopic> {
    let configured = state.topic_configs();
    let mut names: BTreeSet<String> = state.topics().into_iter().collect();
    names.extend(configured.keys().cloned());
    names
        .into_iter()
        .map(|t| ListedTopic {
            partitions: state.partition_count(&t),
            configured: configured.contains_key(&t),
            name: TopicName::from(t),
            ..Default::default()
        })
        .collect()
}

/// How often a write that lost a race with another broker's change is redone on the newer
/// configuration.
const ATTEMPTS: usize = 5;

impl From<StoreError> for AdminError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Exists(topic) => AdminError::exists(&topic),
            other => AdminError::server(other.to_string()),
        }
    }
}

impl From<ApplyError> for AdminError {
    fn from(e: ApplyError) -> Self {
        AdminError::server(e.to_string())
    }
}

/// The store this broker keeps topic configuration in.
fn store(state: &BrokerState) -> Result<TopicStore, AdminError> {
    if state.uses_zookeeper() {
        let client =
            state.zk_client().ok_or_else(|| AdminError::server("not connected to ZooKeeper; try again shortly"))?;
        Ok(TopicStore::ZooKeeper(client))
    } else {
        Ok(TopicStore::File { log_dir: state.logs().dir().to_path_buf() })
    }
}

/// Runs one checked operation against the configured store, one at a time on this broker. A
/// concurrent change of the same topic by another broker is not lost: the operation is redone
/// on top of it.
pub async fn execute(state: &Arc<BrokerState>, c: Checked) -> Result<Vec<ConfigEntry>, AdminError> {
    let _guard = state.admin_lock().await;
    let store = store(state)?;
    let mut attempt = 1;
    loop {
        match execute_once(state, &store, &c).await {
            Err(Refusal::Concurrent(_)) if attempt < ATTEMPTS => attempt += 1,
            Err(Refusal::Concurrent(e)) => return Err(e.into()),
            Err(Refusal::Final(e)) => return Err(e),
            Ok(configs) => return Ok(configs),
        }
    }
}

/// Why one attempt failed: a write that lost a race with another broker (worth redoing on the
/// newer configuration), or anything else.
enum Refusal {
    Concurrent(StoreError),
    Final(AdminError),
}

impl<E: Into<AdminError>> From<E> for Refusal {
    fn from(e: E) -> Self {
        Refusal::Final(e.into())
    }
}

/// A store write's error, kept apart when it lost a race.
fn write_refusal(e: StoreError) -> Refusal {
    match e {
        StoreError::Concurrent { .. } => Refusal::Concurrent(e),
        other => other.into(),
    }
}

/// One operation: checked against what is stored, stored, then applied here (and on the other
/// brokers through their watch when the store is ZooKeeper). A store change whose local
/// application fails is undone, so a refused request changes nothing.
async fn execute_once(state: &Arc<BrokerState>, store: &TopicStore, c: &Checked) -> Result<Vec<ConfigEntry>, Refusal> {
    let topic = c.topic.as_str();
    let read = store.read(state, topic).await?;
    let exists = read.is_some() || state.has_topic(topic) || store.registered_elsewhere(topic).await?;
    let current = read.as_ref().map(|s| s.overrides.clone()).unwrap_or_default();
    let partitions = match c.op {
        Operation::Create => 0,
        _ => state.partition_count(topic),
    };
    match c.op {
        Operation::Create | Operation::Alter => {
            match (c.op, exists) {
                (Operation::Create, true) => return Err(AdminError::exists(topic).into()),
                (Operation::Alter, false) => return Err(AdminError::unknown_topic(topic).into()),
                _ => {}
            }
            let base = if c.op == Operation::Create { Overrides::default() } else { current.clone() };
            let o = altered(state, topic, &base, &c.changes, partitions)?;
            store.write(state, topic, Some(&o), read.as_ref()).await.map_err(write_refusal)?;
            if let Err(e) = apply_local_async(state, topic, Some(o.clone())).await {
                if let Err(undo) = store.undo(state, topic, read.as_ref()).await {
                    warn!(topic, "rolling back a failed {:?}: {undo}", c.op);
                }
                // Back to what was here: the previous settings, or no topic at all.
                let previous = if c.op == Operation::Create { None } else { Some(current) };
                if let Err(again) = apply_local_async(state, topic, previous).await {
                    warn!(topic, "rolling back a failed {:?} here: {again}", c.op);
                }
                return Err(e.into());
            }
            Ok(describe(state, topic, &o))
        }
        Operation::Delete => {
            if !exists {
                return Err(AdminError::unknown_topic(topic).into());
            }
            store.write(state, topic, None, read.as_ref()).await.map_err(write_refusal)?;
            apply_local_async(state, topic, None).await?;
            Ok(Vec::new())
        }
        // LIST is answered from this broker's state (`admin::list`), not from the store.
        Operation::List => Ok(Vec::new()),
        Operation::Describe => {
            if !exists {
                return Err(AdminError::unknown_topic(topic).into());
            }
            Ok(describe(state, topic, &current))
        }
    }
}

/// Decodes, executes and answers one MODIFY_TOPIC request.
pub async fn handle(state: &Arc<BrokerState>, request: VersionedRequest) -> VersionedResponse {
    let version = request.version;
    let mut topics = Vec::new();
    let result = if !(VERSION..=MAX_VERSION).contains(&version) {
        Err(AdminError::new(
            KafkaCode::UNSUPPORTED_VERSION,
            format!("ModifyTopic version {version} is not supported; this broker speaks versions {VERSION} to {MAX_VERSION}"),
        ))
    } else {
        match ModifyTopicRequest::decode(&mut request.body.clone(), version) {
            Err(e) => Err(AdminError::new(KafkaCode::INVALID_REQUEST, format!("malformed ModifyTopicRequest: {e}"))),
            Ok(req) => match check_request(&req, state.max_topic_name_length()) {
                Err(e) => Err(e),
                Ok(c) if c.op == Operation::List => {
                    if version < 1 {
                        Err(AdminError::new(KafkaCode::UNSUPPORTED_VERSION, "LIST needs ModifyTopic version 1"))
                    } else {
                        topics = list(state);
                        Ok(Vec::new())
                    }
                }
                Ok(c) => {
                    let (op, topic) = (c.op, c.topic.clone());
                    let r = execute(state, c).await;
                    match &r {
                        Ok(_) => info!(?op, topic, "ModifyTopic done"),
                        Err(e) => info!(?op, topic, code = e.code.code(), "ModifyTopic refused: {}", e.message),
                    }
                    r
                }
            },
        }
    };
    let body = match result {
        Ok(configs) => ModifyTopicResponse {
            error_code: KafkaCode::NONE,
            error_message: None,
            configs,
            topics,
            ..Default::default()
        },
        Err(e) => ModifyTopicResponse {
            error_code: e.code,
            error_message: Some(StrBytes::from(e.message)),
            configs: Vec::new(),
            ..Default::default()
        },
    };
    let envelope = if body.error_code == KafkaCode::NONE { ErrorCode::NoError } else { ErrorCode::Unknown };
    // The answer speaks the request's version when this broker knows it, else version 0,
    // which every client reads.
    let version = if (VERSION..=MAX_VERSION).contains(&version) { version } else { VERSION };
    let mut out = BytesMut::new();
    if let Err(e) = body.encode(&mut out, version) {
        // Only a string over 32 KiB could fail; answer with the reason instead.
        let fallback = ModifyTopicResponse {
            error_code: KafkaCode::UNKNOWN_SERVER_ERROR,
            error_message: Some(StrBytes::from(format!("cannot encode the response: {e}"))),
            ..Default::default()
        };
        out.clear();
        let _ = fallback.encode(&mut out, version);
        return VersionedResponse { error: ErrorCode::Unknown, version, body: out.freeze() };
    }
    VersionedResponse { error: envelope, version, body: out.freeze() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kwire07_protocol::log::LogManager;
    use proptest::prelude::*;

    use crate::config_file;
    use crate::topic_apply::load_standalone;
    use crate::topic_settings::BrokerDefaults;

    fn standalone_state(dir: &std::path::Path) -> Arc<BrokerState> {
        let defaults = BrokerDefaults { num_partitions: 1, ..Default::default() };
        let logs = LogManager::open(dir, defaults.log.clone(), Default::default()).unwrap();
        Arc::new(BrokerState::new(Arc::new(logs), defaults, 255))
    }

    fn answer(state: &Arc<BrokerState>, version: i16, body: Vec<u8>) -> (VersionedResponse, ModifyTopicResponse) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let r = rt.block_on(handle(state, VersionedRequest { version, body: body.into() }));
        let decoded = ModifyTopicResponse::decode(&mut r.body.clone(), r.version).expect("a well-formed response");
        (r, decoded)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any bytes, any version: a well-formed answer, and a refusal changes nothing.
        #[test]
        fn arbitrary_requests_get_well_formed_answers(version in any::<i16>(), body in proptest::collection::vec(any::<u8>(), 0..64)) {
            let dir = tempfile::tempdir().unwrap();
            let state = standalone_state(dir.path());
            let (envelope, resp) = answer(&state, version, body);
            prop_assert_eq!(envelope.error == ErrorCode::NoError, resp.error_code == KafkaCode::NONE);
            if resp.error_code != KafkaCode::NONE {
                prop_assert!(resp.error_message.is_some());
                prop_assert!(state.topics().is_empty());
                prop_assert!(state.topic_configs().is_empty());
            }
        }
    }

    /// Valid names, invalid ones, and names too long for a partition directory on disk (254
    /// bytes; 253 bytes, which fits one partition but not partition 10).
    fn topic_name() -> impl Strategy<Value = String> {
        let long = "a".repeat(254);
        let fits_ten = "b".repeat(253);
        proptest::sample::select(vec![
            "a".to_string(),
            "b".into(),
            "".into(),
            "..".into(),
            "a/b".into(),
            long,
            fits_ten,
            "日".repeat(100),
        ])
    }

    fn op() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(vec!["CREATE", "ALTER", "DELETE", "DESCRIBE", "create", "MOVE"])
    }

    fn property() -> impl Strategy<Value = (&'static str, Option<&'static str>)> {
        let names = vec!["partitions", "segment.bytes", "retention.ms", "flush.messages", "bogus", "segment.ms"];
        let values = vec![Some("1"), Some("3"), Some("11"), Some("-1"), Some("50"), Some("x"), Some("0"), None];
        (proptest::sample::select(names), proptest::sample::select(values))
    }

    /// The state a request may change: topics, their configurations, the stored file.
    fn snapshot(state: &BrokerState, dir: &std::path::Path) -> impl PartialEq + std::fmt::Debug {
        let file = std::fs::read(config_file::path_in(dir)).ok();
        let counts: Vec<i32> = state.topics().iter().map(|t| state.partition_count(t)).collect();
        (state.topics(), counts, state.topic_configs(), file)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Sequences of plausible and implausible operations: every refusal leaves the topics,
        /// their settings and the stored file exactly as they were; every success is stored.
        #[test]
        fn refusals_change_nothing(
            requests in proptest::collection::vec(
                (op(), topic_name(), proptest::collection::vec(property(), 0..3)),
                1..8,
            )
        ) {
            let dir = tempfile::tempdir().unwrap();
            let state = standalone_state(dir.path());
            for (op, topic, props) in requests {
                let topic = topic.as_str();
                let req = kwire07_client::admin::request(op, topic, &props);
                let mut body = BytesMut::new();
                req.encode(&mut body, VERSION).unwrap();
                let before = snapshot(&state, dir.path());
                let (_, resp) = answer(&state, VERSION, body.to_vec());
                // The store always loads: a broker restarted now would start.
                config_file::load(dir.path()).unwrap();
                if resp.error_code != KafkaCode::NONE {
                    prop_assert_eq!(snapshot(&state, dir.path()), before, "{} {:?} {:?}: {:?}", op, topic, props, resp);
                } else {
                    let stored = config_file::load(dir.path()).unwrap();
                    prop_assert_eq!(stored, state.topic_configs());
                }
            }
            // What is stored brings a restarted broker back to the same topics.
            let configs = state.topic_configs();
            drop(state);
            let restarted = standalone_state(dir.path());
            prop_assert!(load_standalone(&restarted).is_ok());
            prop_assert_eq!(restarted.topic_configs(), configs);
        }
    }

    #[test]
    fn create_then_describe_in_process() {
        let dir = tempfile::tempdir().unwrap();
        let state = standalone_state(dir.path());
        let encode = |r: &ModifyTopicRequest| {
            let mut b = BytesMut::new();
            r.encode(&mut b, VERSION).unwrap();
            b.to_vec()
        };
        let create =
            kwire07_client::admin::request("CREATE", "t", &[("partitions", Some("2")), ("flush.ms", Some("7"))]);
        let (envelope, resp) = answer(&state, VERSION, encode(&create));
        assert_eq!((envelope.error, resp.error_code), (ErrorCode::NoError, KafkaCode::NONE), "{resp:?}");
        assert_eq!(state.topics(), ["t"]);
        assert_eq!(state.partition_count("t"), 2);
        let (_, resp) = answer(&state, VERSION, encode(&kwire07_client::admin::request("DESCRIBE", "t", &[])));
        let names: Vec<&str> = resp.configs.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, crate::topic_settings::PROPERTIES);
        let overridden: Vec<&str> = resp.configs.iter().filter(|c| c.is_override).map(|c| c.name.as_str()).collect();
        assert_eq!(overridden, ["partitions", "flush.ms"]);
        let stored = config_file::load(dir.path()).unwrap();
        assert_eq!(stored["t"].as_map().get("flush.ms").map(String::as_str), Some("7"));
    }
}
