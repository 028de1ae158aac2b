//! What the consumer tests share: an in-process cluster, records written with a known
//! content (key `p<partition>`, value the sequence number), and checks of what consumers read.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::time::Duration;

use kwire::Records;
use kwire_client::consumer::{Consumer, ConsumerConfig, ConsumerError, ConsumerRecord, TopicPartition};
use kwire_connection::{ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use kwire_records::{BatchBuilder, BatchOptions, Compression};

/// Logs to stderr as `KWIRE_LOG` says (`KWIRE_LOG=kwire_client=debug`), once per binary.
pub fn logs() {
    if let Ok(filter) = tracing_subscriber::EnvFilter::try_from_env("KWIRE_LOG") {
        let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    }
}

/// An in-process cluster of `nodes` with no initial rebalance delay.
pub async fn fake(nodes: usize) -> FakeCluster {
    logs();
    FakeCluster::start(FakeConfig::default().nodes(nodes).group_initial_rebalance_delay(Duration::ZERO))
        .await
        .expect("the in-process cluster starts")
}

/// A cluster client for writing test records.
pub async fn writer(bootstrap: &str) -> Cluster {
    let servers: Vec<&str> = bootstrap.split(',').collect();
    Cluster::connect(&servers, ClientConfig::default()).await.expect("connects")
}

/// Writes records `from..to` to `topic`'s `partition` in batches of `per_batch` (lz4): value
/// `i`, key `p<partition>`, timestamped now (a broker's retention deletes segments of records
/// stamped days ago).
pub async fn produce(cluster: &Cluster, topic: &str, partition: i32, from: u64, to: u64, per_batch: u64) {
    let mut i = from;
    while i < to {
        let mut batch = BatchBuilder::new(BatchOptions::new(2, Compression::Lz4)).expect("options");
        let end = (i + per_batch).min(to);
        for n in i..end {
            let key = format!("p{partition}");
            batch.append(now_ms() as i64, Some(key.as_bytes()), Some(n.to_string().as_bytes()), &[]).expect("append");
        }
        let records = Records::from_bytes(batch.build().expect("build"));
        cluster.produce(topic, partition, records, -1, Duration::from_secs(10)).await.expect("produce");
        i = end;
    }
}

/// A consumer config reading from the beginning.
pub fn config(bootstrap: &str) -> ConsumerConfig {
    ConsumerConfig::new(bootstrap).set("auto.offset.reset", "earliest").expect("valid")
}

pub fn value(record: &ConsumerRecord) -> u64 {
    std::str::from_utf8(record.value.as_deref().unwrap_or_default())
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Polls until `n` records arrived or `within` passed; errors end it.
pub async fn read(consumer: &Consumer, n: usize, within: Duration) -> Result<Vec<ConsumerRecord>, ConsumerError> {
    let deadline = tokio::time::Instant::now() + within;
    let mut out = Vec::new();
    while out.len() < n && tokio::time::Instant::now() < deadline {
        out.extend(consumer.poll(Duration::from_millis(200)).await?);
    }
    Ok(out)
}

/// Per partition, the offsets read, in the order read.
pub fn by_partition(records: &[ConsumerRecord]) -> BTreeMap<TopicPartition, Vec<i64>> {
    let mut out: BTreeMap<TopicPartition, Vec<i64>> = BTreeMap::new();
    for r in records {
        out.entry(r.topic_partition()).or_default().push(r.offset);
    }
    out
}

/// Partitions 0..n of `topic`.
pub fn partitions(topic: &str, n: i32) -> Vec<TopicPartition> {
    (0..n).map(|p| TopicPartition::new(topic, p)).collect()
}

/// What a member saw: the records it read, and its assignment after each rebalance step, with
/// when it saw them.
#[derive(Debug, Default, Clone)]
pub struct MemberLog {
    pub records: Vec<ConsumerRecord>,
    /// (when, in ms since the epoch, partitions held after the step).
    pub assignments: Vec<(u64, std::collections::BTreeSet<TopicPartition>)>,
    pub errors: Vec<String>,
}

/// A listener that commits what was read before partitions are revoked, and logs each step.
pub struct Logging {
    pub log: std::sync::Arc<std::sync::Mutex<MemberLog>>,
}

impl kwire_client::consumer::ConsumerRebalanceListener for Logging {
    fn on_partitions_revoked<'a>(
        &'a mut self,
        consumer: &'a Consumer,
        partitions: &'a [TopicPartition],
    ) -> kwire_client::consumer::ListenerFuture<'a> {
        Box::pin(async move {
            if let Err(e) = consumer.commit_sync().await {
                self.log.lock().unwrap().errors.push(format!("commit on revoke: {e}"));
            }
            let mut held = consumer.assignment();
            for tp in partitions {
                held.remove(tp);
            }
            self.log.lock().unwrap().assignments.push((now_ms(), held));
        })
    }

    fn on_partitions_assigned<'a>(
        &'a mut self,
        consumer: &'a Consumer,
        _: &'a [TopicPartition],
    ) -> kwire_client::consumer::ListenerFuture<'a> {
        Box::pin(async move {
            self.log.lock().unwrap().assignments.push((now_ms(), consumer.assignment()));
        })
    }

    fn on_partitions_lost<'a>(
        &'a mut self,
        consumer: &'a Consumer,
        partitions: &'a [TopicPartition],
    ) -> kwire_client::consumer::ListenerFuture<'a> {
        Box::pin(async move {
            let mut held = consumer.assignment();
            for tp in partitions {
                held.remove(tp);
            }
            self.log.lock().unwrap().assignments.push((now_ms(), held));
        })
    }
}

/// A member polling (and committing after each poll) until told to stop; `close` decides
/// whether it leaves cleanly or is dropped as a killed process would be.
pub struct Running {
    pub log: std::sync::Arc<std::sync::Mutex<MemberLog>>,
    stop: tokio::sync::watch::Sender<Option<bool>>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    pub async fn start(config: ConsumerConfig, topics: &[&str]) -> Running {
        let log = std::sync::Arc::new(std::sync::Mutex::new(MemberLog::default()));
        let consumer = Consumer::new(config).await.expect("consumer starts");
        consumer.set_rebalance_listener(Logging { log: log.clone() }).await;
        consumer.subscribe(topics.iter().map(|t| t.to_string())).await.expect("subscribes");
        let (stop, mut stopped) = tokio::sync::watch::channel(None);
        let task_log = log.clone();
        let task = tokio::spawn(async move {
            loop {
                let flag = *stopped.borrow();
                if let Some(clean) = flag {
                    if clean {
                        if let Err(e) = consumer.close().await {
                            task_log.lock().unwrap().errors.push(format!("close: {e}"));
                        }
                    }
                    return;
                }
                tokio::select! {
                    polled = consumer.poll(Duration::from_millis(100)) => match polled {
                        Ok(records) => {
                            let empty = records.is_empty();
                            task_log.lock().unwrap().records.extend(records);
                            if !empty {
                                if let Err(e) = consumer.commit_sync().await {
                                    task_log.lock().unwrap().errors.push(format!("commit: {e}"));
                                }
                            }
                        }
                        Err(e) => {
                            task_log.lock().unwrap().errors.push(format!("poll: {e}"));
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    },
                    _ = stopped.changed() => {}
                }
            }
        });
        Running { log, stop, task }
    }

    /// Closes (leaving the group) or, `clean == false`, drops the consumer without a word.
    pub async fn stop(self, clean: bool) -> MemberLog {
        let _ = self.stop.send(Some(clean));
        let _ = self.task.await;
        let log = self.log.lock().unwrap().clone();
        log
    }

    pub fn records(&self) -> usize {
        self.log.lock().unwrap().records.len()
    }

    pub fn held(&self) -> std::collections::BTreeSet<TopicPartition> {
        self.log.lock().unwrap().assignments.last().map(|(_, held)| held.clone()).unwrap_or_default()
    }
}

/// Wall-clock milliseconds, comparable with another process's on this machine.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Waits until `check` holds, polling every 50 ms, up to `within`.
pub async fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    check()
}
