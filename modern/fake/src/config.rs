//! How a fake cluster is started.

use std::time::Duration;

/// What [`FakeCluster::start`](crate::FakeCluster::start) builds: how many nodes, where they
/// listen and what they advertise, and the broker defaults clients see.
#[derive(Debug, Clone)]
pub struct FakeConfig {
    pub(crate) nodes: usize,
    pub(crate) listen: Vec<String>,
    pub(crate) advertise: Vec<String>,
    pub(crate) cluster_id: String,
    pub(crate) auto_create_topics: bool,
    pub(crate) default_partitions: i32,
    pub(crate) max_frame: usize,
    pub(crate) idle_timeout: Duration,
    pub(crate) max_connections: usize,
    pub(crate) max_buffered_request_bytes: usize,
    pub(crate) request_timeout: Duration,
    pub(crate) group_initial_rebalance_delay: Duration,
    /// SASL users; none: the listeners are plaintext without authentication.
    pub(crate) users: Vec<kwire_connection::Credentials>,
    /// Per API key, the versions of the release the cluster behaves as (None: Kafka 4.4.0's).
    pub(crate) versions: Option<std::collections::HashMap<i16, (i16, i16)>>,
    /// Share groups' defaults (Kafka's `group.share.record.lock.duration.ms`,
    /// `group.share.delivery.count.limit`, `group.share.session.timeout.ms`).
    pub(crate) share_record_lock_duration: Duration,
    pub(crate) share_delivery_count_limit: i16,
    pub(crate) share_session_timeout: Duration,
}

impl Default for FakeConfig {
    /// One node on `127.0.0.1:0`, Kafka's broker defaults: topics created on first use with
    /// one partition (`auto.create.topics.enable`, `num.partitions`), requests up to 100 MiB
    /// (`socket.request.max.bytes`), idle connections closed after 10 minutes
    /// (`connections.max.idle.ms`), a new group's first round of joins held 3 s
    /// (`group.initial.rebalance.delay.ms`); and limits of its own: 1,024 connections a node,
    /// 256 MiB of requests still arriving across the cluster, 30 s for a request to arrive.
    fn default() -> Self {
        FakeConfig {
            nodes: 1,
            listen: Vec::new(),
            advertise: Vec::new(),
            cluster_id: "kwire-fake-cluster".to_string(),
            auto_create_topics: true,
            default_partitions: 1,
            max_frame: 100 << 20,
            idle_timeout: Duration::from_secs(600),
            max_connections: 1024,
            max_buffered_request_bytes: 256 << 20,
            request_timeout: Duration::from_secs(30),
            group_initial_rebalance_delay: Duration::from_secs(3),
            users: Vec::new(),
            versions: None,
            share_record_lock_duration: Duration::from_secs(30),
            share_delivery_count_limit: 5,
            share_session_timeout: Duration::from_secs(45),
        }
    }
}

impl FakeConfig {
    /// The number of nodes (ids 0 to `n - 1`).
    pub fn nodes(mut self, n: usize) -> Self {
        self.nodes = n.max(1);
        self
    }

    /// Where each node listens, in node order (`HOST:PORT`, port 0 for a free one); nodes
    /// without an address listen on `127.0.0.1:0`.
    pub fn listen<S: Into<String>>(mut self, addrs: impl IntoIterator<Item = S>) -> Self {
        self.listen = addrs.into_iter().map(Into::into).collect();
        self
    }

    /// What Metadata tells clients each node is (`HOST:PORT`, in node order), for a proxy in
    /// front; by default the address each node listens on.
    pub fn advertise<S: Into<String>>(mut self, addrs: impl IntoIterator<Item = S>) -> Self {
        self.advertise = addrs.into_iter().map(Into::into).collect();
        self
    }

    /// Whether Metadata and Produce create unknown topics (Kafka's `auto.create.topics.enable`).
    pub fn auto_create_topics(mut self, on: bool) -> Self {
        self.auto_create_topics = on;
        self
    }

    /// Partitions of a topic created without a count (Kafka's `num.partitions`).
    pub fn default_partitions(mut self, n: i32) -> Self {
        self.default_partitions = n.max(1);
        self
    }

    /// The largest request a node reads (Kafka's `socket.request.max.bytes`); a larger one
    /// closes its connection.
    pub fn max_frame(mut self, bytes: usize) -> Self {
        self.max_frame = bytes;
        self
    }

    /// How long a connection may stay silent before a node closes it.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Connections a node keeps at once; more are closed as they arrive.
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = n.max(1);
        self
    }

    /// The bytes of requests still arriving that all connections together may hold (what
    /// Kafka's `queued.max.request.bytes` bounds); a connection that finds none left stops
    /// reading until some is given back, or closes when its request time runs out. At least
    /// `max_frame`, or the largest requests could never be read.
    pub fn max_buffered_request_bytes(mut self, bytes: usize) -> Self {
        self.max_buffered_request_bytes = bytes;
        self
    }

    /// How long a request may take to arrive, from its first byte to its last (or to get room
    /// to be read in): a client trickling a request, or one stuck waiting for room, is closed.
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// How long the first round of joins of an empty group waits for more members (Kafka's
    /// `group.initial.rebalance.delay.ms`, 3 s by default; zero for tests that want groups to
    /// form at once).
    pub fn group_initial_rebalance_delay(mut self, delay: Duration) -> Self {
        self.group_initial_rebalance_delay = delay;
        self
    }

    /// How long a share group member holds the records it acquired before they go back to be
    /// delivered again (Kafka's `group.share.record.lock.duration.ms`, 30 s by default; a group
    /// may set its own `share.record.lock.duration.ms` within Kafka's bounds). Shorter for tests
    /// of lock expiry.
    pub fn share_record_lock_duration(mut self, lock: Duration) -> Self {
        self.share_record_lock_duration = lock;
        self
    }

    /// How often a share group delivers a record before archiving it (Kafka's
    /// `group.share.delivery.count.limit`, 5 by default).
    pub fn share_delivery_count_limit(mut self, limit: i16) -> Self {
        self.share_delivery_count_limit = limit.max(1);
        self
    }

    /// How long a share group member may stay silent before it is removed and its records
    /// released (Kafka's `group.share.session.timeout.ms`, 45 s by default).
    pub fn share_session_timeout(mut self, timeout: Duration) -> Self {
        self.share_session_timeout = timeout;
        self
    }

    /// Adds a SASL user (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512): with any, every listener is a
    /// SASL_PLAINTEXT one, where a connection must authenticate (SaslHandshake v1, then
    /// SaslAuthenticate) before anything but ApiVersions is answered.
    pub fn sasl_user(mut self, credentials: kwire_connection::Credentials) -> Self {
        self.users.push(credentials);
        self
    }

    /// The cluster id Metadata and DescribeCluster report.
    pub fn cluster_id(mut self, id: impl Into<String>) -> Self {
        self.cluster_id = id.into();
        self
    }

    /// Behaves as the Kafka release whose `kafka-clients-X.jar` (or schema folder) is given:
    /// ApiVersions advertises that release's APIs and versions (within what kwire's
    /// messages read: Kafka 4.0 removed versions older releases still had), and requests
    /// outside them close the connection, as that release's broker would.
    pub fn behave_as(mut self, schemas: impl AsRef<std::path::Path>) -> Result<Self, String> {
        let loaded = kwire_codegen::load_schemas(&[schemas.as_ref()], false).map_err(|e| e.to_string())?;
        let versions = loaded
            .messages
            .iter()
            .filter(|m| m.kind == kwire_codegen::ir::MessageKind::Request)
            .filter_map(|m| Some((m.api_key?, (m.valid_versions.min, m.valid_versions.max))))
            .collect();
        self.versions = Some(versions);
        Ok(self)
    }
}
