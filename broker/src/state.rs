//! What every connection shares: the log manager, the partition counts and the set of topics
//! this broker has, which the ZooKeeper registrar advertises. Partition counts and per-topic
//! log overrides can be changed while the broker runs.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use kafka_wire_runtime::log::{LogError, LogManager, TopicOverrides};
use tokio::sync::mpsc;

pub struct BrokerState {
    logs: Arc<LogManager>,
    num_partitions: RwLock<i32>,
    partition_counts: RwLock<HashMap<String, i32>>,
    max_topic_name_length: usize,
    /// Topics with a log here; a topic is added before its first append returns.
    topics: Mutex<BTreeSet<String>>,
    /// Tells the ZooKeeper registrar about new topics.
    new_topics: Mutex<Option<mpsc::UnboundedSender<String>>>,
}

impl std::fmt::Debug for BrokerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerState").field("log_dir", &self.logs.dir()).finish()
    }
}

impl BrokerState {
    pub fn new(
        logs: Arc<LogManager>,
        num_partitions: i32,
        partition_counts: HashMap<String, i32>,
        max_topic_name_length: usize,
    ) -> BrokerState {
        let topics = logs.topics().into_iter().map(|(t, _)| t).collect();
        BrokerState {
            logs,
            num_partitions: RwLock::new(num_partitions),
            partition_counts: RwLock::new(partition_counts),
            max_topic_name_length,
            topics: Mutex::new(topics),
            new_topics: Mutex::new(None),
        }
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
        if let Some(tx) = self.new_topics.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            let _ = tx.send(topic.to_owned());
        }
    }

    /// Connects the ZooKeeper registrar's topic channel.
    pub fn set_topic_listener(&self, tx: mpsc::UnboundedSender<String>) {
        *self.new_topics.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
    }
}
