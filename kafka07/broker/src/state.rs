//! What every connection shares: the log manager, the partition counts and the set of topics
//! this broker has, which the ZooKeeper registrar advertises. Partition counts and per-topic
//! log overrides can be changed while the broker runs; ModifyTopic's overrides
//! ([`Overrides`]) are applied on top of the broker's own settings ([`BrokerDefaults`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use kwire07_protocol::log::{LogError, LogManager, TopicOverrides};
use tokio::sync::{mpsc, watch};

use crate::topic_settings::{BrokerDefaults, Overrides};

/// What the ZooKeeper registrar is told about topics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopicEvent {
    /// The topic has a log here now (or its partition count changed): (re-)register it.
    Added(String),
    /// The topic was deleted here: remove its registration.
    Removed(String),
}

pub struct BrokerState {
    logs: Arc<LogManager>,
    num_partitions: RwLock<i32>,
    partition_counts: RwLock<HashMap<String, i32>>,
    max_topic_name_length: usize,
    /// Topics with a log here; a topic is added before its first append returns.
    topics: Mutex<BTreeSet<String>>,
    /// Tells the ZooKeeper registrar about new and deleted topics.
    new_topics: Mutex<Option<mpsc::UnboundedSender<TopicEvent>>>,
    /// The broker's configuration that topic settings inherit.
    defaults: BrokerDefaults,
    /// ModifyTopic overrides in effect, per topic (only topics that have a configuration).
    dynamic: RwLock<BTreeMap<String, Overrides>>,
    /// Why the broker must halt, once it must (see [`BrokerState::halt`]).
    halt: watch::Sender<Option<String>>,
    /// The registrar's current ZooKeeper session (`None`: standalone or not connected).
    zk_client: RwLock<Option<zookeeper_client::Client>>,
    /// Whether the topic configuration lives in ZooKeeper (else in the log dir).
    uses_zookeeper: AtomicBool,
    /// Serialises ModifyTopic operations handled by this broker.
    admin_lock: tokio::sync::Mutex<()>,
    /// Most bytes all wrappers of one PRODUCE or MULTIPRODUCE may decompress to together.
    request_decompression_budget: std::sync::atomic::AtomicUsize,
}

impl std::fmt::Debug for BrokerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerState").field("log_dir", &self.logs.dir()).finish()
    }
}

impl BrokerState {
    pub fn new(logs: Arc<LogManager>, defaults: BrokerDefaults, max_topic_name_length: usize) -> BrokerState {
        let topics = logs.topics().into_iter().map(|(t, _)| t).collect();
        BrokerState {
            logs,
            num_partitions: RwLock::new(defaults.num_partitions),
            partition_counts: RwLock::new(defaults.partition_counts.clone()),
            max_topic_name_length,
            topics: Mutex::new(topics),
            new_topics: Mutex::new(None),
            defaults,
            dynamic: RwLock::new(BTreeMap::new()),
            zk_client: RwLock::new(None),
            uses_zookeeper: AtomicBool::new(false),
            admin_lock: tokio::sync::Mutex::new(()),
            halt: watch::channel(None).0,
            request_decompression_budget: std::sync::atomic::AtomicUsize::new(usize::MAX),
        }
    }

    /// Sets `kwire.max.decompressed.request.bytes`.
    pub fn set_request_decompression_budget(&self, bytes: usize) {
        self.request_decompression_budget.store(bytes, Ordering::Relaxed);
    }

    /// What one request's wrappers may decompress to, together.
    pub fn request_decompression_budget(&self) -> usize {
        self.request_decompression_budget.load(Ordering::Relaxed)
    }

    /// An append or flush failed with an I/O error: like 0.7 the broker must stop at once
    /// (exit 1, no clean-shutdown marker), since what it acknowledged may not be on disk and
    /// recovery at the next start is the only safe way on. The first reason wins.
    pub fn halt(&self, reason: String) {
        self.halt.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            tracing::error!("halting: {reason}");
            *current = Some(reason);
            true
        });
    }

    /// Resolves with the reason once [`BrokerState::halt`] was called.
    pub async fn halted(&self) -> String {
        let mut rx = self.halt.subscribe();
        let reason = match rx.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            // The sender lives as long as `self`, so this cannot happen while we borrow it.
            Err(_) => std::future::pending().await,
        };
        reason
    }

    pub fn defaults(&self) -> &BrokerDefaults {
        &self.defaults
    }

    /// The topic's ModifyTopic overrides, if it has a configuration.
    pub fn topic_config(&self, topic: &str) -> Option<Overrides> {
        self.dynamic.read().unwrap_or_else(|e| e.into_inner()).get(topic).cloned()
    }

    /// Every topic with a configuration and its overrides.
    pub fn topic_configs(&self) -> BTreeMap<String, Overrides> {
        self.dynamic.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Makes `overrides` the topic's configuration (`None`: it has none) and applies it to the
    /// live logs and the partition count. Settings it does not override fall back to the
    /// broker's (its `topic.*` maps, then the defaults).
    pub fn apply_topic_config(&self, topic: &str, overrides: Option<Overrides>) -> Result<(), LogError> {
        let effective = overrides.clone().unwrap_or_default();
        {
            let mut map = self.dynamic.write().unwrap_or_else(|e| e.into_inner());
            match overrides {
                Some(o) => map.insert(topic.to_owned(), o),
                None => map.remove(topic),
            };
        }
        let count = effective.partitions().or_else(|| self.defaults.partition_counts.get(topic).copied());
        if count != self.partition_counts.read().unwrap_or_else(|e| e.into_inner()).get(topic).copied() {
            self.set_partition_count(topic, count);
        }
        self.logs.set_topic_overrides(topic, self.defaults.log_overrides(topic, &effective))
    }

    /// Creates every partition's log of `topic` now (ModifyTopic CREATE).
    pub fn create_partitions(&self, topic: &str) -> Result<(), LogError> {
        for p in 0..self.partition_count(topic) {
            self.logs.get_or_create(topic, p)?;
        }
        self.note_topic(topic);
        Ok(())
    }

    /// Whether this broker has a log or a configuration for `topic`.
    pub fn has_topic(&self, topic: &str) -> bool {
        self.topics.lock().unwrap_or_else(|e| e.into_inner()).contains(topic)
            || self.dynamic.read().unwrap_or_else(|e| e.into_inner()).contains_key(topic)
    }

    /// Deletes the topic here: its logs, its configuration, its registration. Returns how many
    /// partition logs were removed.
    pub fn delete_topic(&self, topic: &str) -> Result<usize, LogError> {
        let removed = self.logs.delete_topic(topic)?;
        self.topics.lock().unwrap_or_else(|e| e.into_inner()).remove(topic);
        self.apply_topic_config(topic, None)?;
        self.send(TopicEvent::Removed(topic.to_owned()));
        Ok(removed)
    }

    /// The current ZooKeeper session, if any.
    pub fn zk_client(&self) -> Option<zookeeper_client::Client> {
        self.zk_client.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn uses_zookeeper(&self) -> bool {
        self.uses_zookeeper.load(Ordering::Relaxed)
    }

    pub(crate) fn set_uses_zookeeper(&self) {
        self.uses_zookeeper.store(true, Ordering::Relaxed);
    }

    pub(crate) fn set_zk_client(&self, client: Option<zookeeper_client::Client>) {
        *self.zk_client.write().unwrap_or_else(|e| e.into_inner()) = client;
    }

    /// Held while a ModifyTopic operation runs on this broker.
    pub async fn admin_lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.admin_lock.lock().await
    }

    pub fn logs(&self) -> &Arc<LogManager> {
        &self.logs
    }

    pub fn max_topic_name_length(&self) -> usize {
        self.max_topic_name_length
    }

    /// 0.7's `partitionCount(topic)`: the topic's entry in `topic.partition.count.map`, else
    /// `num.partitions`.
    pub fn partition_count(&self, topic: &str) -> i32 {
        let map = self.partition_counts.read().unwrap_or_else(|e| e.into_inner());
        match map.get(topic) {
            Some(&n) => n,
            None => *self.num_partitions.read().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// Changes one topic's partition count (`None`: back to `num.partitions`) and re-advertises it.
    pub fn set_partition_count(&self, topic: &str, count: Option<i32>) {
        {
            let mut map = self.partition_counts.write().unwrap_or_else(|e| e.into_inner());
            match count {
                Some(n) => map.insert(topic.to_owned(), n),
                None => map.remove(topic),
            };
        }
        if self.topics.lock().unwrap_or_else(|e| e.into_inner()).contains(topic) {
            self.announce(topic);
        }
    }

    /// Changes a topic's log settings on the live logs (see [`LogManager::set_topic_overrides`]).
    pub fn set_topic_overrides(&self, topic: &str, overrides: TopicOverrides) -> Result<(), LogError> {
        self.logs.set_topic_overrides(topic, overrides)
    }

    /// Topics with a log on this broker, sorted.
    pub fn topics(&self) -> Vec<String> {
        self.topics.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }

    /// Records that `topic` has a log; the first time, tells the registrar.
    pub fn note_topic(&self, topic: &str) {
        let is_new = {
            let mut topics = self.topics.lock().unwrap_or_else(|e| e.into_inner());
            !topics.contains(topic) && topics.insert(topic.to_owned())
        };
        if is_new {
            self.announce(topic);
        }
    }

    fn announce(&self, topic: &str) {
        self.send(TopicEvent::Added(topic.to_owned()));
    }

    fn send(&self, event: TopicEvent) {
        if let Some(tx) = self.new_topics.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = tx.send(event);
        }
    }

    /// Connects the ZooKeeper registrar's topic channel.
    pub fn set_topic_listener(&self, tx: mpsc::UnboundedSender<TopicEvent>) {
        *self.new_topics.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
    }
}
