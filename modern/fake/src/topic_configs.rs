//! Topic configurations: the names Kafka 4.4 knows for a topic, their defaults and types as
//! DescribeConfigs reports them, and the checks IncrementalAlterConfigs makes.

/// A config's type, as DescribeConfigs v3+ names it (`ConfigType` in Kafka's schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Boolean = 1,
    String = 2,
    Int = 3,
    Long = 5,
    Double = 6,
    List = 7,
}

/// Every topic config: name, default (Kafka 4.4's `LogConfig` defaults), type.
pub(crate) const TOPIC_CONFIGS: &[(&str, &str, Kind)] = &[
    ("cleanup.policy", "delete", Kind::List),
    ("compression.gzip.level", "-1", Kind::Int),
    ("compression.lz4.level", "9", Kind::Int),
    ("compression.type", "producer", Kind::String),
    ("compression.zstd.level", "3", Kind::Int),
    ("delete.retention.ms", "86400000", Kind::Long),
    ("errors.deadletterqueue.group.enable", "false", Kind::Boolean),
    ("file.delete.delay.ms", "60000", Kind::Long),
    ("flush.messages", "9223372036854775807", Kind::Long),
    ("flush.ms", "9223372036854775807", Kind::Long),
    ("follower.replication.throttled.replicas", "", Kind::List),
    ("index.interval.bytes", "4096", Kind::Int),
    ("leader.replication.throttled.replicas", "", Kind::List),
    ("local.retention.bytes", "-2", Kind::Long),
    ("local.retention.ms", "-2", Kind::Long),
    ("max.compaction.lag.ms", "9223372036854775807", Kind::Long),
    ("max.decompressed.message.bytes", "2147483639", Kind::Int),
    ("max.message.bytes", "1048588", Kind::Int),
    ("message.timestamp.after.max.ms", "3600000", Kind::Long),
    ("message.timestamp.before.max.ms", "9223372036854775807", Kind::Long),
    ("message.timestamp.type", "CreateTime", Kind::String),
    ("min.cleanable.dirty.ratio", "0.5", Kind::Double),
    ("min.compaction.lag.ms", "0", Kind::Long),
    ("min.insync.replicas", "1", Kind::Int),
    ("preallocate", "false", Kind::Boolean),
    ("remote.copy.lag.bytes", "-1", Kind::Long),
    ("remote.copy.lag.ms", "0", Kind::Long),
    ("remote.log.copy.disable", "false", Kind::Boolean),
    ("remote.log.delete.on.disable", "false", Kind::Boolean),
    ("remote.storage.enable", "false", Kind::Boolean),
    ("retention.bytes", "-1", Kind::Long),
    ("retention.ms", "604800000", Kind::Long),
    ("segment.bytes", "1073741824", Kind::Int),
    ("segment.index.bytes", "10485760", Kind::Int),
    ("segment.jitter.ms", "0", Kind::Long),
    ("segment.ms", "604800000", Kind::Long),
    ("unclean.leader.election.enable", "false", Kind::Boolean),
];

/// Topic configs whose default a fresh Kafka 4.4 cluster holds as a cluster-wide dynamic one:
/// its controller writes min.insync.replicas so at bootstrap (for KIP-966's ELR), and
/// DescribeConfigs names that as the source of a topic's unset value.
pub(crate) const CLUSTER_DEFAULTS: &[&str] = &["min.insync.replicas"];

/// A topic config's default and type, if Kafka knows the name.
pub(crate) fn topic_config(name: &str) -> Option<(&'static str, Kind)> {
    TOPIC_CONFIGS.iter().find(|(n, _, _)| *n == name).map(|(_, d, k)| (*d, *k))
}

/// Whether `value` is a valid value of `name`: Kafka's type check, and the value sets of the
/// enumerated ones.
pub(crate) fn valid_value(name: &str, value: &str) -> bool {
    let Some((_, kind)) = topic_config(name) else { return false };
    let typed = match kind {
        Kind::Boolean => value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false"),
        Kind::Int => value.trim().parse::<i32>().is_ok(),
        Kind::Long => value.trim().parse::<i64>().is_ok(),
        Kind::Double => value.trim().parse::<f64>().is_ok(),
        Kind::String | Kind::List => true,
    };
    typed
        && match name {
            "cleanup.policy" => value.split(',').map(str::trim).all(|p| p == "delete" || p == "compact"),
            "compression.type" => ["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"].contains(&value),
            "message.timestamp.type" => value == "CreateTime" || value == "LogAppendTime",
            "min.insync.replicas" => value.trim().parse::<i32>().is_ok_and(|v| v >= 1),
            "max.message.bytes" => value.trim().parse::<i32>().is_ok_and(|v| v >= 0),
            _ => true,
        }
}

/// Broker configs DescribeConfigs reports for a node: the defaults this cluster runs with.
pub(crate) fn broker_configs(default_partitions: i32) -> Vec<(&'static str, String, Kind)> {
    vec![
        ("auto.create.topics.enable", "true".to_string(), Kind::Boolean),
        ("default.replication.factor", "1".to_string(), Kind::Int),
        ("log.retention.ms", "604800000".to_string(), Kind::Long),
        ("message.max.bytes", "1048588".to_string(), Kind::Int),
        ("min.insync.replicas", "1".to_string(), Kind::Int),
        ("num.partitions", default_partitions.to_string(), Kind::Int),
        ("socket.request.max.bytes", "104857600".to_string(), Kind::Int),
    ]
}
