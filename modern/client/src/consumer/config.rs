//! The consumer's configs, named and defaulted as Kafka's Java consumer names and defaults them
//! (`ConsumerConfig`): a typed builder per key, and [`ConsumerConfig::set`] for Kafka's spelling.

use std::time::Duration;

use kwire_connection::{ClientConfig, Credentials};

use crate::config::{parse_bool, parse_choice, parse_int, parse_list, parse_ms, ConfigError};

/// Which group protocol a member speaks (`group.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupProtocol {
    /// JoinGroup, SyncGroup, Heartbeat: the members' leader assigns (`classic`, the default).
    Classic,
    /// KIP-848's ConsumerGroupHeartbeat: the coordinator assigns (`consumer`).
    Consumer,
}

/// Where a partition without a committed offset starts (`auto.offset.reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetReset {
    Earliest,
    Latest,
    /// No reset: NoOffsetForPartition or OffsetOutOfRange is raised instead.
    None,
    /// KIP-1106: the first offset whose timestamp is at most this long ago.
    ByDuration(Duration),
}

/// `isolation.level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadUncommitted,
    /// Only committed transactional records, up to the last stable offset; aborted ones are
    /// skipped.
    ReadCommitted,
}

impl IsolationLevel {
    /// The wire value of Fetch and ListOffsets.
    pub fn as_i8(self) -> i8 {
        match self {
            IsolationLevel::ReadUncommitted => 0,
            IsolationLevel::ReadCommitted => 1,
        }
    }
}

/// A client-side assignor of classic groups (`partition.assignment.strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AssignmentStrategy {
    /// Kafka's `RangeAssignor` (`range`), eager.
    Range,
    /// Kafka's `RoundRobinAssignor` (`roundrobin`), eager.
    RoundRobin,
    /// Kafka's `CooperativeStickyAssignor` (`cooperative-sticky`): KIP-429's incremental
    /// rebalances, only moved partitions stop.
    CooperativeSticky,
}

impl AssignmentStrategy {
    /// The protocol name members announce in JoinGroup, as Kafka's assignors name themselves.
    pub fn name(self) -> &'static str {
        match self {
            AssignmentStrategy::Range => "range",
            AssignmentStrategy::RoundRobin => "roundrobin",
            AssignmentStrategy::CooperativeSticky => "cooperative-sticky",
        }
    }

    /// By protocol name or by the Java class name Kafka's configs use.
    pub fn parse(value: &str) -> Option<AssignmentStrategy> {
        let short = value.trim().rsplit('.').next().unwrap_or_default();
        match short {
            "range" | "RangeAssignor" => Some(AssignmentStrategy::Range),
            "roundrobin" | "RoundRobinAssignor" => Some(AssignmentStrategy::RoundRobin),
            "cooperative-sticky" | "CooperativeStickyAssignor" => Some(AssignmentStrategy::CooperativeSticky),
            _ => None,
        }
    }
}

/// Everything a [`Consumer`](super::Consumer) is configured with. `ConsumerConfig::new(bootstrap)`
/// has Kafka's defaults; each builder method is named after the Kafka config it sets.
#[derive(Debug, Clone)]
pub struct ConsumerConfig {
    /// `bootstrap.servers`: `host:port`, comma-separated.
    pub bootstrap_servers: Vec<String>,
    /// `client.id`.
    pub client_id: String,
    /// `group.id`: none for a consumer of assigned partitions only.
    pub group_id: Option<String>,
    /// `group.instance.id`: a static member (KIP-345).
    pub group_instance_id: Option<String>,
    /// `group.protocol`.
    pub group_protocol: GroupProtocol,
    /// `group.remote.assignor`: the server-side assignor a KIP-848 member asks for.
    pub group_remote_assignor: Option<String>,
    /// `partition.assignment.strategy`, in order of preference.
    pub partition_assignment_strategy: Vec<AssignmentStrategy>,
    /// `session.timeout.ms` (classic groups).
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms` (classic groups; KIP-848's interval comes from the broker).
    pub heartbeat_interval: Duration,
    /// `max.poll.interval.ms`: also the rebalance timeout.
    pub max_poll_interval: Duration,
    /// `max.poll.records`.
    pub max_poll_records: usize,
    /// `enable.auto.commit`.
    pub enable_auto_commit: bool,
    /// `auto.commit.interval.ms`.
    pub auto_commit_interval: Duration,
    /// `auto.offset.reset`.
    pub auto_offset_reset: OffsetReset,
    /// `isolation.level`.
    pub isolation_level: IsolationLevel,
    /// `fetch.min.bytes`.
    pub fetch_min_bytes: i32,
    /// `fetch.max.wait.ms`.
    pub fetch_max_wait: Duration,
    /// `fetch.max.bytes`: the most one Fetch answer carries; also the most a broker's fetched
    /// and not yet polled data may hold before its next fetch.
    pub fetch_max_bytes: i32,
    /// `max.partition.fetch.bytes`: the most one partition's share of a Fetch carries; also
    /// the prefetch bound of a partition.
    pub max_partition_fetch_bytes: i32,
    /// `client.rack`: sent in Fetch so the broker may name a closer replica (KIP-392).
    pub client_rack: Option<String>,
    /// `request.timeout.ms`.
    pub request_timeout: Duration,
    /// `default.api.timeout.ms`: how long commit, committed, position and the like wait.
    pub default_api_timeout: Duration,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `retry.backoff.max.ms`.
    pub retry_backoff_max: Duration,
    /// `metadata.max.age.ms`: how often metadata is read again without a reason.
    pub metadata_max_age: Duration,
    /// `check.crcs`.
    pub check_crcs: bool,
    /// `exclude.internal.topics`: patterns never match `__consumer_offsets` and the like.
    pub exclude_internal_topics: bool,
    /// `allow.auto.create.topics`: whether subscribing may create a topic (when the broker
    /// allows it).
    pub allow_auto_create_topics: bool,
    /// The bound on a compressed batch's decompressed size (not a Kafka config: Kafka trusts
    /// its brokers; this client does not).
    pub max_decompressed_batch_bytes: usize,
    /// Connection settings (SASL, TLS, timeouts) as `kwire-connection` takes them.
    pub connection: ClientConfig,
    /// `sasl.mechanism` and the user of `sasl.jaas.config`, until both are known.
    sasl_mechanism: Option<String>,
    sasl_login: Option<(String, String)>,
}

impl ConsumerConfig {
    /// Kafka's defaults, with these bootstrap servers (`host:port`, comma-separated).
    pub fn new(bootstrap_servers: &str) -> ConsumerConfig {
        ConsumerConfig {
            bootstrap_servers: parse_list(bootstrap_servers),
            client_id: "kwire-consumer".to_owned(),
            group_id: None,
            group_instance_id: None,
            group_protocol: GroupProtocol::Classic,
            group_remote_assignor: None,
            partition_assignment_strategy: vec![AssignmentStrategy::Range, AssignmentStrategy::CooperativeSticky],
            session_timeout: Duration::from_millis(45_000),
            heartbeat_interval: Duration::from_millis(3_000),
            max_poll_interval: Duration::from_millis(300_000),
            max_poll_records: 500,
            enable_auto_commit: true,
            auto_commit_interval: Duration::from_millis(5_000),
            auto_offset_reset: OffsetReset::Latest,
            isolation_level: IsolationLevel::ReadUncommitted,
            fetch_min_bytes: 1,
            fetch_max_wait: Duration::from_millis(500),
            fetch_max_bytes: 52_428_800,
            max_partition_fetch_bytes: 1_048_576,
            client_rack: None,
            request_timeout: Duration::from_millis(30_000),
            default_api_timeout: Duration::from_millis(60_000),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_millis(1_000),
            metadata_max_age: Duration::from_millis(300_000),
            check_crcs: true,
            exclude_internal_topics: true,
            allow_auto_create_topics: true,
            max_decompressed_batch_bytes: kwire_records::DEFAULT_MAX_DECOMPRESSED_SIZE,
            connection: ClientConfig::default(),
            sasl_mechanism: None,
            sasl_login: None,
        }
    }

    /// Sets a config by Kafka's key (`group.id`, `fetch.max.bytes`, ...). Keys of Kafka's Java
    /// consumer that mean nothing here (deserializers, interceptors, metrics, socket buffers)
    /// are accepted and ignored; any other key is an error.
    pub fn set(mut self, key: &str, value: &str) -> Result<ConsumerConfig, ConfigError> {
        let v = value.trim();
        match key {
            "bootstrap.servers" => self.bootstrap_servers = parse_list(v),
            "client.id" => self.client_id = v.to_owned(),
            "group.id" => self.group_id = non_empty(v),
            "group.instance.id" => self.group_instance_id = non_empty(v),
            "group.protocol" => {
                self.group_protocol = match parse_choice(key, v, &["classic", "consumer"])? {
                    "classic" => GroupProtocol::Classic,
                    _ => GroupProtocol::Consumer,
                }
            }
            "group.remote.assignor" => self.group_remote_assignor = non_empty(v),
            "partition.assignment.strategy" => {
                let mut strategies = Vec::new();
                for name in parse_list(v) {
                    let strategy = AssignmentStrategy::parse(&name).ok_or_else(|| {
                        ConfigError::new(
                            key,
                            value,
                            "expected range, roundrobin or cooperative-sticky (or their Java class names)",
                        )
                    })?;
                    strategies.push(strategy);
                }
                if strategies.is_empty() {
                    return Err(ConfigError::new(key, value, "at least one assignor is needed"));
                }
                self.partition_assignment_strategy = strategies;
            }
            "session.timeout.ms" => self.session_timeout = parse_ms(key, v)?,
            "heartbeat.interval.ms" => self.heartbeat_interval = parse_ms(key, v)?,
            "max.poll.interval.ms" => self.max_poll_interval = positive_ms(key, v)?,
            "max.poll.records" => self.max_poll_records = parse_int(key, v, 1, i32::MAX as usize)?,
            "enable.auto.commit" => self.enable_auto_commit = parse_bool(key, v)?,
            "auto.commit.interval.ms" => self.auto_commit_interval = parse_ms(key, v)?,
            "auto.offset.reset" => self.auto_offset_reset = parse_reset(key, v)?,
            "isolation.level" => {
                self.isolation_level = match parse_choice(key, v, &["read_uncommitted", "read_committed"])? {
                    "read_committed" => IsolationLevel::ReadCommitted,
                    _ => IsolationLevel::ReadUncommitted,
                }
            }
            "fetch.min.bytes" => self.fetch_min_bytes = parse_int(key, v, 0, i32::MAX)?,
            "fetch.max.wait.ms" => self.fetch_max_wait = parse_ms(key, v)?,
            "fetch.max.bytes" => self.fetch_max_bytes = parse_int(key, v, 0, i32::MAX)?,
            "max.partition.fetch.bytes" => self.max_partition_fetch_bytes = parse_int(key, v, 0, i32::MAX)?,
            "client.rack" => self.client_rack = non_empty(v),
            "request.timeout.ms" => {
                self.request_timeout = positive_ms(key, v)?;
                self.connection.request_timeout = self.request_timeout;
            }
            "default.api.timeout.ms" => self.default_api_timeout = positive_ms(key, v)?,
            "retry.backoff.ms" => self.retry_backoff = parse_ms(key, v)?,
            "retry.backoff.max.ms" => self.retry_backoff_max = parse_ms(key, v)?,
            "metadata.max.age.ms" => self.metadata_max_age = parse_ms(key, v)?,
            "check.crcs" => self.check_crcs = parse_bool(key, v)?,
            "exclude.internal.topics" => self.exclude_internal_topics = parse_bool(key, v)?,
            "allow.auto.create.topics" => self.allow_auto_create_topics = parse_bool(key, v)?,
            "socket.connection.setup.timeout.ms" => self.connection.connect_timeout = positive_ms(key, v)?,
            "security.protocol" => {
                let protocol = parse_choice(key, v, &["PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL"])?;
                if protocol.ends_with("SSL") && !cfg!(feature = "tls") {
                    return Err(ConfigError::new(key, value, "this build has no TLS (the `tls` feature)"));
                }
            }
            "sasl.mechanism" | "sasl.jaas.config" => self = self.set_sasl(key, v)?,
            k if IGNORED.contains(&k) => tracing::debug!(key = k, "config accepted and ignored: nothing to do in Rust"),
            _ => return Err(ConfigError::unknown(key, value)),
        }
        Ok(self)
    }

    /// SASL from Kafka's `sasl.mechanism` and a `sasl.jaas.config` of the PLAIN or SCRAM login
    /// module (`... required username="u" password="p";`).
    fn set_sasl(mut self, key: &str, value: &str) -> Result<ConsumerConfig, ConfigError> {
        if key == "sasl.mechanism" {
            parse_choice(key, value, &["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])?;
            self.sasl_mechanism = Some(value.to_ascii_uppercase());
        } else {
            let field = |name: &str| {
                let start = value.find(&format!("{name}=\""))? + name.len() + 2;
                let end = value[start..].find('"')? + start;
                Some(value[start..end].to_owned())
            };
            let (Some(user), Some(password)) = (field("username"), field("password")) else {
                return Err(ConfigError::new(key, value, "expected username=\"...\" password=\"...\""));
            };
            self.sasl_login = Some((user, password));
        }
        if let (Some(mechanism), Some((user, password))) = (&self.sasl_mechanism, &self.sasl_login) {
            self.connection.sasl = Some(match mechanism.as_str() {
                "SCRAM-SHA-256" => Credentials::scram_sha256(user, password),
                "SCRAM-SHA-512" => Credentials::scram_sha512(user, password),
                _ => Credentials::plain(user, password),
            });
        } else if let (None, Some((user, password))) = (&self.sasl_mechanism, &self.sasl_login) {
            // Kafka's default mechanism is GSSAPI; with a PLAIN login module, PLAIN is meant.
            self.connection.sasl = Some(Credentials::plain(user, password));
        }
        Ok(self)
    }

    /// `key=value` pairs in order, as [`ConsumerConfig::set`] takes them.
    pub fn set_all<'a>(
        mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<ConsumerConfig, ConfigError> {
        for (key, value) in pairs {
            self = self.set(key, value)?;
        }
        Ok(self)
    }

    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = id.into();
        self
    }

    pub fn group_id(mut self, group: impl Into<String>) -> Self {
        self.group_id = Some(group.into());
        self
    }

    pub fn group_instance_id(mut self, id: impl Into<String>) -> Self {
        self.group_instance_id = Some(id.into());
        self
    }

    pub fn group_protocol(mut self, protocol: GroupProtocol) -> Self {
        self.group_protocol = protocol;
        self
    }

    pub fn group_remote_assignor(mut self, assignor: impl Into<String>) -> Self {
        self.group_remote_assignor = Some(assignor.into());
        self
    }

    pub fn partition_assignment_strategy(mut self, strategies: impl IntoIterator<Item = AssignmentStrategy>) -> Self {
        let strategies: Vec<_> = strategies.into_iter().collect();
        if !strategies.is_empty() {
            self.partition_assignment_strategy = strategies;
        }
        self
    }

    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    pub fn heartbeat_interval(mut self, interval: Duration) -> Self {
        self.heartbeat_interval = interval;
        self
    }

    pub fn max_poll_interval(mut self, interval: Duration) -> Self {
        self.max_poll_interval = interval.max(Duration::from_millis(1));
        self
    }

    pub fn max_poll_records(mut self, records: usize) -> Self {
        self.max_poll_records = records.max(1);
        self
    }

    pub fn enable_auto_commit(mut self, enable: bool) -> Self {
        self.enable_auto_commit = enable;
        self
    }

    pub fn auto_commit_interval(mut self, interval: Duration) -> Self {
        self.auto_commit_interval = interval;
        self
    }

    pub fn auto_offset_reset(mut self, reset: OffsetReset) -> Self {
        self.auto_offset_reset = reset;
        self
    }

    pub fn isolation_level(mut self, level: IsolationLevel) -> Self {
        self.isolation_level = level;
        self
    }

    pub fn fetch_min_bytes(mut self, bytes: i32) -> Self {
        self.fetch_min_bytes = bytes.max(0);
        self
    }

    pub fn fetch_max_wait(mut self, wait: Duration) -> Self {
        self.fetch_max_wait = wait;
        self
    }

    pub fn fetch_max_bytes(mut self, bytes: i32) -> Self {
        self.fetch_max_bytes = bytes.max(0);
        self
    }

    pub fn max_partition_fetch_bytes(mut self, bytes: i32) -> Self {
        self.max_partition_fetch_bytes = bytes.max(0);
        self
    }

    pub fn client_rack(mut self, rack: impl Into<String>) -> Self {
        self.client_rack = non_empty(&rack.into());
        self
    }

    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self.connection.request_timeout = timeout;
        self
    }

    pub fn default_api_timeout(mut self, timeout: Duration) -> Self {
        self.default_api_timeout = timeout;
        self
    }

    pub fn retry_backoff(mut self, backoff: Duration) -> Self {
        self.retry_backoff = backoff;
        self
    }

    pub fn metadata_max_age(mut self, age: Duration) -> Self {
        self.metadata_max_age = age;
        self
    }

    pub fn check_crcs(mut self, check: bool) -> Self {
        self.check_crcs = check;
        self
    }

    pub fn exclude_internal_topics(mut self, exclude: bool) -> Self {
        self.exclude_internal_topics = exclude;
        self
    }

    pub fn allow_auto_create_topics(mut self, allow: bool) -> Self {
        self.allow_auto_create_topics = allow;
        self
    }

    /// The connection's settings (SASL, TLS, ...); `client.id` and `request.timeout.ms` are
    /// taken from this config when the consumer starts.
    pub fn connection(mut self, connection: ClientConfig) -> Self {
        self.connection = connection;
        self
    }

    /// The configs that cannot be used together, as Kafka's consumer refuses them at
    /// construction.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.bootstrap_servers.is_empty() {
            return Err(ConfigError::new("bootstrap.servers", "", "at least one host:port is needed"));
        }
        if self.group_id.is_none() && self.group_instance_id.is_some() {
            return Err(ConfigError::new(
                "group.instance.id",
                self.group_instance_id.as_deref().unwrap_or_default(),
                "a static member needs a group.id",
            ));
        }
        if self.group_protocol == GroupProtocol::Classic && self.heartbeat_interval >= self.session_timeout {
            return Err(ConfigError::new(
                "heartbeat.interval.ms",
                &self.heartbeat_interval.as_millis().to_string(),
                "must be lower than session.timeout.ms",
            ));
        }
        Ok(())
    }

    /// The connection config the consumer's cluster uses.
    pub(crate) fn client_config(&self) -> ClientConfig {
        let mut config = self.connection.clone().client_id(self.client_id.clone());
        // A Fetch waits up to fetch.max.wait.ms at the broker: the request timeout covers that.
        config.request_timeout = self.request_timeout.max(self.fetch_max_wait + Duration::from_secs(5));
        config
    }
}

/// Keys of Kafka's Java consumer with no meaning here.
const IGNORED: &[&str] = &[
    "key.deserializer",
    "value.deserializer",
    "interceptor.classes",
    "metric.reporters",
    "metrics.num.samples",
    "metrics.sample.window.ms",
    "metrics.recording.level",
    "auto.include.jmx.reporter",
    "enable.metrics.push",
    "send.buffer.bytes",
    "receive.buffer.bytes",
    "reconnect.backoff.ms",
    "reconnect.backoff.max.ms",
    "socket.connection.setup.timeout.max.ms",
    "connections.max.idle.ms",
    "client.dns.lookup",
    "security.providers",
    "internal.leave.group.on.close",
];

fn non_empty(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

fn positive_ms(key: &str, value: &str) -> Result<Duration, ConfigError> {
    parse_int::<u64>(key, value, 1, i64::MAX as u64).map(Duration::from_millis)
}

/// `earliest`, `latest`, `none`, or KIP-1106's `by_duration:` with an ISO-8601 duration
/// (`PnDTnHnMn.nS`).
fn parse_reset(key: &str, value: &str) -> Result<OffsetReset, ConfigError> {
    let lower = value.to_ascii_lowercase();
    if let Some(iso) = lower.strip_prefix("by_duration:") {
        return parse_iso_duration(iso)
            .map(OffsetReset::ByDuration)
            .ok_or_else(|| ConfigError::new(key, value, "expected by_duration:PnDTnHnMn.nS"));
    }
    Ok(match parse_choice(key, value, &["earliest", "latest", "none"])? {
        "earliest" => OffsetReset::Earliest,
        "latest" => OffsetReset::Latest,
        _ => OffsetReset::None,
    })
}

/// An ISO-8601 duration of days, hours, minutes and seconds (`P1DT2H3M4.5S`), as Java's
/// `Duration.parse` reads the ones KIP-1106 takes; negative durations are refused.
fn parse_iso_duration(text: &str) -> Option<Duration> {
    let rest = text.trim().to_ascii_uppercase();
    let rest = rest.strip_prefix('P')?;
    let (days, time) = match rest.split_once('T') {
        Some((d, t)) => (d, t),
        None => (rest, ""),
    };
    let mut total = 0f64;
    let mut any = false;
    if !days.is_empty() {
        total += days.strip_suffix('D')?.parse::<f64>().ok()? * 86_400.0;
        any = true;
    }
    let mut number = String::new();
    for c in time.chars() {
        let unit = match c {
            'H' => 3_600.0,
            'M' => 60.0,
            'S' => 1.0,
            _ => {
                number.push(c);
                continue;
            }
        };
        total += number.parse::<f64>().ok()? * unit;
        number.clear();
        any = true;
    }
    (any && number.is_empty() && total.is_finite() && total >= 0.0).then(|| Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_keys_set_the_typed_fields() {
        let config = ConsumerConfig::new("a:9092, b:9092")
            .set_all([
                ("group.id", "billing"),
                ("group.protocol", "CONSUMER"),
                ("partition.assignment.strategy", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor,range"),
                ("auto.offset.reset", "by_duration:P1DT1H"),
                ("isolation.level", "read_committed"),
                ("max.poll.records", "10"),
                ("key.deserializer", "org.apache.kafka.common.serialization.StringDeserializer"),
            ])
            .unwrap();
        assert_eq!(config.bootstrap_servers, ["a:9092", "b:9092"]);
        assert_eq!(config.group_id.as_deref(), Some("billing"));
        assert_eq!(config.group_protocol, GroupProtocol::Consumer);
        assert_eq!(
            config.partition_assignment_strategy,
            [AssignmentStrategy::CooperativeSticky, AssignmentStrategy::Range]
        );
        assert_eq!(config.auto_offset_reset, OffsetReset::ByDuration(Duration::from_secs(90_000)));
        assert_eq!(config.isolation_level, IsolationLevel::ReadCommitted);
        assert_eq!(config.max_poll_records, 10);
    }

    #[test]
    fn bad_values_and_unknown_keys_are_refused_with_the_key() {
        let base = || ConsumerConfig::new("a:1");
        assert_eq!(base().set("group.protocl", "classic").unwrap_err().key, "group.protocl");
        assert!(base().set("auto.offset.reset", "smallest").is_err());
        assert!(base().set("auto.offset.reset", "by_duration:-P1D").is_err());
        assert!(base().set("partition.assignment.strategy", "sticky-ish").is_err());
        assert!(base().set("max.poll.records", "0").is_err());
        let e = base().set("session.timeout.ms", "10").unwrap().validate().unwrap_err();
        assert_eq!(e.key, "heartbeat.interval.ms");
    }

    #[test]
    fn sasl_comes_from_the_jaas_line() {
        let config = ConsumerConfig::new("a:1")
            .set("sasl.mechanism", "SCRAM-SHA-512")
            .unwrap()
            .set(
                "sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"carol\" password=\"s\";",
            )
            .unwrap();
        assert!(config.connection.sasl.is_some());
    }
}
