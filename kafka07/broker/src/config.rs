//! The broker's configuration: Kafka 0.7.2's `server.properties` names and defaults, plus a few
//! `kwire.*` settings for limits 0.7 did not have. Every key is checked: an unknown key or a
//! malformed value is an error naming the key, the value and where it came from.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use kwire07_protocol::log::{LogConfig, TopicOverrides, Visibility};
use kwire07_protocol::{DecodeLimits, DEFAULT_MAX_REQUEST_SIZE, DEFAULT_MAX_TOPIC_NAME_LENGTH};

use crate::properties::{Properties, Source};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("unknown property {key} (from {origin})")]
    Unknown { key: String, origin: Source },
    #[error("property {key}={value:?} (from {origin}): {reason}")]
    Invalid { key: String, value: String, origin: Source, reason: String },
    #[error("{0}")]
    Missing(String),
}

/// ZooKeeper settings (`zk.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZkConfig {
    /// Hosts, `host:port[,host:port...]`.
    pub hosts: String,
    /// Optional chroot (`/kafka` in `host:port/kafka`), without a trailing `/`.
    pub chroot: Option<String>,
    pub session_timeout: Duration,
    pub connection_timeout: Duration,
}

#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub broker_id: i32,
    pub bind: IpAddr,
    pub port: u16,
    /// `hostname`: the address published in ZooKeeper (`None`: derived from the bind address).
    pub hostname: Option<String>,
    pub log_dir: PathBuf,
    /// `num.threads`: connection threads (0.7's processors), default one per CPU.
    pub num_threads: usize,
    pub num_partitions: i32,
    /// `topic.partition.count.map`.
    pub partition_counts: HashMap<String, i32>,
    /// Log defaults (`log.*`, `max.message.size`).
    pub log: LogConfig,
    /// The `topic.*` maps, per topic.
    pub topic_overrides: HashMap<String, TopicOverrides>,
    pub flush_scheduler_interval: Duration,
    pub cleanup_interval: Duration,
    /// When the first retention run happens (0.7: 60 s after start-up).
    pub cleanup_delay: Duration,
    pub max_request_size: usize,
    pub max_topic_name_length: usize,
    /// `socket.send.buffer` / `socket.receive.buffer` (SO_SNDBUF / SO_RCVBUF). `None` when not
    /// configured: the kernel's autotuning then sizes the buffers, which on any current system
    /// beats 0.7's fixed 100 KB default (a fixed size turns autotuning off and caps the TCP
    /// window below one 200-message produce request).
    pub socket_send_buffer: Option<u32>,
    pub socket_receive_buffer: Option<u32>,
    /// `kwire.socket.congestion.control`: the TCP congestion control algorithm of client
    /// connections (Linux `TCP_CONGESTION`, e.g. `cubic`). `None`: the system default. On
    /// loopback BBR's pacing holds FETCH answers back (measured: consume at half the rate of
    /// cubic), so a broker serving local consumers may choose otherwise.
    pub socket_congestion: Option<String>,
    pub zookeeper: Option<ZkConfig>,
    pub max_connections: usize,
    /// `kwire.max.connections.per.ip` (default: half of `kwire.max.connections`).
    pub max_connections_per_ip: usize,
    /// `kwire.max.buffered.request.bytes`: received bytes of requests not yet handled, all
    /// connections together (default: 256 MiB, at least twice `max.socket.request.bytes`).
    pub max_buffered_request_bytes: usize,
    /// Close a connection that sends nothing for this long (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Close a connection whose request or response makes no progress for this long.
    pub request_timeout: Duration,
    /// `kwire.max.decompressed.request.bytes`: most bytes all compressed wrappers of one
    /// PRODUCE or MULTIPRODUCE may decompress to together (each wrapper also has
    /// `kwire.max.decompressed.bytes`). Default: 64 × `max.message.size`, at least 1 MiB.
    pub max_decompressed_per_request: usize,
    /// `kwire.max.partitions`: most partitions open at once (each holds a file descriptor);
    /// creating more is refused. `None`: derived from the descriptor limit at start-up.
    pub max_partitions: Option<usize>,
}

/// Every property the broker knows. Properties Kafka 0.7 used only for its JMX statistics or
/// its consumers (`monitoring.period.secs`, `zk.synctime.ms`) are accepted and checked but have
/// no effect.
pub const KNOWN_PROPERTIES: &[&str] = &[
    "brokerid",
    "port",
    "hostname",
    "log.dir",
    "num.threads",
    "num.partitions",
    "topic.partition.count.map",
    "socket.send.buffer",
    "socket.receive.buffer",
    "max.socket.request.bytes",
    "max.message.size",
    "max.topic.name.length",
    "monitoring.period.secs",
    "log.file.size",
    "topic.log.file.size",
    "log.roll.hours",
    "topic.log.roll.hours",
    "log.retention.hours",
    "topic.log.retention.hours",
    "log.retention.size",
    "topic.log.retention.size",
    "log.cleanup.interval.mins",
    "log.flush.interval",
    "log.default.flush.scheduler.interval.ms",
    "log.default.flush.interval.ms",
    "topic.flush.intervals.ms",
    "enable.zookeeper",
    "zk.connect",
    "zk.sessiontimeout.ms",
    "zk.connectiontimeout.ms",
    "zk.synctime.ms",
    "kwire.bind",
    "kwire.socket.congestion.control",
    "kwire.max.connections",
    "kwire.idle.timeout.ms",
    "kwire.request.timeout.ms",
    "kwire.log.visibility",
    "kwire.max.decompressed.bytes",
    "kwire.log.cleanup.delay.ms",
    "kwire.max.partitions",
    "kwire.max.decompressed.request.bytes",
    "kwire.max.connections.per.ip",
    "kwire.max.buffered.request.bytes",
];

const HOUR_MS: u64 = 3_600_000;

struct Reader<'a> {
    props: &'a Properties,
}

impl Reader<'_> {
    fn invalid(&self, key: &str, reason: impl Into<String>) -> ConfigError {
        let (value, source) = self.props.get(key).map(|(v, s)| (v.to_owned(), s.clone())).unwrap_or_else(|| {
            (String::new(), Source::Set) // unreachable in practice: only called for present keys
        });
        ConfigError::Invalid { key: key.to_owned(), value, origin: source, reason: reason.into() }
    }

    fn raw(&self, key: &str) -> Option<&str> {
        self.props.get(key).map(|(v, _)| v.trim())
    }

    /// An integer in `min..=max`.
    fn int(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64, ConfigError> {
        let Some(v) = self.raw(key) else { return Ok(default) };
        let n: i64 = v.parse().map_err(|_| self.invalid(key, "not an integer"))?;
        if n < min || n > max {
            return Err(self.invalid(key, format!("must be in {min}..={max}")));
        }
        Ok(n)
    }

    fn bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(_) => Err(self.invalid(key, "must be true or false")),
        }
    }

    /// A `topic:int,topic:int` map (0.7's `getCSVMap`); values must be in `min..=max`.
    fn map(&self, key: &str, min: i64, max: i64) -> Result<HashMap<String, i64>, ConfigError> {
        let mut out = HashMap::new();
        let Some(v) = self.raw(key) else { return Ok(out) };
        for entry in v.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let (topic, n) = entry
                .rsplit_once(':')
                .ok_or_else(|| self.invalid(key, format!("entry {entry:?} is not topic:number")))?;
            let topic = topic.trim();
            if topic.is_empty() {
                return Err(self.invalid(key, format!("entry {entry:?} has an empty topic")));
            }
            let n: i64 = n.trim().parse().map_err(|_| self.invalid(key, format!("entry {entry:?}: not an integer")))?;
            if n < min || n > max {
                return Err(self.invalid(key, format!("entry {entry:?}: value must be in {min}..={max}")));
            }
            out.insert(topic.to_owned(), n);
        }
        Ok(out)
    }
}

fn ms(n: i64) -> Duration {
    Duration::from_millis(n as u64)
}

/// Splits `host:port,host:port/chroot`.
fn parse_zk_connect(s: &str) -> Result<(String, Option<String>), String> {
    let (hosts, chroot) = match s.find('/') {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    if hosts.is_empty() {
        return Err("no ZooKeeper host".into());
    }
    for h in hosts.split(',') {
        let (host, port) = h.trim().rsplit_once(':').ok_or_else(|| format!("{h:?} is not host:port"))?;
        if host.is_empty() || port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(format!("{h:?} is not host:port"));
        }
    }
    let chroot = chroot.map(|c| c.trim_end_matches('/')).filter(|c| !c.is_empty());
    if let Some(c) = chroot {
        if c.split('/').skip(1).any(|part| part.is_empty() || part == "." || part == "..") {
            return Err(format!("chroot {c:?} is not a valid ZooKeeper path"));
        }
    }
    Ok((hosts.to_owned(), chroot.map(str::to_owned)))
}

impl BrokerConfig {
    /// Builds and checks the configuration.
    pub fn from_properties(props: &Properties) -> Result<BrokerConfig, ConfigError> {
        let known: HashSet<&str> = KNOWN_PROPERTIES.iter().copied().collect();
        if let Some((key, _, source)) = props.iter().find(|(k, _, _)| !known.contains(k)) {
            return Err(ConfigError::Unknown { key: key.to_owned(), origin: source.clone() });
        }
        let r = Reader { props };
        let i32max = i64::from(i32::MAX);

        let broker_id = r.int("brokerid", 0, 0, i32max)? as i32;
        let port = r.int("port", 9092, 0, 65_535)? as u16;
        let hostname = match r.raw("hostname") {
            None | Some("") => None,
            Some(h) if h.contains(':') || h.contains(char::is_whitespace) => {
                return Err(r.invalid("hostname", "must not contain ':' or whitespace (ZooKeeper readers split on ':')"))
            }
            Some(h) => Some(h.to_owned()),
        };
        let log_dir = match r.raw("log.dir") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => return Err(ConfigError::Missing("log.dir is required (--log-dir DIR)".into())),
        };
        let bind = match r.raw("kwire.bind") {
            None => IpAddr::from([127, 0, 0, 1]),
            Some(b) => b.parse().map_err(|_| r.invalid("kwire.bind", "not an IP address"))?,
        };
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as i64;
        let num_threads = r.int("num.threads", cpus, 1, 1024)? as usize;
        let num_partitions = r.int("num.partitions", 1, 1, i32max)? as i32;
        let partition_counts =
            r.map("topic.partition.count.map", 1, i32max)?.into_iter().map(|(k, v)| (k, v as i32)).collect();
        let buffer = |key: &str| match r.raw(key) {
            None => Ok(None),
            Some(_) => r.int(key, 102_400, 1, i32max).map(|n| Some(n as u32)),
        };
        let socket_send_buffer = buffer("socket.send.buffer")?;
        let socket_receive_buffer = buffer("socket.receive.buffer")?;
        let socket_congestion = match r.raw("kwire.socket.congestion.control") {
            None => None,
            // Linux names are at most 15 characters of [A-Za-z0-9_] (TCP_CA_NAME_MAX).
            Some(name)
                if !name.is_empty()
                    && name.len() < 16
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') =>
            {
                Some(name.to_owned())
            }
            Some(_) => {
                return Err(r.invalid("kwire.socket.congestion.control", "not a congestion control algorithm name"))
            }
        };
        let max_request_size = r.int("max.socket.request.bytes", DEFAULT_MAX_REQUEST_SIZE as i64, 1, i32max)? as usize;
        let max_message_size = r.int("max.message.size", 1_000_000, 0, i32max)? as usize;
        let max_topic_name_length =
            r.int("max.topic.name.length", DEFAULT_MAX_TOPIC_NAME_LENGTH as i64, 1, i64::from(i16::MAX))? as usize;
        r.int("monitoring.period.secs", 600, 1, i32max)?;

        let segment_bytes = r.int("log.file.size", 1 << 30, 5, i64::MAX)? as u64;
        let roll_hours = r.int("log.roll.hours", 168, 1, i32max)? as u64;
        let retention_hours = r.int("log.retention.hours", 168, 1, i32max)? as u64;
        let retention_size = r.int("log.retention.size", -1, -1, i64::MAX)?;
        if retention_size == 0 {
            return Err(r.invalid("log.retention.size", "must be -1 (off) or positive"));
        }
        let cleanup_mins = r.int("log.cleanup.interval.mins", 10, 1, i32max)? as u64;
        let cleanup_delay_ms = r.int("kwire.log.cleanup.delay.ms", 60_000, 0, i64::MAX)?;
        let flush_messages = r.int("log.flush.interval", 500, 1, i32max)? as u64;
        let scheduler_ms = r.int("log.default.flush.scheduler.interval.ms", 3_000, 1, i32max)?;
        let flush_ms = r.int("log.default.flush.interval.ms", scheduler_ms, 1, i32max)?;
        let visibility = match r.raw("kwire.log.visibility") {
            None | Some("append") => Visibility::AfterAppend,
            Some("flush") => Visibility::AfterFlush,
            Some(_) => return Err(r.invalid("kwire.log.visibility", "must be append or flush")),
        };
        let max_decompressed =
            r.int("kwire.max.decompressed.bytes", DecodeLimits::default().max_decompressed_bytes as i64, 1, i64::MAX)?;
        let per_request_default = (max_message_size as i64).saturating_mul(64).max(1 << 20);
        let max_decompressed_per_request =
            r.int("kwire.max.decompressed.request.bytes", per_request_default, 1, i64::MAX)? as usize;

        let log = LogConfig {
            segment_bytes,
            roll_age: Some(Duration::from_millis(roll_hours * HOUR_MS)),
            flush_interval_messages: flush_messages,
            flush_interval: ms(flush_ms),
            retention_age: Some(Duration::from_millis(retention_hours * HOUR_MS)),
            retention_bytes: u64::try_from(retention_size).ok(),
            max_message_size: Some(max_message_size),
            visibility,
            decode_limits: DecodeLimits {
                max_decompressed_bytes: max_decompressed as usize,
                ..DecodeLimits::default()
            },
        };

        let mut topic_overrides: HashMap<String, TopicOverrides> = HashMap::new();
        let mut apply = |key: &str, min: i64, set: &dyn Fn(&mut TopicOverrides, i64)| -> Result<(), ConfigError> {
            for (topic, v) in r.map(key, min, i64::MAX)? {
                set(topic_overrides.entry(topic).or_default(), v);
            }
            Ok(())
        };
        apply("topic.log.file.size", 5, &|o, v| o.segment_bytes = Some(v as u64))?;
        apply("topic.log.roll.hours", 1, &|o, v| o.roll_age = Some(Duration::from_millis(v as u64 * HOUR_MS)))?;
        apply("topic.log.retention.hours", 1, &|o, v| {
            o.retention_age = Some(Duration::from_millis(v as u64 * HOUR_MS))
        })?;
        apply("topic.log.retention.size", 1, &|o, v| o.retention_bytes = Some(v as u64))?;
        apply("topic.flush.intervals.ms", 1, &|o, v| o.flush_interval = Some(ms(v)))?;

        let session_ms = r.int("zk.sessiontimeout.ms", 6_000, 1, i32max)?;
        let connection_ms = r.int("zk.connectiontimeout.ms", session_ms, 1, i32max)?;
        r.int("zk.synctime.ms", 2_000, 1, i32max)?;
        let zk_connect = r.raw("zk.connect").filter(|s| !s.is_empty());
        let enable_zk = r.bool("enable.zookeeper", true)?;
        let zookeeper = match zk_connect {
            _ if !enable_zk => None,
            None if r.raw("enable.zookeeper").is_some() => {
                return Err(ConfigError::Missing(
                    "enable.zookeeper=true needs zk.connect (--zookeeper HOST:PORT)".into(),
                ))
            }
            None => None,
            Some(connect) => {
                let (hosts, chroot) = parse_zk_connect(connect).map_err(|e| r.invalid("zk.connect", e))?;
                Some(ZkConfig { hosts, chroot, session_timeout: ms(session_ms), connection_timeout: ms(connection_ms) })
            }
        };

        let max_connections = r.int("kwire.max.connections", 1_024, 1, 1_000_000)? as usize;
        let max_connections_per_ip =
            r.int("kwire.max.connections.per.ip", (max_connections as i64 / 2).max(1), 1, 1_000_000)? as usize;
        let buffered_default = (max_request_size as i64).saturating_mul(2).max(256 << 20);
        let max_buffered_request_bytes =
            r.int("kwire.max.buffered.request.bytes", buffered_default, 1, i64::MAX)? as usize;
        let idle_ms = r.int("kwire.idle.timeout.ms", 600_000, 0, i64::MAX)?;
        let request_ms = r.int("kwire.request.timeout.ms", 30_000, 1, i64::MAX)?;
        let max_partitions = match r.raw("kwire.max.partitions") {
            None => None,
            Some(_) => Some(r.int("kwire.max.partitions", 0, 1, i64::from(i32::MAX))? as usize),
        };

        Ok(BrokerConfig {
            broker_id,
            bind,
            port,
            hostname,
            log_dir,
            num_threads,
            num_partitions,
            partition_counts,
            log,
            topic_overrides,
            flush_scheduler_interval: ms(scheduler_ms),
            cleanup_interval: Duration::from_secs(cleanup_mins * 60),
            cleanup_delay: ms(cleanup_delay_ms),
            max_request_size,
            max_topic_name_length,
            socket_send_buffer,
            socket_receive_buffer,
            socket_congestion,
            zookeeper,
            max_connections,
            max_connections_per_ip,
            max_buffered_request_bytes,
            idle_timeout: (idle_ms > 0).then(|| ms(idle_ms)),
            request_timeout: ms(request_ms),
            max_partitions,
            max_decompressed_per_request,
        })
    }

    /// Builds a configuration from `key=value` pairs, as `--set` would (e.g. for a broker run
    /// in-process by tests): `from_pairs(&[("log.dir", "/tmp/x"), ("port", "0")])`.
    pub fn from_pairs<K: AsRef<str>, V: AsRef<str>>(pairs: &[(K, V)]) -> Result<BrokerConfig, ConfigError> {
        let mut props = Properties::default();
        for (k, v) in pairs {
            props.insert(k.as_ref(), v.as_ref(), Source::Set);
        }
        BrokerConfig::from_properties(&props)
    }

    /// 0.7's `partitionCount(topic)`.
    pub fn partition_count(&self, topic: &str) -> i32 {
        self.partition_counts.get(topic).copied().unwrap_or(self.num_partitions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<BrokerConfig, ConfigError> {
        let mut p = Properties::default();
        p.load("server.properties", text).unwrap();
        BrokerConfig::from_properties(&p)
    }

    #[test]
    fn kafka_sample_server_properties() {
        let c = config(
            "brokerid=3\nport=9093\nnum.threads=8\nsocket.send.buffer=1048576\nsocket.receive.buffer=1048576\n\
             max.socket.request.bytes=104857600\nlog.dir=/tmp/kafka-logs\nnum.partitions=2\n\
             topic.partition.count.map=topic1:3, topic2:4\nlog.flush.interval=10000\n\
             log.default.flush.interval.ms=1000\ntopic.flush.intervals.ms=topic1:1000, topic2:3000\n\
             log.default.flush.scheduler.interval.ms=1000\nlog.retention.hours=168\n\
             log.file.size=536870912\nlog.cleanup.interval.mins=1\nenable.zookeeper=true\n\
             zk.connect=localhost:2181/kafka\nzk.connectiontimeout.ms=1000000\n",
        )
        .unwrap();
        assert_eq!(c.broker_id, 3);
        assert_eq!(c.port, 9093);
        assert_eq!(c.num_threads, 8);
        assert_eq!(c.partition_count("topic2"), 4);
        assert_eq!(c.partition_count("other"), 2);
        assert_eq!(c.log.flush_interval_messages, 10_000);
        assert_eq!(c.log.flush_interval, Duration::from_millis(1000));
        assert_eq!(c.log.segment_bytes, 536_870_912);
        assert_eq!(c.topic_overrides["topic2"].flush_interval, Some(Duration::from_millis(3000)));
        assert_eq!(c.cleanup_interval, Duration::from_secs(60));
        let zk = c.zookeeper.unwrap();
        assert_eq!((zk.hosts.as_str(), zk.chroot.as_deref()), ("localhost:2181", Some("/kafka")));
        assert_eq!(zk.session_timeout, Duration::from_millis(6000));
        assert_eq!(zk.connection_timeout, Duration::from_millis(1_000_000));
    }

    #[test]
    fn defaults() {
        let c = config("log.dir=/x\n").unwrap();
        assert_eq!((c.broker_id, c.port, c.num_partitions), (0, 9092, 1));
        assert_eq!(c.log.segment_bytes, 1 << 30);
        assert_eq!(c.log.flush_interval_messages, 500);
        assert_eq!(c.flush_scheduler_interval, Duration::from_millis(3000));
        assert_eq!(c.log.flush_interval, Duration::from_millis(3000));
        assert_eq!(c.log.retention_bytes, None);
        assert_eq!(c.log.max_message_size, Some(1_000_000));
        assert_eq!(c.max_request_size, 104_857_600);
        assert!(c.zookeeper.is_none());
    }

    #[test]
    fn errors_name_key_value_and_line() {
        let e = config("log.dir=/x\nlog.flie.size=5\n").unwrap_err();
        assert_eq!(e.to_string(), "unknown property log.flie.size (from server.properties:2)");
        let e = config("log.dir=/x\nport=99999\n").unwrap_err();
        assert_eq!(e.to_string(), "property port=\"99999\" (from server.properties:2): must be in 0..=65535");
        let e = config("log.dir=/x\nnum.partitions=two\n").unwrap_err();
        assert!(e.to_string().contains("num.partitions=\"two\""), "{e}");
        let e = config("log.dir=/x\ntopic.log.retention.hours=a:1,b\n").unwrap_err();
        assert!(e.to_string().contains("entry \"b\" is not topic:number"), "{e}");
        let e = config("log.dir=/x\ntopic.partition.count.map=a:0\n").unwrap_err();
        assert!(e.to_string().contains("must be in 1..="), "{e}");
        let e = config("log.dir=/x\nhostname=::1\n").unwrap_err();
        assert!(e.to_string().contains("must not contain ':'"), "{e}");
        let e = config("log.dir=/x\nzk.connect=localhost\n").unwrap_err();
        assert!(e.to_string().contains("not host:port"), "{e}");
        assert!(matches!(config("port=1\n"), Err(ConfigError::Missing(_))));
        assert!(matches!(config("log.dir=/x\nenable.zookeeper=true\n"), Err(ConfigError::Missing(_))));
    }

    #[test]
    fn zookeeper_can_be_disabled() {
        assert!(config("log.dir=/x\nzk.connect=h:1\nenable.zookeeper=false\n").unwrap().zookeeper.is_none());
        assert!(config("log.dir=/x\nzk.connect=h:1\n").unwrap().zookeeper.is_some());
    }

    #[test]
    fn congestion_control_names_are_checked() {
        let ok = config("log.dir=/tmp/x\nkwire.socket.congestion.control=cubic\n").unwrap();
        assert_eq!(ok.socket_congestion.as_deref(), Some("cubic"));
        assert_eq!(config("log.dir=/tmp/x\n").unwrap().socket_congestion, None);
        for bad in ["", "cu bic", "../cubic", "averyveryverylongname"] {
            let text = format!("log.dir=/tmp/x\nkwire.socket.congestion.control={bad}\n");
            let err = config(&text).unwrap_err().to_string();
            assert!(err.contains("kwire.socket.congestion.control"), "{bad:?}: {err}");
        }
    }
}
