//! Group configs (Kafka's `GroupConfigManager`): the share.* configs a share group reads
//! (Kafka's `GroupConfig` names), set per group id with IncrementalAlterConfigs on a GROUP
//! resource (whether a group has the id or not), each over the cluster's default (Kafka's
//! `group.share.*` broker configs), checked against Kafka's bounds.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::config::FakeConfig;
use crate::share_partitions::Limits;
use crate::topic_configs::Kind;

/// Kafka's `group.share.heartbeat.interval.ms`.
const SHARE_HEARTBEAT_INTERVAL_MS: i32 = 5_000;

/// Where a share-partition starts when the group first reads it (`share.auto.offset.reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reset {
    Earliest,
    Latest,
    /// The first record at most this long ago.
    ByDuration(Duration),
}

/// The configs set on each group id: id → name → value.
#[derive(Debug, Default)]
pub(crate) struct Configs {
    set: BTreeMap<String, BTreeMap<String, String>>,
}

impl Configs {
    /// The configs set on `group`, if any.
    pub fn get(&self, group: &str) -> Option<&BTreeMap<String, String>> {
        self.set.get(group)
    }

    /// Replaces the configs set on `group`.
    pub fn set(&mut self, group: &str, configs: BTreeMap<String, String>) {
        self.set.insert(group.to_string(), configs);
    }

    /// The group's settings: its own configs over the cluster's defaults.
    pub fn settings(&self, group: &str, defaults: &FakeConfig) -> Settings {
        Settings::of(self.set.get(group), defaults)
    }
}

/// One group's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    pub session_timeout: Duration,
    pub heartbeat_interval_ms: i32,
    pub lock: Duration,
    pub delivery_count_limit: i16,
    pub max_record_locks: i64,
    pub reset: Reset,
}

/// A group config: name, type, and Kafka's bounds for an int one.
pub(crate) type GroupConfig = (&'static str, Kind, Option<(i64, i64)>);

/// Every share group config.
pub(crate) const GROUP_CONFIGS: &[GroupConfig] = &[
    ("share.auto.offset.reset", Kind::String, None),
    ("share.delivery.count.limit", Kind::Int, Some((2, 10))),
    ("share.heartbeat.interval.ms", Kind::Int, Some((5_000, 15_000))),
    ("share.isolation.level", Kind::String, None),
    ("share.partition.max.record.locks", Kind::Int, Some((100, 10_000))),
    ("share.record.lock.duration.ms", Kind::Int, Some((15_000, 60_000))),
    ("share.renew.acknowledge.enable", Kind::Boolean, None),
    ("share.session.timeout.ms", Kind::Int, Some((45_000, 60_000))),
];

/// A group config's default on this cluster.
pub(crate) fn default_value(name: &str, defaults: &FakeConfig) -> String {
    match name {
        "share.auto.offset.reset" => "latest".to_string(),
        "share.delivery.count.limit" => defaults.share_delivery_count_limit.to_string(),
        "share.heartbeat.interval.ms" => SHARE_HEARTBEAT_INTERVAL_MS.to_string(),
        "share.isolation.level" => "read_uncommitted".to_string(),
        "share.partition.max.record.locks" => "2000".to_string(),
        "share.record.lock.duration.ms" => defaults.share_record_lock_duration.as_millis().to_string(),
        "share.renew.acknowledge.enable" => "true".to_string(),
        "share.session.timeout.ms" => defaults.share_session_timeout.as_millis().to_string(),
        _ => String::new(),
    }
}

/// Why `value` is no value of `name` (Kafka's message), if it is not.
pub(crate) fn check(name: &str, value: &str) -> Result<(), String> {
    let Some((_, kind, bounds)) = GROUP_CONFIGS.iter().find(|(n, ..)| *n == name) else {
        return Err(format!("Unknown group config name: {name}"));
    };
    let invalid = || Err(format!("Invalid value {value} for configuration {name}"));
    match kind {
        Kind::Int => match value.trim().parse::<i64>() {
            Ok(v) if bounds.is_none_or(|(lo, hi)| (lo..=hi).contains(&v)) => Ok(()),
            _ => invalid(),
        },
        Kind::Boolean if !value.eq_ignore_ascii_case("true") && !value.eq_ignore_ascii_case("false") => invalid(),
        _ => match name {
            "share.auto.offset.reset" if parse_reset(value).is_none() => invalid(),
            "share.isolation.level" if value != "read_committed" && value != "read_uncommitted" => invalid(),
            _ => Ok(()),
        },
    }
}

impl Settings {
    /// `set` over the cluster's defaults.
    pub fn of(set: Option<&BTreeMap<String, String>>, defaults: &FakeConfig) -> Settings {
        let get = |name: &str| set.and_then(|s| s.get(name)).cloned().unwrap_or_else(|| default_value(name, defaults));
        let millis = |name: &str| Duration::from_millis(get(name).trim().parse().unwrap_or(0));
        Settings {
            session_timeout: millis("share.session.timeout.ms"),
            heartbeat_interval_ms: get("share.heartbeat.interval.ms")
                .trim()
                .parse()
                .unwrap_or(SHARE_HEARTBEAT_INTERVAL_MS),
            lock: millis("share.record.lock.duration.ms"),
            delivery_count_limit: get("share.delivery.count.limit").trim().parse().unwrap_or(5),
            max_record_locks: get("share.partition.max.record.locks").trim().parse().unwrap_or(2000),
            reset: parse_reset(&get("share.auto.offset.reset")).unwrap_or(Reset::Latest),
        }
    }

    pub fn limits(&self) -> Limits {
        Limits { lock: self.lock, delivery_count_limit: self.delivery_count_limit }
    }
}

/// `earliest`, `latest` or `by_duration:<ISO-8601 duration>` (Java's `Duration.parse`, not
/// negative).
fn parse_reset(value: &str) -> Option<Reset> {
    match value.trim().to_ascii_lowercase().as_str() {
        "earliest" => Some(Reset::Earliest),
        "latest" => Some(Reset::Latest),
        v => v.strip_prefix("by_duration:").and_then(parse_iso_duration).map(Reset::ByDuration),
    }
}

/// `PnDTnHnMn.nS` (each part optional, at least one), as `java.time.Duration.parse` reads it.
fn parse_iso_duration(text: &str) -> Option<Duration> {
    let rest = text.trim().strip_prefix('p')?;
    let (days, time) = match rest.split_once('t') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut seconds = 0f64;
    let mut parts = 0;
    if !days.is_empty() {
        seconds += days.strip_suffix('d')?.parse::<f64>().ok()? * 86_400.0;
        parts += 1;
    }
    if let Some(mut time) = time {
        for (unit, scale) in [('h', 3_600.0), ('m', 60.0), ('s', 1.0)] {
            if let Some(at) = time.find(unit) {
                seconds += time[..at].parse::<f64>().ok()? * scale;
                time = &time[at + 1..];
                parts += 1;
            }
        }
        if !time.is_empty() {
            return None;
        }
    }
    (parts > 0 && seconds >= 0.0 && seconds.is_finite()).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resets_and_bounds() {
        assert_eq!(parse_reset("earliest"), Some(Reset::Earliest));
        assert_eq!(parse_reset("by_duration:PT1H30M"), Some(Reset::ByDuration(Duration::from_secs(5_400))));
        assert_eq!(parse_reset("by_duration:P1D"), Some(Reset::ByDuration(Duration::from_secs(86_400))));
        assert_eq!(parse_reset("by_duration:-PT1H"), None);
        assert_eq!(parse_reset("none"), None);
        assert!(check("share.delivery.count.limit", "2").is_ok());
        assert!(check("share.delivery.count.limit", "1").is_err());
        assert!(check("share.nope", "1").is_err());
    }
}
