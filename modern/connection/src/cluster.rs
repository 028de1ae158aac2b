//! Routing over a cluster: bootstrap servers, then Metadata for the brokers and partition
//! leaders, FindCoordinator for groups and transactions (`cluster/coordinator.rs`), one
//! [`Client`] per broker. A connection that closed (the broker went away, a request timed out)
//! is dropped and opened again on next use; the one opened to a bootstrap server is kept, and
//! serves as that broker's when the metadata names it. Requests that fail with a retriable
//! error (NOT_LEADER_OR_FOLLOWER, a lost connection, ...) refresh the metadata and are retried
//! a bounded number of times. It routes; it does not batch: users bring their record batches.

mod coordinator;
pub mod metadata;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::produce_response::PartitionProduceResponse;
use kwire::messages::{ApiKey, MetadataRequest};
use kwire::{ErrorCode, Records, Uuid};
use tokio::sync::Mutex;

use crate::{Client, ClientConfig, Error};
pub use metadata::{BrokerMetadata, Metadata, PartitionMetadata, TopicMetadata};

/// Which coordinator FindCoordinator looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordinatorType {
    Group = 0,
    Transaction = 1,
}

#[derive(Default)]
struct Routes {
    /// `host:port` of each broker: the metadata's, and coordinators FindCoordinator named.
    brokers: HashMap<i32, String>,
    /// The connections, by the address dialled: a broker's or a bootstrap server's.
    clients: HashMap<String, Client>,
    /// The coordinator of each group or transactional id, as FindCoordinator last said.
    coordinators: HashMap<(CoordinatorType, String), i32>,
}

impl Routes {
    /// The open connection to `address`, or one to the same socket address dialled under
    /// another name (a bootstrap server given by IP); closed ones are dropped on the way.
    fn open(&mut self, address: &str) -> Option<Client> {
        self.clients.retain(|_, client| !client.is_closed());
        if let Some(client) = self.clients.get(address) {
            return Some(client.clone());
        }
        let addr: SocketAddr = address.parse().ok()?;
        self.clients.values().find(|client| client.peer() == addr).cloned()
    }
}

/// A cluster reached through bootstrap servers.
pub struct Cluster {
    bootstrap: Vec<String>,
    config: ClientConfig,
    routes: Mutex<Routes>,
    /// The last Metadata answers: leaders and topic ids (Produce v13 and Fetch v13 name
    /// topics by id) come from here. Swapped whole, never held across an await.
    metadata: std::sync::Mutex<Arc<Metadata>>,
    /// How many times a retriable failure is tried in all (default 5).
    pub attempts: u32,
    /// The pause before the first retry, doubled every time (default 100 ms)...
    pub backoff: Duration,
    /// ...up to this (default 2 s).
    pub max_backoff: Duration,
}

impl Cluster {
    /// A cluster known through `bootstrap` (`host:port` each, or comma-separated lists as in
    /// Kafka's `bootstrap.servers`); connects to the first that answers and reads the brokers
    /// from Metadata.
    pub async fn connect(bootstrap: &[&str], config: ClientConfig) -> Result<Cluster, Error> {
        let cluster = Cluster {
            bootstrap: bootstrap
                .iter()
                .flat_map(|s| s.split(','))
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            config,
            routes: Mutex::new(Routes::default()),
            metadata: std::sync::Mutex::new(Arc::new(Metadata::default())),
            attempts: 5,
            backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(2),
        };
        cluster.refresh(&[]).await?;
        Ok(cluster)
    }

    /// Reads Metadata (for `topics`, or brokers only when empty) from any reachable broker
    /// and replaces what is known of them. A broker answering REBOOTSTRAP_REQUIRED (KIP-1102,
    /// Metadata v13) says that all this client knows of the cluster is stale: every connection
    /// and route is dropped, and Metadata is read again through the bootstrap servers. Topics
    /// are created by the broker when it auto-creates them (`auto.create.topics.enable`); see
    /// [`Cluster::refresh_topics`] to ask without that.
    pub async fn refresh(&self, topics: &[&str]) -> Result<(), Error> {
        self.refresh_topics(topics, true).await
    }

    /// [`Cluster::refresh`], saying whether the broker may create a topic it does not have
    /// (Kafka's producer allows it, its consumer by default does not).
    pub async fn refresh_topics(&self, topics: &[&str], allow_auto_creation: bool) -> Result<(), Error> {
        let topics =
            topics.iter().map(|t| MetadataRequestTopic { name: Some((*t).into()), ..Default::default() }).collect();
        self.read_metadata(Some(topics), allow_auto_creation).await
    }

    /// Reads Metadata for every topic of the cluster (internal ones included, marked so) and
    /// replaces the topics known with them: for pattern subscriptions and listings.
    pub async fn refresh_all(&self) -> Result<(), Error> {
        self.read_metadata(None, false).await
    }

    async fn read_metadata(&self, topics: Option<Vec<MetadataRequestTopic>>, auto_create: bool) -> Result<(), Error> {
        let all_topics = topics.is_none();
        let request = MetadataRequest { topics, allow_auto_topic_creation: auto_create, ..Default::default() };
        let mut metadata = self.any().await?.send(request.clone()).await?;
        if metadata.error_code == ErrorCode::REBOOTSTRAP_REQUIRED {
            tracing::info!("the broker asked for a rebootstrap (KIP-1102): reconnecting through the bootstrap servers");
            *self.routes.lock().await = Routes::default();
            *lock(&self.metadata) = Arc::new(Metadata::default());
            metadata = self.any().await?.send(request).await?;
        }
        if metadata.error_code != ErrorCode::NONE {
            return Err(Error::Broker { api: ApiKey::Metadata, code: metadata.error_code, message: None });
        }
        let snapshot = {
            let mut current = lock(&self.metadata);
            *current = Arc::new(current.merged(&metadata, all_topics));
            current.clone()
        };
        let mut routes = self.routes.lock().await;
        for broker in snapshot.brokers.values() {
            routes.brokers.insert(broker.id, broker.address());
        }
        let Routes { brokers, clients, .. } = &mut *routes;
        brokers.retain(|id, _| snapshot.brokers.contains_key(id));
        clients
            .retain(|address, _| brokers.values().any(|b| b == address) || self.bootstrap.iter().any(|b| b == address));
        Ok(())
    }

    /// What the last Metadata answers said (a snapshot: cheap, never stale within itself).
    pub fn metadata(&self) -> Arc<Metadata> {
        lock(&self.metadata).clone()
    }

    /// `topic`'s metadata, reading Metadata when the snapshot does not have it. A topic the
    /// cluster does not have comes back with its error (UNKNOWN_TOPIC_OR_PARTITION), not as an
    /// `Err`: the caller decides whether to wait for it.
    pub async fn topic(&self, topic: &str) -> Result<Arc<TopicMetadata>, Error> {
        if let Some(known) = self.metadata().topics.get(topic).filter(|t| t.error == ErrorCode::NONE) {
            return Ok(known.clone());
        }
        self.refresh(&[topic]).await?;
        self.metadata()
            .topics
            .get(topic)
            .cloned()
            .ok_or_else(|| Error::Routing(format!("the Metadata answer has no topic {topic}")))
    }

    /// Forgets what is known of `topic`, so that the next use reads Metadata again (after
    /// NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_ID, a fenced leader epoch...).
    pub fn forget_topic(&self, topic: &str) {
        let mut current = lock(&self.metadata);
        if current.topics.contains_key(topic) {
            let mut changed = Metadata::clone(&current);
            changed.topics.remove(topic);
            *current = Arc::new(changed);
        }
    }

    /// A connection to any broker: one already open, else the known brokers and then the
    /// bootstrap servers in turn (the one that answers is kept).
    pub async fn any(&self) -> Result<Client, Error> {
        let mut addresses = {
            let mut routes = self.routes.lock().await;
            routes.clients.retain(|_, client| !client.is_closed());
            if let Some(client) = routes.clients.values().next() {
                return Ok(client.clone());
            }
            routes.brokers.values().cloned().collect::<Vec<_>>()
        };
        addresses.extend(self.bootstrap.iter().cloned());
        let mut last = Error::Routing("no bootstrap server given".into());
        for address in addresses {
            match self.open(&address).await {
                Ok(client) => return Ok(client),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The connection to broker `id`: the one open, else a new one.
    pub async fn broker(&self, id: i32) -> Result<Client, Error> {
        let address = {
            let mut routes = self.routes.lock().await;
            let address = routes.brokers.get(&id).cloned();
            let address = address.ok_or_else(|| Error::Routing(format!("no broker {id} in the metadata")))?;
            if let Some(client) = routes.open(&address) {
                return Ok(client);
            }
            address
        };
        self.open(&address).await
    }

    /// Opens a connection to `address` and keeps it, unless another caller opened one
    /// meanwhile (then that one, and this one closes).
    async fn open(&self, address: &str) -> Result<Client, Error> {
        let client = Client::connect(address, self.config.clone()).await?;
        let mut routes = self.routes.lock().await;
        if let Some(open) = routes.open(address) {
            return Ok(open);
        }
        routes.clients.insert(address.to_string(), client.clone());
        Ok(client)
    }

    /// The connection to the leader of `topic`'s `partition`, reading Metadata when unknown.
    pub async fn leader(&self, topic: &str, partition: i32) -> Result<Client, Error> {
        let id = match self.metadata().leader(topic, partition) {
            Some(id) => id,
            None => {
                self.refresh(&[topic]).await?;
                let id = self.metadata().leader(topic, partition);
                id.ok_or_else(|| Error::Routing(format!("no leader for {topic}-{partition}")))?
            }
        };
        self.broker(id).await
    }

    /// `topic`'s id, reading Metadata when unknown (nil for a broker older than topic ids).
    pub async fn topic_id(&self, topic: &str) -> Result<Uuid, Error> {
        if let Some(id) = self.metadata().topic_id(topic) {
            return Ok(id);
        }
        self.refresh(&[topic]).await?;
        Ok(self.metadata().topic_id(topic).unwrap_or_default())
    }

    /// Runs `attempt` against the leader of `topic`'s `partition`; on a retriable error it
    /// forgets that leader (and its connection, if the connection failed), so that the next
    /// try reads the metadata again, and retries as [`Cluster::retrying`] does.
    pub async fn with_leader<T, F, Fut>(&self, topic: &str, partition: i32, attempt: F) -> Result<T, Error>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.retrying(|| async {
            let result = match self.leader(topic, partition).await {
                Ok(client) => attempt(client).await,
                Err(e) => Err(e),
            };
            if let Err(e) = &result {
                if e.is_retriable() {
                    // A connection that failed is closed, and `broker` opens another; the
                    // topic's leaders and id go too (UNKNOWN_TOPIC_ID: the topic was deleted
                    // or recreated).
                    self.forget_topic(topic);
                }
            }
            result
        })
        .await
    }

    /// Runs `op` until it succeeds or fails with an error that is not retriable (a broker
    /// error code that is, such as COORDINATOR_LOAD_IN_PROGRESS, counts when `op` returns it
    /// as [`Error::Broker`]), `attempts` times in all, with the backoff doubling.
    pub async fn retrying<T, F, Fut>(&self, op: F) -> Result<T, Error>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        let mut pause = self.backoff;
        let mut tries = 0;
        loop {
            tries += 1;
            match op().await {
                Err(e) if e.is_retriable() && tries < self.attempts => {
                    tracing::debug!(error = %e, tries, "retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(self.max_backoff);
                }
                Err(e) if e.is_retriable() => {
                    return Err(Error::RetriesExhausted { attempts: tries, last: Box::new(e) })
                }
                other => return other,
            }
        }
    }

    /// Produces a record batch (or several, concatenated) to `topic`'s `partition` on its
    /// leader, naming the topic by id where the version needs it, retrying as
    /// [`Cluster::with_leader`] does (UNKNOWN_TOPIC_ID, a topic recreated under another id,
    /// reads the metadata again); a partition error is an [`Error::Broker`].
    pub async fn produce(
        &self,
        topic: &str,
        partition: i32,
        records: Records,
        acks: i16,
        timeout: Duration,
    ) -> Result<PartitionProduceResponse, Error> {
        self.with_leader(topic, partition, |client| {
            let records = records.clone();
            async move {
                let topic_id = self.topic_id(topic).await?;
                let request = crate::requests::produce(topic, topic_id, partition, records, acks, timeout);
                let response = client.send(request).await?;
                let answer =
                    response.responses.into_iter().flat_map(|t| t.partition_responses).find(|p| p.index == partition);
                match answer {
                    Some(p) if p.error_code == ErrorCode::NONE => Ok(p),
                    Some(p) => Err(Error::Broker {
                        api: ApiKey::Produce,
                        code: p.error_code,
                        message: p.error_message.map(|m| m.to_string()),
                    }),
                    // acks = 0: nothing comes back.
                    None if acks == 0 => Ok(PartitionProduceResponse { index: partition, ..Default::default() }),
                    None => Err(Error::Routing(format!("the produce response has no {topic}-{partition}"))),
                }
            }
        })
        .await
    }
}

/// The metadata lock: held for a clone or a swap, never across an await, so a panic while held
/// cannot leave it half-written.
fn lock(metadata: &std::sync::Mutex<Arc<Metadata>>) -> std::sync::MutexGuard<'_, Arc<Metadata>> {
    metadata.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
