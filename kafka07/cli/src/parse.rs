//! Value parsers for command-line arguments, shared by the subcommands. A leaf module.

use clap::ValueEnum;
use kwire07_client::consumer::StartOffset;
use kwire07_client::{Codec, Magic, ReceiveBuffer};

/// `NAME=VALUE`; the broker judges the name and the value.
pub fn parse_setting(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected NAME=VALUE, not {s:?}")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressionArg {
    None,
    Gzip,
    Snappy,
}

impl From<CompressionArg> for Codec {
    fn from(c: CompressionArg) -> Codec {
        match c {
            CompressionArg::None => Codec::None,
            CompressionArg::Gzip => Codec::Gzip,
            CompressionArg::Snappy => Codec::Snappy,
        }
    }
}

pub fn parse_magic(s: &str) -> Result<Magic, String> {
    match s {
        "0" => Ok(Magic::V0),
        "1" => Ok(Magic::V1),
        _ => Err(format!("magic must be 0 or 1, not {s:?}")),
    }
}

/// `--receive-buffer`: `auto`, `system` or a size in bytes.
pub fn parse_receive_buffer(s: &str) -> Result<ReceiveBuffer, String> {
    match s {
        "auto" => Ok(ReceiveBuffer::Auto),
        "system" => Ok(ReceiveBuffer::System),
        n => match n.parse::<usize>() {
            Ok(bytes) if bytes > 0 => Ok(ReceiveBuffer::Bytes(bytes)),
            _ => Err(format!("expected auto, system or a size in bytes, not {n:?}")),
        },
    }
}

/// `--offset`: earliest, latest, a byte offset, or 0.7's −1 (latest) and −2 (earliest).
pub fn parse_start(s: &str) -> Result<StartOffset, String> {
    match s {
        "earliest" | "smallest" | "-2" => Ok(StartOffset::Earliest),
        "latest" | "largest" | "-1" => Ok(StartOffset::Latest),
        n => match n.parse::<i64>() {
            Ok(v) if v >= 0 => Ok(StartOffset::At(v as u64)),
            Ok(v) => Err(format!(
                "offset {v} is out of range: give a byte offset of 0 or more, -1 (latest) or -2 (earliest)"
            )),
            Err(_) => Err(format!("expected earliest, latest or a byte offset, not {n:?}")),
        },
    }
}

/// An `i32` of at least `min`; `out_of_range` words the error for a value below it.
fn parse_at_least(s: &str, min: i32, noun: &str, out_of_range: impl Fn(i64) -> String) -> Result<i32, String> {
    match s.parse::<i64>() {
        Ok(v) if (i64::from(min)..=i64::from(i32::MAX)).contains(&v) => Ok(v as i32),
        Ok(v) => Err(out_of_range(v)),
        Err(_) => Err(format!("expected {noun}, not {s:?}")),
    }
}

/// A partition number: 0 or more.
pub fn parse_partition(s: &str) -> Result<i32, String> {
    parse_at_least(s, 0, "a partition number", |v| format!("partition {v} is out of range 0..={}", i32::MAX))
}

/// `produce --partition`: a partition number, or 0.7's −1 (the broker picks one at random).
pub fn parse_produce_partition(s: &str) -> Result<i32, String> {
    match s {
        "-1" => Ok(-1),
        _ => parse_partition(s).map_err(|e| format!("{e} (or -1: the broker picks one)")),
    }
}

/// `topics create --partitions`: 1 or more.
pub fn parse_partition_count(s: &str) -> Result<i32, String> {
    parse_at_least(s, 1, "a number of partitions", |v| format!("a topic needs 1 to {} partitions, not {v}", i32::MAX))
}

pub fn parse_time(s: &str) -> Result<i64, String> {
    match s {
        "earliest" => Ok(-2),
        "latest" => Ok(-1),
        n => match n.parse::<i64>() {
            Ok(t) if t >= 0 || t == -1 || t == -2 => Ok(t),
            _ => Err(format!("expected earliest, latest or milliseconds since the epoch, not {n:?}")),
        },
    }
}
