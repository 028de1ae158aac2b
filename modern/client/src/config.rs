//! Kafka's client configs as `key=value` pairs: the parsing both the producer's and the
//! consumer's configs share, with errors that name the key, the value and what was expected.

use std::fmt;
use std::time::Duration;

/// A config key Kafka's clients do not know, or a value they would refuse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The key, as Kafka spells it (`linger.ms`).
    pub key: String,
    /// The value given.
    pub value: String,
    /// What was wrong.
    pub reason: String,
}

impl ConfigError {
    pub fn new(key: &str, value: &str, reason: impl Into<String>) -> ConfigError {
        ConfigError { key: key.to_owned(), value: value.to_owned(), reason: reason.into() }
    }

    /// A key the client does not know.
    pub fn unknown(key: &str, value: &str) -> ConfigError {
        ConfigError::new(key, value, "not a config this client knows")
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid value {:?} for configuration {}: {}", self.value, self.key, self.reason)
    }
}

impl std::error::Error for ConfigError {}

/// `true` or `false`, in any case, as Java's `ConfigDef` reads a boolean.
pub fn parse_bool(key: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ConfigError::new(key, value, "expected true or false")),
    }
}

/// An integer within `min..=max`.
pub fn parse_int<T>(key: &str, value: &str, min: T, max: T) -> Result<T, ConfigError>
where
    T: std::str::FromStr + PartialOrd + fmt::Display + Copy,
{
    let n: T = value.trim().parse().map_err(|_| ConfigError::new(key, value, "expected a whole number"))?;
    if n < min || n > max {
        return Err(ConfigError::new(key, value, format!("must be between {min} and {max}")));
    }
    Ok(n)
}

/// A duration in milliseconds (a `*.ms` key), at least 0.
pub fn parse_ms(key: &str, value: &str) -> Result<Duration, ConfigError> {
    parse_int::<u64>(key, value, 0, i64::MAX as u64).map(Duration::from_millis)
}

/// One of `allowed`, compared without case, returned as given in `allowed`.
pub fn parse_choice<'a>(key: &str, value: &str, allowed: &[&'a str]) -> Result<&'a str, ConfigError> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(value.trim()))
        .copied()
        .ok_or_else(|| ConfigError::new(key, value, format!("expected one of {}", allowed.join(", "))))
}

/// A comma-separated list, each item trimmed, empty items dropped.
pub fn parse_list(value: &str) -> Vec<String> {
    value.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_kafkas_config_def_reads_them() {
        assert_eq!(parse_bool("enable.idempotence", "TRUE"), Ok(true));
        assert!(parse_bool("enable.idempotence", "yes").is_err());
        assert_eq!(parse_ms("linger.ms", "5"), Ok(Duration::from_millis(5)));
        assert!(parse_ms("linger.ms", "-1").is_err());
        assert_eq!(parse_int::<i32>("batch.size", "16384", 0, i32::MAX), Ok(16384));
        assert_eq!(parse_choice("acks", "ALL", &["all", "0", "1", "-1"]), Ok("all"));
        assert_eq!(parse_list(" a, b,,c "), ["a", "b", "c"]);
        let e = parse_int::<u8>("x", "300", 0, 10).unwrap_err();
        assert_eq!(e.to_string(), "invalid value \"300\" for configuration x: expected a whole number");
    }
}
