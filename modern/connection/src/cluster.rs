//! Routing over a cluster: bootstrap servers, then Metadata for the brokers and partition
//! leaders, FindCoordinator for groups and transactions (`cluster/coordinator.rs`), one
//! [`Client`] per broker. A connection that closed (the broker went away, a request timed out)
//! is dropped and opened again on next use; the one opened to a bootstrap server is kept, and
//! serves as that broker's when the metadata names it. Requests that fail with a retriable
//! error (NOT_LEADER_OR_FOLLOWER, a lost connection, ...) refresh the metadata and are retried
//! a bounded number of times. It routes; it does not batch: users bring their record batches.

mod coordinator;

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::produce_response::PartitionProduceResponse;
use kwire::messages::{ApiKey, MetadataRequest};
use kwire::{ErrorCode, Records, Uuid};
use tokio::sync::Mutex;

use crate::{Client, ClientConfig, Error};

/// Which coordinator FindCoordinator looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CoordinatorType {
    Group = 0,
    Transaction = 1,
}

#[derive(Default)]
struct Routes {
    /// `host:port` of each broker.
    brokers: HashMap<i32, String>,
    /// The leader of each partition.
    leaders: HashMap<(String, i32), i32>,
    /// Each topic's id (Produce v13 and Fetch v13 name topics by id).
    topic_ids: HashMap<String, Uuid>,
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
    /// and route is dropped, and Metadata is read again through the bootstrap servers.
    pub async fn refresh(&self, topics: &[&str]) -> Result<(), Error> {
        let request = MetadataRequest {
            topics: Some(
                topics.iter().map(|t| MetadataRequestTopic { name: Some((*t).into()), ..Default::default() }).collect(),
            ),
            ..Default::default()
        };
        let mut metadata = self.any().await?.send(request.clone()).await?;
        if metadata.error_code == ErrorCode::REBOOTSTRAP_REQUIRED {
            tracing::info!("the broker asked for a rebootstrap (KIP-1102): reconnecting through the bootstrap servers");
            *self.routes.lock().await = Routes::default();
            metadata = self.any().await?.send(request).await?;
        }
        if metadata.error_code != ErrorCode::NONE {
            return Err(Error::Broker { api: ApiKey::Metadata, code: metadata.error_code, message: None });
        }
        let mut routes = self.routes.lock().await;
        routes.brokers = metadata.brokers.iter().map(|b| (b.node_id.get(), format!("{}:{}", b.host, b.port))).collect();
        for topic in &metadata.topics {
            let Some(name) = &topic.name else { continue };
            routes.leaders.retain(|(t, _), _| t != name.as_str());
            if topic.error_code == ErrorCode::NONE && !topic.topic_id.is_nil() {
                routes.topic_ids.insert(name.to_string(), topic.topic_id);
            } else {
                routes.topic_ids.remove(name.as_str());
            }
            for p in topic.partitions.iter().filter(|p| p.error_code == ErrorCode::NONE && p.leader_id.get() >= 0) {
                routes.leaders.insert((name.to_string(), p.partition_index), p.leader_id.get());
            }
        }
        let Routes { brokers, clients, .. } = &mut *routes;
        clients
            .retain(|address, _| brokers.values().any(|b| b == address) || self.bootstrap.iter().any(|b| b == address));
        Ok(())
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
        let key = (topic.to_string(), partition);
        let known = self.routes.lock().await.leaders.get(&key).copied();
        let id = match known {
            Some(id) => id,
            None => {
                self.refresh(&[topic]).await?;
                let id = self.routes.lock().await.leaders.get(&key).copied();
                id.ok_or_else(|| Error::Routing(format!("no leader for {topic}-{partition}")))?
            }
        };
        self.broker(id).await
    }

    /// `topic`'s id, reading Metadata when unknown (nil for a broker older than topic ids).
    pub async fn topic_id(&self, topic: &str) -> Result<Uuid, Error> {
        if let Some(id) = self.routes.lock().await.topic_ids.get(topic) {
            return Ok(*id);
        }
        self.refresh(&[topic]).await?;
        Ok(self.routes.lock().await.topic_ids.get(topic).copied().unwrap_or_default())
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
                    // topic's id goes too (UNKNOWN_TOPIC_ID: the topic was deleted or recreated).
                    let mut routes = self.routes.lock().await;
                    routes.leaders.remove(&(topic.to_string(), partition));
                    routes.topic_ids.remove(topic);
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
