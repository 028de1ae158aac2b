//! The producer's configuration: Kafka's producer configs under Kafka's names and defaults,
//! as typed builder methods and as `set("linger.ms", "5")`.

use std::sync::Arc;
use std::time::Duration;

use kwire_connection::{ClientConfig, Credentials};
use kwire_records::Compression;

use super::partitioner::Partitioner;
use crate::config::{parse_bool, parse_choice, parse_int, parse_list, parse_ms, ConfigError};

/// How many acknowledgements a write waits for (`acks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Acks {
    /// `acks=0`: nothing comes back; offsets are unknown (-1).
    None,
    /// `acks=1`: the leader wrote it.
    Leader,
    /// `acks=all` (-1): every in-sync replica has it.
    All,
}

impl Acks {
    /// The value of Produce's `acks` field.
    pub fn wire(self) -> i16 {
        match self {
            Acks::None => 0,
            Acks::Leader => 1,
            Acks::All => -1,
        }
    }
}

/// Which transaction protocol a transactional producer speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionProtocol {
    /// KIP-890's v2 where the cluster finalizes `transaction.version` 2 (Kafka 4.x), v1
    /// otherwise: what Kafka's Java client does.
    Auto,
    /// v1 whatever the cluster offers (AddPartitionsToTxn, Produce up to v11, EndTxn v4).
    V1,
}

/// A producer's settings. `ProducerConfig::new("host:9092")` then builder methods named after
/// Kafka's configs, or [`ProducerConfig::set`] with Kafka's keys.
#[derive(Clone)]
pub struct ProducerConfig {
    pub bootstrap_servers: Vec<String>,
    pub client_id: String,
    pub acks: Acks,
    pub linger: Duration,
    pub batch_size: usize,
    pub buffer_memory: usize,
    pub max_block: Duration,
    pub compression: Compression,
    /// `compression.gzip.level` (-1: zlib's default, 6), `compression.lz4.level` (9),
    /// `compression.zstd.level` (3): the one of `compression.type` applies (KIP-390). See
    /// `kwire_records::compression::compress_at` for what each codec honours.
    pub compression_gzip_level: i32,
    pub compression_lz4_level: i32,
    pub compression_zstd_level: i32,
    pub max_in_flight: usize,
    /// `None` until set: on by default unless `acks` or `max.in.flight...` conflict with it,
    /// as Kafka's client decides since 3.0.
    pub enable_idempotence: Option<bool>,
    pub delivery_timeout: Duration,
    pub request_timeout: Duration,
    pub retry_backoff: Duration,
    pub retry_backoff_max: Duration,
    pub retries: u32,
    pub max_request_size: usize,
    pub transactional_id: Option<String>,
    pub transaction_timeout: Duration,
    pub partitioner_ignore_keys: bool,
    pub partitioner_adaptive: bool,
    /// `partitioner.availability.timeout.ms`: a broker with batches ready this long without
    /// taking any is left out of the choice for records without a key (0: never).
    pub partitioner_availability_timeout: Duration,
    pub metadata_max_age: Duration,
    pub transaction_protocol: TransactionProtocol,
    /// A partitioner of the user's, consulted before Kafka's.
    pub partitioner: Option<Arc<dyn Partitioner>>,
    /// SASL credentials (`sasl.mechanism`, `sasl.username`, `sasl.password`).
    pub sasl: Option<Credentials>,
    /// The connection settings below the producer (TLS, frame limits...); the producer sets
    /// the client id, request timeout and in-flight limit on it.
    pub connection: ClientConfig,
    sasl_parts: (Option<String>, Option<String>, Option<String>),
}

impl std::fmt::Debug for ProducerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProducerConfig")
            .field("bootstrap_servers", &self.bootstrap_servers)
            .field("client_id", &self.client_id)
            .field("acks", &self.acks)
            .field("linger", &self.linger)
            .field("batch_size", &self.batch_size)
            .field("compression", &self.compression)
            .field("enable_idempotence", &self.enable_idempotence)
            .field("transactional_id", &self.transactional_id)
            .finish_non_exhaustive()
    }
}

impl Default for ProducerConfig {
    fn default() -> Self {
        ProducerConfig {
            bootstrap_servers: Vec::new(),
            client_id: "kwire-producer".to_string(),
            acks: Acks::All,
            linger: Duration::from_millis(5),
            // librdkafka's and kgo's batch size (Kafka's Java client: 16 KiB): a batch per
            // 16 records cost the producer and the broker 2.5× the CPU per GB here
            // (README, "Producing").
            batch_size: 1_000_000,
            buffer_memory: 32 << 20,
            max_block: Duration::from_secs(60),
            compression: Compression::None,
            compression_gzip_level: -1,
            compression_lz4_level: 9,
            compression_zstd_level: 3,
            max_in_flight: 5,
            enable_idempotence: None,
            delivery_timeout: Duration::from_secs(120),
            request_timeout: Duration::from_secs(30),
            retry_backoff: Duration::from_millis(100),
            retry_backoff_max: Duration::from_secs(1),
            retries: i32::MAX as u32,
            // kgo's (the broker's `socket.request.max.bytes`); Java's 1 MiB would put one
            // partition's batch in a request. A record over the topic's `max.message.bytes`
            // is refused by the broker and fails as `RecordTooLarge` either way.
            max_request_size: 100 << 20,
            transactional_id: None,
            transaction_timeout: Duration::from_secs(60),
            partitioner_ignore_keys: false,
            partitioner_adaptive: true,
            partitioner_availability_timeout: Duration::ZERO,
            metadata_max_age: Duration::from_secs(300),
            transaction_protocol: TransactionProtocol::Auto,
            partitioner: None,
            sasl: None,
            connection: ClientConfig::default(),
            sasl_parts: (None, None, None),
        }
    }
}

/// The codec names of `compression.type`.
fn compression_named(key: &str, value: &str) -> Result<Compression, ConfigError> {
    Ok(match parse_choice(key, value, &["none", "gzip", "snappy", "lz4", "zstd"])? {
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => Compression::None,
    })
}

impl ProducerConfig {
    /// Defaults, with `bootstrap.servers` (a comma-separated list, or one `host:port`).
    pub fn new(bootstrap_servers: &str) -> ProducerConfig {
        ProducerConfig { bootstrap_servers: parse_list(bootstrap_servers), ..ProducerConfig::default() }
    }

    /// Sets a config by Kafka's name: `acks`, `linger.ms`, `batch.size`, `buffer.memory`,
    /// `max.block.ms`, `compression.type`, `max.in.flight.requests.per.connection`,
    /// `enable.idempotence`, `delivery.timeout.ms`, `request.timeout.ms`, `retry.backoff.ms`,
    /// `retry.backoff.max.ms`, `retries`, `max.request.size`, `transactional.id`,
    /// `transaction.timeout.ms`, `partitioner.ignore.keys`,
    /// `partitioner.adaptive.partitioning.enable`, `metadata.max.age.ms`, `client.id`,
    /// `bootstrap.servers`, and `sasl.mechanism` (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) with
    /// `sasl.username` and `sasl.password`. An unknown key or a bad value is an error naming
    /// both.
    pub fn set(mut self, key: &str, value: &str) -> Result<ProducerConfig, ConfigError> {
        let ms = || parse_ms(key, value);
        match key {
            "bootstrap.servers" => self.bootstrap_servers = parse_list(value),
            "client.id" => self.client_id = value.to_string(),
            "acks" => {
                self.acks = match parse_choice(key, value, &["all", "-1", "0", "1"])? {
                    "0" => Acks::None,
                    "1" => Acks::Leader,
                    _ => Acks::All,
                }
            }
            "linger.ms" => self.linger = ms()?,
            "batch.size" => self.batch_size = parse_int(key, value, 0, i32::MAX as usize)?,
            "buffer.memory" => self.buffer_memory = parse_int(key, value, 0, i64::MAX as usize)?,
            "max.block.ms" => self.max_block = ms()?,
            "compression.type" => self.compression = compression_named(key, value)?,
            "compression.gzip.level" => self.compression_gzip_level = parse_int(key, value, i32::MIN, i32::MAX)?,
            "compression.lz4.level" => self.compression_lz4_level = parse_int(key, value, i32::MIN, i32::MAX)?,
            "compression.zstd.level" => self.compression_zstd_level = parse_int(key, value, i32::MIN, i32::MAX)?,
            "max.in.flight.requests.per.connection" => {
                self.max_in_flight = parse_int(key, value, 1, i32::MAX as usize)?
            }
            "enable.idempotence" => self.enable_idempotence = Some(parse_bool(key, value)?),
            "delivery.timeout.ms" => self.delivery_timeout = ms()?,
            "request.timeout.ms" => self.request_timeout = ms()?,
            "retry.backoff.ms" => self.retry_backoff = ms()?,
            "retry.backoff.max.ms" => self.retry_backoff_max = ms()?,
            "retries" => self.retries = parse_int(key, value, 0, i32::MAX as u32)?,
            "max.request.size" => self.max_request_size = parse_int(key, value, 1, i32::MAX as usize)?,
            "transactional.id" => {
                self.transactional_id = Some(value.to_string()).filter(|v| !v.is_empty());
            }
            "transaction.timeout.ms" => self.transaction_timeout = ms()?,
            "partitioner.ignore.keys" => self.partitioner_ignore_keys = parse_bool(key, value)?,
            "partitioner.adaptive.partitioning.enable" => self.partitioner_adaptive = parse_bool(key, value)?,
            "partitioner.availability.timeout.ms" => self.partitioner_availability_timeout = ms()?,
            "metadata.max.age.ms" => self.metadata_max_age = ms()?,
            "sasl.mechanism" => {
                parse_choice(key, value, &["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])?;
                self.sasl_parts.0 = Some(value.trim().to_ascii_uppercase());
                self.refresh_sasl();
            }
            "sasl.username" => {
                self.sasl_parts.1 = Some(value.to_string());
                self.refresh_sasl();
            }
            "sasl.password" => {
                self.sasl_parts.2 = Some(value.to_string());
                self.refresh_sasl();
            }
            _ => return Err(ConfigError::unknown(key, value)),
        }
        Ok(self)
    }

    /// [`ProducerConfig::set`] for each pair, in order.
    pub fn set_all<'a>(
        mut self,
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<ProducerConfig, ConfigError> {
        for (key, value) in pairs {
            self = self.set(key, value)?;
        }
        Ok(self)
    }

    fn refresh_sasl(&mut self) {
        if let (Some(mechanism), Some(user), Some(password)) = &self.sasl_parts {
            self.sasl = Some(match mechanism.as_str() {
                "SCRAM-SHA-256" => Credentials::scram_sha256(user, password),
                "SCRAM-SHA-512" => Credentials::scram_sha512(user, password),
                _ => Credentials::plain(user, password),
            });
        }
    }

    pub fn client_id(mut self, id: impl Into<String>) -> Self {
        self.client_id = id.into();
        self
    }
    pub fn acks(mut self, acks: Acks) -> Self {
        self.acks = acks;
        self
    }
    pub fn linger(mut self, linger: Duration) -> Self {
        self.linger = linger;
        self
    }
    pub fn batch_size(mut self, bytes: usize) -> Self {
        self.batch_size = bytes;
        self
    }
    pub fn buffer_memory(mut self, bytes: usize) -> Self {
        self.buffer_memory = bytes;
        self
    }
    pub fn max_block(mut self, max: Duration) -> Self {
        self.max_block = max;
        self
    }
    pub fn compression(mut self, codec: Compression) -> Self {
        self.compression = codec;
        self
    }
    /// `partitioner.availability.timeout.ms` (0, the default: off).
    pub fn partitioner_availability_timeout(mut self, timeout: Duration) -> Self {
        self.partitioner_availability_timeout = timeout;
        self
    }
    /// `compression.<codec>.level` for `codec` (gzip, lz4 or zstd; others have no levels).
    pub fn compression_level(mut self, codec: Compression, level: i32) -> Self {
        match codec {
            Compression::Gzip => self.compression_gzip_level = level,
            Compression::Lz4 => self.compression_lz4_level = level,
            Compression::Zstd => self.compression_zstd_level = level,
            Compression::None | Compression::Snappy => {}
        }
        self
    }
    pub fn max_in_flight(mut self, requests: usize) -> Self {
        self.max_in_flight = requests.max(1);
        self
    }
    pub fn enable_idempotence(mut self, enable: bool) -> Self {
        self.enable_idempotence = Some(enable);
        self
    }
    pub fn delivery_timeout(mut self, timeout: Duration) -> Self {
        self.delivery_timeout = timeout;
        self
    }
    pub fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }
    pub fn retry_backoff(mut self, backoff: Duration) -> Self {
        self.retry_backoff = backoff;
        self
    }
    pub fn retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }
    pub fn max_request_size(mut self, bytes: usize) -> Self {
        self.max_request_size = bytes;
        self
    }
    pub fn transactional_id(mut self, id: impl Into<String>) -> Self {
        self.transactional_id = Some(id.into());
        self
    }
    pub fn transaction_timeout(mut self, timeout: Duration) -> Self {
        self.transaction_timeout = timeout;
        self
    }
    pub fn partitioner_ignore_keys(mut self, ignore: bool) -> Self {
        self.partitioner_ignore_keys = ignore;
        self
    }
    pub fn partitioner(mut self, partitioner: Arc<dyn Partitioner>) -> Self {
        self.partitioner = Some(partitioner);
        self
    }
    pub fn transaction_protocol(mut self, protocol: TransactionProtocol) -> Self {
        self.transaction_protocol = protocol;
        self
    }
    pub fn sasl(mut self, credentials: Credentials) -> Self {
        self.sasl = Some(credentials);
        self
    }
    pub fn connection(mut self, connection: ClientConfig) -> Self {
        self.connection = connection;
        self
    }

    /// Whether the producer is idempotent: as set, else on unless `acks` is not `all` or more
    /// than 5 requests may be in flight (Kafka's rule since 3.0).
    pub fn idempotent(&self) -> bool {
        self.enable_idempotence.unwrap_or(self.acks == Acks::All && self.max_in_flight <= 5)
            || self.transactional_id.is_some()
    }

    /// Refuses what Kafka's producer refuses: idempotence asked for with `acks` other than
    /// `all` or more than 5 requests in flight, transactions without idempotence, a
    /// `delivery.timeout.ms` below `linger.ms + request.timeout.ms`, no bootstrap server.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.bootstrap_servers.is_empty() {
            return Err(ConfigError::new("bootstrap.servers", "", "at least one host:port is required"));
        }
        if self.enable_idempotence == Some(true) || self.transactional_id.is_some() {
            if self.acks != Acks::All {
                let acks = if self.acks == Acks::None { "0" } else { "1" };
                return Err(ConfigError::new("acks", acks, "must be all in order to use the idempotent producer"));
            }
            if self.max_in_flight > 5 {
                let n = self.max_in_flight.to_string();
                return Err(ConfigError::new(
                    "max.in.flight.requests.per.connection",
                    &n,
                    "must be at most 5 to use the idempotent producer",
                ));
            }
        }
        if self.transactional_id.is_some() && self.enable_idempotence == Some(false) {
            return Err(ConfigError::new("enable.idempotence", "false", "must be true when transactional.id is set"));
        }
        if self.delivery_timeout < self.linger + self.request_timeout {
            let ms = self.delivery_timeout.as_millis().to_string();
            return Err(ConfigError::new(
                "delivery.timeout.ms",
                &ms,
                "should be equal to or larger than linger.ms + request.timeout.ms",
            ));
        }
        if !self.compression.is_built() {
            return Err(ConfigError::new("compression.type", self.compression.name(), "this build has no such codec"));
        }
        for (codec, level) in [
            (Compression::Gzip, self.compression_gzip_level),
            (Compression::Lz4, self.compression_lz4_level),
            (Compression::Zstd, self.compression_zstd_level),
        ] {
            let key = format!("compression.{}.level", codec.name());
            let levels = codec.levels().expect("the codecs with levels");
            if !levels.accepts(level) {
                let why = format!("must be between {} and {}", levels.min, levels.max);
                return Err(ConfigError::new(&key, &level.to_string(), why));
            }
            if codec == Compression::Lz4 && level != levels.default {
                return Err(ConfigError::new(
                    &key,
                    &level.to_string(),
                    "only Kafka's default 9 (lz4's fast compressor) is written here; other levels are LZ4 HC",
                ));
            }
        }
        Ok(())
    }

    /// The level of the codec `compression.type` names (`None`: no codec, or snappy).
    pub fn level_of_compression(&self) -> Option<i32> {
        match self.compression {
            Compression::Gzip => Some(self.compression_gzip_level),
            Compression::Lz4 => Some(self.compression_lz4_level),
            Compression::Zstd => Some(self.compression_zstd_level),
            Compression::None | Compression::Snappy => None,
        }
    }

    /// The connection settings the producer's cluster is opened with.
    pub(crate) fn client_config(&self) -> ClientConfig {
        let mut config =
            self.connection.clone().client_id(self.client_id.clone()).request_timeout(self.request_timeout);
        // The sinks keep at most `max_in_flight` Produce requests per broker themselves; the
        // headroom leaves room for Metadata and transactional requests on the same connection,
        // so that a Produce never waits behind them for a slot (and so keeps its order).
        config = config.max_in_flight(self.max_in_flight + 4);
        if let Some(sasl) = &self.sasl {
            config = config.sasl(sasl.clone());
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_keys_set_the_typed_fields() {
        let config = ProducerConfig::new("a:1, b:2")
            .set_all([("linger.ms", "0"), ("acks", "1"), ("compression.type", "LZ4"), ("batch.size", "1000")])
            .unwrap();
        assert_eq!(config.bootstrap_servers, ["a:1", "b:2"]);
        assert_eq!(
            (config.linger, config.acks, config.compression, config.batch_size),
            (Duration::ZERO, Acks::Leader, Compression::Lz4, 1000)
        );
        assert!(!config.idempotent(), "acks=1 turns the default idempotence off");
        let error = ProducerConfig::new("a:1").set("linger.mss", "1").unwrap_err();
        assert_eq!(error.key, "linger.mss");
        let error = ProducerConfig::new("a:1").set("acks", "2").unwrap_err();
        assert!(error.to_string().contains("acks"), "{error}");
    }

    #[test]
    fn idempotence_asked_with_acks_1_is_refused_as_kafka_refuses_it() {
        let config = ProducerConfig::new("a:1").enable_idempotence(true).acks(Acks::Leader);
        assert_eq!(config.validate().unwrap_err().key, "acks");
        assert!(ProducerConfig::new("a:1").validate().is_ok());
        assert!(ProducerConfig::new("a:1").idempotent(), "on by default");
        let short = ProducerConfig::new("a:1").delivery_timeout(Duration::from_secs(1));
        assert_eq!(short.validate().unwrap_err().key, "delivery.timeout.ms");
    }

    #[test]
    fn compression_levels_are_kafkas_keys_with_kafkas_bounds() {
        let config = ProducerConfig::new("a:1")
            .set_all([("compression.type", "gzip"), ("compression.gzip.level", "1"), ("compression.zstd.level", "-5")])
            .unwrap();
        assert!(config.validate().is_ok());
        assert_eq!(config.level_of_compression(), Some(1));
        assert_eq!(ProducerConfig::new("a:1").compression(Compression::Zstd).level_of_compression(), Some(3));
        assert_eq!(ProducerConfig::new("a:1").level_of_compression(), None, "no codec, no level");
        for (key, value) in
            [("compression.gzip.level", "10"), ("compression.zstd.level", "23"), ("compression.lz4.level", "12")]
        {
            let error = ProducerConfig::new("a:1").set_all([(key, value)]).unwrap().validate().unwrap_err();
            assert_eq!((error.key.as_str(), error.value.as_str()), (key, value));
        }
    }
}
