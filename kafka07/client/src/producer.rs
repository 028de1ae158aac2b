//! The producer. Records are buffered and sent in batches: per broker, one message set per
//! (topic, partition) — a single compressed wrapper when compression is on, as the Scala
//! producer writes it — and one MULTIPRODUCE when a batch spans several partitions of a broker,
//! a plain PRODUCE otherwise.
//!
//! Brokers come from a static list (partition −1: the broker picks, as 0.7's `broker.list`
//! mode) or from ZooKeeper (spec §4.4): the (broker, partition) pairs registered for the topic,
//! sorted, or partition 0 of every live broker when nobody has registered it yet.
//!
//! PRODUCE has no answer. [`Producer::sync`] sends every pending record and then makes one
//! OFFSETS round trip per connection used: the broker handles a connection's requests in order,
//! so the answer proves that everything before it was appended (or the connection was closed,
//! which is reported as an error).

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use kwire07_protocol::message::{put_compressed_set, put_message_set};
use kwire07_protocol::{Codec, Magic, ProduceRequest, OFFSETS_LATEST};

use crate::connection::BrokerConnection;
use crate::error::{ClientError, Result};
use crate::partitioner::Partitioner;
use crate::zk::ZkCluster;

/// 0.7's producer and broker default `max.message.size`.
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 1_000_000;
/// 0.7 async producer's default `batch.size`.
pub const DEFAULT_BATCH_SIZE: usize = 200;
/// Largest request frame we build (0.7 broker default `max.socket.request.bytes`, with room).
const MAX_REQUEST_BYTES: usize = 100 * 1024 * 1024;

/// Where the producer finds brokers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Discovery {
    /// `host:port` list; broker ids are the list positions.
    Static(Vec<String>),
    /// A ZooKeeper connect string.
    ZooKeeper(String),
}

#[derive(Debug, Clone)]
pub struct ProducerConfig {
    pub discovery: Discovery,
    pub partitioner: Partitioner,
    pub codec: Codec,
    pub magic: Magic,
    /// Records buffered before a batch goes out.
    pub batch_size: usize,
    /// Largest shallow message payload (a compressed wrapper counts compressed).
    pub max_message_size: usize,
    /// How long ZooKeeper topic information is reused.
    pub refresh_interval: Duration,
}

impl ProducerConfig {
    pub fn new(discovery: Discovery) -> ProducerConfig {
        ProducerConfig {
            discovery,
            partitioner: Partitioner::KeyHash,
            codec: Codec::None,
            magic: Magic::V1,
            batch_size: DEFAULT_BATCH_SIZE,
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            refresh_interval: Duration::from_secs(10),
        }
    }
}

/// A message to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub topic: String,
    /// Hashed (Java `String.hashCode`) to pick the partition, as 0.7 does.
    pub key: Option<String>,
    /// An explicit partition: on the first broker (lowest id) that has it.
    pub partition: Option<i32>,
    pub payload: Bytes,
}

impl Record {
    pub fn new(topic: &str, payload: impl Into<Bytes>) -> Record {
        Record { topic: topic.to_owned(), key: None, partition: None, payload: payload.into() }
    }

    pub fn with_key(mut self, key: &str) -> Record {
        self.key = Some(key.to_owned());
        self
    }

    pub fn with_partition(mut self, partition: i32) -> Record {
        self.partition = Some(partition);
        self
    }
}

/// Counters of what a producer has sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ProducerStats {
    pub records: u64,
    /// Message-set bytes sent (what the brokers append).
    pub set_bytes: u64,
    /// PRODUCE and MULTIPRODUCE requests sent.
    pub requests: u64,
}

/// (broker id, partition) pairs a topic may be sent to, sorted.
type Targets = Vec<(i32, i32)>;

pub struct Producer {
    config: ProducerConfig,
    zk: Option<ZkCluster>,
    /// Broker id → `host:port`.
    brokers: BTreeMap<i32, String>,
    brokers_read: Option<Instant>,
    targets: HashMap<String, (Instant, Targets)>,
    conns: HashMap<i32, BrokerConnection>,
    /// Per broker, a topic and partition produced to since the last sync (for the barrier).
    unsynced: BTreeMap<i32, (String, i32)>,
    pending: Vec<Record>,
    stats: ProducerStats,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer").field("brokers", &self.brokers).field("pending", &self.pending.len()).finish()
    }
}

impl Producer {
    pub async fn new(config: ProducerConfig) -> Result<Producer> {
        if config.magic == Magic::V0 && config.codec != Codec::None {
            return Err(ClientError::Config(
                "compression needs magic 1 (magic 0 messages cannot be compressed)".into(),
            ));
        }
        let (zk, brokers) = match &config.discovery {
            Discovery::Static(list) => {
                if list.is_empty() {
                    return Err(ClientError::Config("the static broker list is empty".into()));
                }
                (None, list.iter().enumerate().map(|(i, a)| (i as i32, a.clone())).collect())
            }
            Discovery::ZooKeeper(connect) => (Some(ZkCluster::connect(connect).await?), BTreeMap::new()),
        };
        Ok(Producer {
            config,
            zk,
            brokers,
            brokers_read: None,
            targets: HashMap::new(),
            conns: HashMap::new(),
            unsynced: BTreeMap::new(),
            pending: Vec::new(),
            stats: ProducerStats::default(),
        })
    }

    pub fn stats(&self) -> ProducerStats {
        self.stats
    }

    pub fn config(&self) -> &ProducerConfig {
        &self.config
    }

    /// Buffers `record`; sends a batch when `batch_size` records are waiting.
    pub async fn send(&mut self, record: Record) -> Result<()> {
        self.pending.push(record);
        if self.pending.len() >= self.config.batch_size.max(1) {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends every buffered record (no confirmation: PRODUCE has no answer). If choosing
    /// partitions fails (ZooKeeper unreachable), nothing is sent and the records stay buffered;
    /// if a send fails, that request's records are not retried beyond one reconnect.
    pub async fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let records = std::mem::take(&mut self.pending);
        let mut targets = Vec::with_capacity(records.len());
        // Candidates per topic, looked up once per batch (a batch rarely has more than a few).
        let mut candidates: Vec<(String, Targets)> = Vec::new();
        for r in &records {
            let known = candidates.iter().position(|(t, _)| *t == r.topic);
            let index = match known {
                Some(i) => i,
                None => match self.targets(&r.topic).await {
                    Ok(t) => {
                        candidates.push((r.topic.clone(), t));
                        candidates.len() - 1
                    }
                    Err(e) => {
                        // Nothing was sent: keep the records for the next attempt.
                        self.pending = records;
                        return Err(e);
                    }
                },
            };
            match self.choose(&candidates[index].1, r) {
                Ok(t) => targets.push(t),
                Err(e) => {
                    self.pending = records;
                    return Err(e);
                }
            }
        }
        // broker → (topic, partition) → payloads, in arrival order.
        let mut plan: BTreeMap<i32, BTreeMap<(String, i32), Vec<Bytes>>> = BTreeMap::new();
        self.stats.records += records.len() as u64;
        for (r, (broker, partition)) in records.into_iter().zip(targets) {
            plan.entry(broker).or_default().entry((r.topic, partition)).or_default().push(r.payload);
        }
        for (broker, sets) in plan {
            let mut entries = Vec::with_capacity(sets.len());
            for ((topic, partition), payloads) in sets {
                for messages in self.encode_sets(&topic, &payloads)? {
                    entries.push(ProduceRequest { topic: topic.clone(), partition, messages });
                }
            }
            if let Some(last) = entries.last() {
                self.unsynced.insert(broker, (last.topic.clone(), last.partition.max(0)));
            }
            for chunk in chunk_requests(entries) {
                self.send_entries(broker, chunk).await?;
            }
        }
        Ok(())
    }

    /// [`Producer::flush`], then an OFFSETS round trip on every connection written since the
    /// last sync: when it returns, the brokers have handled every record sent before.
    pub async fn sync(&mut self) -> Result<()> {
        self.flush().await?;
        for (broker, (topic, partition)) in std::mem::take(&mut self.unsynced) {
            // The round trip must use the connection the records went out on: a fresh one
            // would answer even though the broker closed the old one, refusing what it held.
            let answered = match self.conns.get_mut(&broker) {
                Some(conn) if !conn.peer_closed() => {
                    conn.offsets(&topic, partition, OFFSETS_LATEST, 1).await.map(|_| ())
                }
                Some(conn) => Err(ClientError::Closed { addr: conn.addr().to_owned() }),
                None => Err(ClientError::NoBroker(format!("id {broker} (its connection was lost before the sync)"))),
            };
            if let Err(e) = answered {
                self.conns.remove(&broker);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Sends what is buffered and waits for the brokers to have handled it.
    pub async fn close(mut self) -> Result<()> {
        self.sync().await
    }

    /// Message sets for one (topic, partition): one set when uncompressed, one wrapper per set
    /// when compressed, halving the group until each wrapper fits `max_message_size`.
    fn encode_sets(&self, topic: &str, payloads: &[Bytes]) -> Result<Vec<Bytes>> {
        let max = self.config.max_message_size;
        if let Some(big) = payloads.iter().find(|p| p.len() > max) {
            return Err(ClientError::ProduceTooLarge { topic: topic.to_owned(), size: big.len(), max });
        }
        let mut out = Vec::new();
        let mut stack = vec![payloads];
        while let Some(group) = stack.pop() {
            let mut buf = BytesMut::new();
            match (self.config.magic, self.config.codec) {
                (magic, Codec::None) => put_message_set(&mut buf, magic, group).map_err(ClientError::Encode)?,
                (_, codec) => put_compressed_set(&mut buf, codec, group).map_err(ClientError::Encode)?,
            }
            let wrapper_payload = buf.len().saturating_sub(10);
            if self.config.codec != Codec::None && wrapper_payload > max {
                if group.len() == 1 {
                    return Err(ClientError::ProduceTooLarge { topic: topic.to_owned(), size: wrapper_payload, max });
                }
                let (a, b) = group.split_at(group.len() / 2);
                stack.push(b);
                stack.push(a);
                continue;
            }
            out.push(buf.freeze());
        }
        Ok(out)
    }

    async fn send_entries(&mut self, broker: i32, mut entries: Vec<ProduceRequest>) -> Result<()> {
        // A write that fails never delivered a whole frame, so one retry on a fresh connection
        // cannot duplicate it.
        for attempt in 0..2 {
            let conn = self.connection(broker).await?;
            let result = if entries.len() == 1 {
                let e = entries.pop().expect("one entry");
                let r = conn.produce(&e.topic, e.partition, e.messages.clone()).await;
                entries.push(e);
                r
            } else {
                conn.multiproduce(entries.clone()).await
            };
            match result {
                Ok(()) => {
                    self.stats.requests += 1;
                    self.stats.set_bytes += entries.iter().map(|e| e.messages.len() as u64).sum::<u64>();
                    return Ok(());
                }
                Err(e) if attempt == 0 && e.is_connection_error() => {
                    tracing::warn!("{e}; reconnecting");
                    self.conns.remove(&broker);
                    self.brokers_read = None;
                    self.targets.clear();
                }
                Err(e) => {
                    self.conns.remove(&broker);
                    return Err(e);
                }
            }
        }
        unreachable!("the loop returns on its second attempt")
    }

    /// The open connection to `broker`, (re)connecting when there is none or the broker has
    /// closed it (a write to a socket the peer closed would be lost silently).
    async fn connection(&mut self, broker: i32) -> Result<&mut BrokerConnection> {
        let stale = self.conns.get(&broker).is_some_and(|c| c.peer_closed());
        if stale {
            self.conns.remove(&broker);
        }
        if !self.conns.contains_key(&broker) {
            self.refresh_brokers(false).await?;
            let addr =
                self.brokers.get(&broker).cloned().ok_or_else(|| ClientError::NoBroker(format!("id {broker}")))?;
            let conn = BrokerConnection::connect(&addr).await?;
            self.conns.insert(broker, conn);
        }
        Ok(self.conns.get_mut(&broker).expect("inserted above"))
    }

    async fn refresh_brokers(&mut self, force: bool) -> Result<()> {
        let Some(zk) = &self.zk else { return Ok(()) };
        let fresh = self.brokers_read.is_some_and(|t| t.elapsed() < self.config.refresh_interval);
        if fresh && !force {
            return Ok(());
        }
        self.brokers = zk.brokers().await?.into_iter().map(|(id, b)| (id, b.addr())).collect();
        self.brokers_read = Some(Instant::now());
        Ok(())
    }

    /// The sorted candidate (broker, partition) pairs of a topic.
    async fn targets(&mut self, topic: &str) -> Result<Targets> {
        if let Some((at, t)) = self.targets.get(topic) {
            if at.elapsed() < self.config.refresh_interval {
                return Ok(t.clone());
            }
        }
        self.refresh_brokers(false).await?;
        let targets: Targets = match &self.zk {
            None => self.brokers.keys().map(|&b| (b, -1)).collect(),
            Some(zk) => {
                let counts = zk.topic_partition_counts(topic).await?;
                let mut t: Targets = counts
                    .iter()
                    .filter(|(b, _)| self.brokers.contains_key(b))
                    .flat_map(|(&b, &n)| (0..n).map(move |p| (b, p)))
                    .collect();
                if t.is_empty() {
                    t = self.brokers.keys().map(|&b| (b, 0)).collect();
                }
                t
            }
        };
        if targets.is_empty() {
            return Err(ClientError::NoBroker(format!("topic {topic} (no live broker in ZooKeeper)")));
        }
        self.targets.insert(topic.to_owned(), (Instant::now(), targets.clone()));
        Ok(targets)
    }

    /// The (broker, partition) for `record` among its topic's `targets` (never empty).
    fn choose(&self, targets: &Targets, record: &Record) -> Result<(i32, i32)> {
        if let Some(p) = record.partition {
            let broker = targets
                .iter()
                .find(|&&(_, q)| q == p || q == -1)
                .or_else(|| targets.first())
                .map(|&(b, _)| b)
                .ok_or_else(|| ClientError::NoBroker(record.topic.clone()))?;
            return Ok((broker, p));
        }
        let i = self.config.partitioner.choose(record.key.as_deref(), targets.len());
        targets.get(i).copied().ok_or_else(|| ClientError::NoBroker(record.topic.clone()))
    }
}

/// Splits produce entries into requests under the frame and count limits.
fn chunk_requests(entries: Vec<ProduceRequest>) -> Vec<Vec<ProduceRequest>> {
    let mut out: Vec<Vec<ProduceRequest>> = Vec::new();
    let mut size = 0usize;
    for e in entries {
        let n = e.topic.len() + 10 + e.messages.len();
        let full = out.last().is_none_or(|c| c.len() >= i16::MAX as usize || size + n > MAX_REQUEST_BYTES);
        if full {
            out.push(Vec::new());
            size = 0;
        }
        size += n;
        out.last_mut().expect("pushed above").push(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kwire07_protocol::{DeepIter, ShallowIter};

    async fn producer(codec: Codec, magic: Magic, max: usize) -> Producer {
        let mut config = ProducerConfig::new(Discovery::Static(vec!["127.0.0.1:1".into()]));
        config.codec = codec;
        config.magic = magic;
        config.max_message_size = max;
        Producer::new(config).await.expect("static producers do not connect up front")
    }

    fn deep_payloads(sets: &[Bytes]) -> Vec<Bytes> {
        sets.iter().flat_map(|s| DeepIter::new(s.clone(), 0).map(|m| m.expect("valid").payload)).collect()
    }

    #[tokio::test]
    async fn compressed_batches_split_until_each_wrapper_fits() {
        // Incompressible payloads: 40 × 300 bytes cannot fit one 4000-byte wrapper.
        let mut rng = fastrand::Rng::with_seed(7);
        let payloads: Vec<Bytes> = (0..40).map(|_| (0..300).map(|_| rng.u8(..)).collect::<Vec<u8>>().into()).collect();
        for codec in [Codec::Gzip, Codec::Snappy] {
            let p = producer(codec, Magic::V1, 4000).await;
            let sets = p.encode_sets("t", &payloads).expect("encodes");
            assert!(sets.len() > 1, "{codec:?} split into {}", sets.len());
            for s in &sets {
                let outer: Vec<_> = ShallowIter::new(s, 0).map(|e| e.expect("entry")).collect();
                assert_eq!(outer.len(), 1, "one wrapper per set");
                assert!(outer[0].message.payload.len() <= 4000);
                assert_eq!(outer[0].message.codec(), codec);
            }
            assert_eq!(deep_payloads(&sets), payloads, "order and content kept");
        }
    }

    #[tokio::test]
    async fn uncompressed_sets_keep_the_magic_and_refuse_oversized_messages() {
        let payloads: Vec<Bytes> = vec![Bytes::from_static(b"a"), Bytes::from_static(b"bb")];
        for magic in [Magic::V0, Magic::V1] {
            let p = producer(Codec::None, magic, 10).await;
            let sets = p.encode_sets("t", &payloads).expect("encodes");
            assert_eq!(sets.len(), 1);
            assert!(ShallowIter::new(&sets[0], 0).all(|e| e.expect("entry").message.magic == magic));
            assert_eq!(deep_payloads(&sets), payloads);
            let err = p.encode_sets("t", &[Bytes::from(vec![0u8; 11])]).expect_err("too large");
            assert!(matches!(err, ClientError::ProduceTooLarge { size: 11, max: 10, .. }), "{err}");
        }
        let err = Producer::new({
            let mut c = ProducerConfig::new(Discovery::Static(vec!["x:1".into()]));
            c.magic = Magic::V0;
            c.codec = Codec::Gzip;
            c
        })
        .await
        .expect_err("magic 0 cannot be compressed");
        assert!(matches!(err, ClientError::Config(_)));
    }

    #[test]
    fn requests_are_chunked_under_the_count_limit() {
        let e = |i: usize| ProduceRequest { topic: "t".into(), partition: i as i32, messages: Bytes::new() };
        let chunks = chunk_requests((0..40_000).map(e).collect());
        assert_eq!(chunks.iter().map(Vec::len).collect::<Vec<_>>(), [32_767, 40_000 - 32_767]);
        assert!(chunk_requests(Vec::new()).is_empty());
    }
}
