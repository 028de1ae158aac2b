//! Topic-level settings (seed 004): Kafka's topic property names, each overriding the matching
//! 0.7 broker setting. Only what the user set is stored ([`Overrides`]); everything else is
//! inherited from the broker's configuration when it is applied, so a changed broker default
//! reaches every topic that does not override it.
//!
//! | property            | 0.7 broker setting it overrides                          |
//! |---------------------|----------------------------------------------------------|
//! | `partitions`        | `num.partitions` / `topic.partition.count.map`           |
//! | `segment.bytes`     | `log.file.size` / `topic.log.file.size`                  |
//! | `segment.ms`        | `log.roll.hours` / `topic.log.roll.hours`                |
//! | `flush.messages`    | `log.flush.interval`                                     |
//! | `flush.ms`          | `log.default.flush.interval.ms` / `topic.flush.intervals.ms` |
//! | `retention.bytes`   | `log.retention.size` / `topic.log.retention.size`        |
//! | `retention.ms`      | `log.retention.hours` / `topic.log.retention.hours`      |
//! | `max.message.bytes` | `max.message.size`                                       |
//!
//! As in Kafka, `retention.bytes` and `retention.ms` accept `-1` for "no limit"; every other
//! negative value, and anything that is not a decimal integer, is refused.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use kwire07_protocol::log::{LogConfig, TopicOverrides};

/// Every topic-level property, in the order `describe` lists them.
pub const PROPERTIES: [&str; 8] = [
    "partitions",
    "segment.bytes",
    "segment.ms",
    "flush.messages",
    "flush.ms",
    "retention.bytes",
    "retention.ms",
    "max.message.bytes",
];

/// Most partitions one topic may have: each is a directory and an open file on every broker.
pub const MAX_PARTITIONS: i64 = 10_000;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    #[error("unknown topic property {name:?} (known: {})", PROPERTIES.join(", "))]
    Unknown { name: String },
    #[error("topic property {name}={value:?}: {reason}")]
    Invalid { name: String, value: String, reason: String },
}

/// Checks one property and returns its canonical text (the decimal integer, no sign or zeros).
pub fn check(name: &str, value: &str) -> Result<String, SettingError> {
    let (min, max, unlimited) = match name {
        "partitions" => (1, MAX_PARTITIONS, false),
        // 0.7 rolls when the segment is strictly larger, so a size must leave room for a message.
        "segment.bytes" => (1, i64::from(i32::MAX), false),
        "segment.ms" | "flush.messages" | "flush.ms" => (1, i64::MAX, false),
        "retention.bytes" | "retention.ms" => (1, i64::MAX, true),
        "max.message.bytes" => (1, i64::from(i32::MAX), false),
        _ => return Err(SettingError::Unknown { name: name.to_owned() }),
    };
    let invalid = |reason: String| SettingError::Invalid { name: name.to_owned(), value: value.to_owned(), reason };
    let n: i64 = value.parse().map_err(|_| invalid("not a decimal integer".into()))?;
    if unlimited && n == -1 {
        return Ok("-1".into());
    }
    if n < min || n > max {
        let also = if unlimited { " (or -1 for no limit)" } else { "" };
        return Err(invalid(format!("must be in {min}..={max}{also}")));
    }
    Ok(n.to_string())
}

/// A topic's overrides: validated, canonical values of the properties the user set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides(BTreeMap<String, String>);

impl Overrides {
    /// Validates every entry (e.g. read back from ZooKeeper or the standalone file).
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Overrides, SettingError> {
        let mut out = BTreeMap::new();
        for (k, v) in map {
            out.insert(k.clone(), check(k, v)?);
        }
        Ok(Overrides(out))
    }

    /// Sets (`Some`) or removes (`None`) one override.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), SettingError> {
        match value {
            Some(v) => {
                let v = check(name, v)?;
                self.0.insert(name.to_owned(), v);
            }
            None => {
                if !PROPERTIES.contains(&name) {
                    return Err(SettingError::Unknown { name: name.to_owned() });
                }
                self.0.remove(name);
            }
        }
        Ok(())
    }

    pub fn as_map(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn int(&self, name: &str) -> Option<i64> {
        self.0.get(name).and_then(|v| v.parse().ok())
    }

    pub fn partitions(&self) -> Option<i32> {
        self.int("partitions").and_then(|n| i32::try_from(n).ok())
    }

    /// `base` (the broker's `topic.*` settings for this topic) with these overrides on top.
    pub fn apply_to(&self, base: &TopicOverrides) -> TopicOverrides {
        let ms = |n: i64| Duration::from_millis(n as u64);
        let mut o = base.clone();
        if let Some(n) = self.int("segment.bytes") {
            o.segment_bytes = Some(n as u64);
        }
        if let Some(n) = self.int("segment.ms") {
            o.roll_age = Some(ms(n));
        }
        if let Some(n) = self.int("flush.messages") {
            o.flush_interval_messages = Some(n as u64);
        }
        if let Some(n) = self.int("flush.ms") {
            o.flush_interval = Some(ms(n));
        }
        // -1 ("no limit") becomes a limit that is never reached, which still overrides a
        // broker default that has one.
        if let Some(n) = self.int("retention.bytes") {
            o.retention_bytes = Some(u64::try_from(n).unwrap_or(u64::MAX));
        }
        if let Some(n) = self.int("retention.ms") {
            o.retention_age = Some(if n < 0 { Duration::MAX } else { ms(n) });
        }
        if let Some(n) = self.int("max.message.bytes") {
            o.max_message_size = Some(n as usize);
        }
        o
    }
}

/// The broker-side configuration topic settings inherit from: server.properties and flags, as
/// read at start-up.
#[derive(Debug, Clone, Default)]
pub struct BrokerDefaults {
    pub log: LogConfig,
    /// The `topic.*` maps of server.properties.
    pub topic_overrides: HashMap<String, TopicOverrides>,
    pub num_partitions: i32,
    /// `topic.partition.count.map`.
    pub partition_counts: HashMap<String, i32>,
}

/// One line of `describe`: a property, its value in effect, and whether the topic overrides it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting {
    pub name: &'static str,
    pub value: String,
    pub is_override: bool,
}

impl BrokerDefaults {
    /// The partition count a topic has without a `partitions` override.
    pub fn partitions(&self, topic: &str) -> i32 {
        self.partition_counts.get(topic).copied().unwrap_or(self.num_partitions)
    }

    /// The log overrides to give the log manager for `topic`.
    pub fn log_overrides(&self, topic: &str, overrides: &Overrides) -> TopicOverrides {
        overrides.apply_to(self.topic_overrides.get(topic).unwrap_or(&TopicOverrides::default()))
    }

    /// Every topic-level setting in effect for `topic`. Values from the broker's configuration
    /// (including its `topic.*` maps) are inherited; only ModifyTopic overrides count as overrides.
    pub fn describe(&self, topic: &str, overrides: &Overrides) -> Vec<Setting> {
        let cfg = self.log.with_overrides(&self.log_overrides(topic, overrides));
        let dur = |d: Option<Duration>| match d {
            Some(d) if d != Duration::MAX => d.as_millis().min(i64::MAX as u128).to_string(),
            _ => "-1".to_owned(),
        };
        let retention_bytes = match cfg.retention_bytes {
            Some(n) if n != u64::MAX => n.to_string(),
            _ => "-1".to_owned(),
        };
        PROPERTIES
            .iter()
            .map(|&name| {
                let inherited = match name {
                    "partitions" => self.partitions(topic).to_string(),
                    "segment.bytes" => cfg.segment_bytes.to_string(),
                    "segment.ms" => dur(cfg.roll_age),
                    "flush.messages" => cfg.flush_interval_messages.to_string(),
                    "flush.ms" => dur(Some(cfg.flush_interval)),
                    "retention.bytes" => retention_bytes.clone(),
                    "retention.ms" => dur(cfg.retention_age),
                    _ => cfg.max_message_size.map_or("-1".to_owned(), |n| n.to_string()),
                };
                match overrides.as_map().get(name) {
                    Some(v) => Setting { name, value: v.clone(), is_override: true },
                    None => Setting { name, value: inherited, is_override: false },
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn refuses_unknown_names_and_bad_values() {
        assert_eq!(check("segment.byte", "1"), Err(SettingError::Unknown { name: "segment.byte".into() }));
        let e = check("segment.bytes", "-5").unwrap_err();
        assert_eq!(e.to_string(), "topic property segment.bytes=\"-5\": must be in 1..=2147483647");
        assert!(check("retention.bytes", "-2").unwrap_err().to_string().contains("or -1 for no limit"));
        assert!(check("flush.ms", "ten").unwrap_err().to_string().contains("not a decimal integer"));
        assert!(check("partitions", "0").is_err());
        assert!(check("partitions", "10001").is_err());
        assert!(check("segment.bytes", " 5").is_err());
        assert!(check("segment.bytes", "").is_err());
        assert_eq!(check("segment.bytes", "+0100").unwrap(), "100");
        assert_eq!(check("retention.ms", "-1").unwrap(), "-1");
    }

    #[test]
    fn inherits_defaults_and_static_topic_settings() {
        let mut d = BrokerDefaults { num_partitions: 2, ..Default::default() };
        d.log.segment_bytes = 1000;
        d.partition_counts.insert("mapped".into(), 7);
        d.topic_overrides.insert("mapped".into(), TopicOverrides { segment_bytes: Some(500), ..Default::default() });
        let mut o = Overrides::default();
        o.set("retention.bytes", Some("-1")).unwrap();
        o.set("flush.messages", Some("3")).unwrap();
        let s = d.describe("t", &o);
        let get = |s: &[Setting], n: &str| s.iter().find(|x| x.name == n).cloned().unwrap();
        assert_eq!(s.len(), PROPERTIES.len());
        assert_eq!(
            get(&s, "segment.bytes"),
            Setting { name: "segment.bytes", value: "1000".into(), is_override: false }
        );
        assert_eq!(get(&s, "partitions").value, "2");
        assert_eq!(get(&s, "flush.messages"), Setting { name: "flush.messages", value: "3".into(), is_override: true });
        assert_eq!(get(&s, "retention.ms").value, (168 * 3_600_000u64).to_string());
        let m = d.describe("mapped", &Overrides::default());
        assert_eq!((get(&m, "partitions").value.as_str(), get(&m, "segment.bytes").value.as_str()), ("7", "500"));
        // A dynamic override beats the static topic map.
        let mut big = Overrides::default();
        big.set("segment.bytes", Some("900")).unwrap();
        assert_eq!(d.log_overrides("mapped", &big).segment_bytes, Some(900));
        // No limit beats a broker limit.
        d.log.retention_bytes = Some(10);
        let cfg = d.log.with_overrides(&d.log_overrides("t", &o));
        assert_eq!(cfg.retention_bytes, Some(u64::MAX));
        assert_eq!(get(&d.describe("t", &Overrides::default()), "retention.bytes").value, "10");
    }

    #[test]
    fn removing_unknown_is_refused_and_from_map_validates() {
        let mut o = Overrides::default();
        assert!(o.set("nope", None).is_err());
        let map = BTreeMap::from([("segment.bytes".to_owned(), "x".to_owned())]);
        assert!(Overrides::from_map(&map).is_err());
    }

    proptest! {
        #[test]
        fn canonical_values_round_trip(name in proptest::sample::select(PROPERTIES.to_vec()), n in any::<i64>()) {
            match check(name, &n.to_string()) {
                Ok(v) => {
                    prop_assert_eq!(check(name, &v).unwrap(), v.clone());
                    let mut o = Overrides::default();
                    o.set(name, Some(&v)).unwrap();
                    let d = BrokerDefaults::default();
                    let shown = d.describe("t", &o).into_iter().find(|s| s.name == name).unwrap();
                    prop_assert!(shown.is_override);
                    prop_assert_eq!(shown.value, v);
                }
                Err(SettingError::Invalid { .. }) => prop_assert!(n < 1 || n > i64::from(i32::MAX)),
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }
}
