//! Plain-text node values: decimal numbers as Java's `toString` writes them, and UTF-8 checks.

use super::error::ZkDataError;

/// The node data as UTF-8, or an error naming the path and the first bad byte.
pub(crate) fn utf8<'a>(path: &str, bytes: &'a [u8]) -> Result<&'a str, ZkDataError> {
    std::str::from_utf8(bytes).map_err(|e| ZkDataError::NotUtf8 { path: path.to_owned(), offset: e.valid_up_to() })
}

/// Parses a non-negative decimal made of ASCII digits only (no sign, no spaces), as written by
/// `Long.toString`. Leading zeros are accepted, as Java's `parseLong` accepts them.
pub(crate) fn parse_unsigned(text: &str, max: u64) -> Result<u64, String> {
    if text.is_empty() {
        return Err("expected a decimal number, found nothing".to_owned());
    }
    let mut value: u64 = 0;
    for c in text.chars() {
        let digit = c.to_digit(10).ok_or_else(|| format!("expected a decimal number, found {text:?}"))?;
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(digit)))
            .filter(|&v| v <= max)
            .ok_or_else(|| format!("{text} is larger than the limit {max}"))?;
    }
    Ok(value)
}

/// Parses a decimal that names something in a path (a partition or broker id): digits only,
/// no leading zero (Kafka never writes one, so `01` is not the node `1`), at most `max`.
pub(crate) fn parse_canonical(text: &str, max: u64) -> Option<u64> {
    if text.len() > 1 && text.starts_with('0') {
        return None;
    }
    parse_unsigned(text, max).ok()
}

/// Parses a non-negative Java `int` written as decimal text.
pub(crate) fn parse_int_value(path: &str, text: &str, what: &str) -> Result<i32, ZkDataError> {
    parse_unsigned(text, i32::MAX as u64)
        .map(|v| v as i32)
        .map_err(|detail| ZkDataError::invalid(path, format!("{what}: {detail}")))
}
