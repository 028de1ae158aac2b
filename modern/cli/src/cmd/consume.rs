//! `kwire consume`: kcat's consumer on `kwire-client`. Partitions read directly (`-t`, `-p`,
//! `-o`), or topics through a group (`-G`); records printed with a format (`-f`), as JSON lines
//! (`-J`), or as key and value; `-e` stops at the end of the partitions, `-c` after a count;
//! `-X` sets any consumer config. Ctrl-C closes the consumer (commit, leave the group).

use std::collections::BTreeMap;
use std::io::Write;
use std::time::Duration;

use base64::Engine;
use clap::Args;
use kwire_client::consumer::{Consumer, ConsumerConfig, ConsumerRecord, OffsetReset, TimestampType, TopicPartition};

use crate::cmd::CmdResult;

#[derive(Debug, Args)]
#[command(about = "Read records from Kafka, as kcat -C does (and -G for a group)")]
pub struct ConsumeArgs {
    /// Bootstrap brokers, HOST:PORT, comma-separated.
    #[arg(short = 'b', long = "brokers", value_name = "HOST:PORT,...")]
    pub brokers: String,
    /// A topic (repeatable; with -G, topics may also follow as arguments).
    #[arg(short = 't', long = "topic")]
    pub topics: Vec<String>,
    /// Only this partition (repeatable); all of the topic's otherwise. Not with -G.
    #[arg(short = 'p', long = "partition")]
    pub partitions: Vec<i32>,
    /// Read through this consumer group (subscribe; partitions come from the group).
    #[arg(short = 'G', long = "group")]
    pub group: Option<String>,
    /// Where to start: beginning, end, stored, an offset, -N (N before the end), s@MS (the
    /// first record at or after that time). With -G: beginning or end (the reset policy).
    #[arg(short = 'o', long = "offset", default_value = "beginning", allow_hyphen_values = true)]
    pub offset: String,
    /// Stop at the end of every partition.
    #[arg(short = 'e', long = "exit")]
    pub exit: bool,
    /// Stop after this many records.
    #[arg(short = 'c', long = "count")]
    pub count: Option<u64>,
    /// Print each record with this format: %t topic, %p partition, %o offset, %T timestamp,
    /// %k key, %K key length, %s value, %S value length, %h headers, %%, \n \t \\.
    #[arg(short = 'f', long = "format", conflicts_with = "json")]
    pub format: Option<String>,
    /// One JSON object per record (as kcat -J).
    #[arg(short = 'J', long = "json")]
    pub json: bool,
    /// Print the key and this delimiter before each value.
    #[arg(short = 'K', long = "key-delimiter")]
    pub key_delimiter: Option<String>,
    /// What ends each record (without -f or -J).
    #[arg(short = 'D', long = "delimiter", default_value = "\n")]
    pub delimiter: String,
    /// A consumer config, KEY=VALUE, with Kafka's keys (repeatable).
    #[arg(short = 'X', value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Say nothing on stderr but errors.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Topics to subscribe to, with -G.
    #[arg(value_name = "TOPIC")]
    pub more_topics: Vec<String>,
}

/// How a record is printed.
enum Output {
    Format(Vec<Token>),
    Json,
    Plain { key_delimiter: Option<String>, delimiter: String },
}

#[derive(Debug, PartialEq)]
enum Token {
    Text(String),
    Topic,
    Partition,
    Offset,
    Timestamp,
    Key,
    KeyLength,
    Value,
    ValueLength,
    Headers,
}

/// kcat's format tokens and escapes; an unknown `%x` is an error.
fn parse_format(format: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut text = String::new();
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some('r') => text.push('\r'),
                Some('\\') => text.push('\\'),
                Some(other) => {
                    text.push('\\');
                    text.push(other);
                }
                None => text.push('\\'),
            },
            '%' => {
                let token = match chars.next() {
                    Some('%') => {
                        text.push('%');
                        continue;
                    }
                    Some('t') => Token::Topic,
                    Some('p') => Token::Partition,
                    Some('o') => Token::Offset,
                    Some('T') => Token::Timestamp,
                    Some('k') => Token::Key,
                    Some('K') => Token::KeyLength,
                    Some('s') => Token::Value,
                    Some('S') => Token::ValueLength,
                    Some('h') => Token::Headers,
                    Some(other) => return Err(format!("unknown format token %{other}")),
                    None => return Err("a format may not end with %".into()),
                };
                if !text.is_empty() {
                    tokens.push(Token::Text(std::mem::take(&mut text)));
                }
                tokens.push(token);
            }
            c => text.push(c),
        }
    }
    if !text.is_empty() {
        tokens.push(Token::Text(text));
    }
    Ok(tokens)
}

fn write_record(out: &mut impl Write, output: &Output, r: &ConsumerRecord) -> std::io::Result<()> {
    let key = r.key.as_deref();
    let value = r.value.as_deref();
    match output {
        Output::Plain { key_delimiter, delimiter } => {
            if let Some(d) = key_delimiter {
                out.write_all(key.unwrap_or_default())?;
                out.write_all(d.as_bytes())?;
            }
            out.write_all(value.unwrap_or_default())?;
            out.write_all(delimiter.as_bytes())
        }
        Output::Format(tokens) => {
            for token in tokens {
                match token {
                    Token::Text(t) => out.write_all(t.as_bytes())?,
                    Token::Topic => out.write_all(r.topic.as_bytes())?,
                    Token::Partition => write!(out, "{}", r.partition)?,
                    Token::Offset => write!(out, "{}", r.offset)?,
                    Token::Timestamp => write!(out, "{}", r.timestamp)?,
                    Token::Key => out.write_all(key.unwrap_or_default())?,
                    Token::KeyLength => write!(out, "{}", key.map_or(-1, |k| k.len() as i64))?,
                    Token::Value => out.write_all(value.unwrap_or_default())?,
                    Token::ValueLength => write!(out, "{}", value.map_or(-1, |v| v.len() as i64))?,
                    Token::Headers => {
                        for (i, h) in r.headers.iter().enumerate() {
                            if i > 0 {
                                out.write_all(b",")?;
                            }
                            out.write_all(&h.key)?;
                            out.write_all(b"=")?;
                            out.write_all(h.value.as_deref().unwrap_or_default())?;
                        }
                    }
                }
            }
            Ok(())
        }
        Output::Json => {
            let bytes = |b: Option<&[u8]>| match b {
                None => serde_json::Value::Null,
                Some(b) => match std::str::from_utf8(b) {
                    Ok(s) => serde_json::Value::String(s.to_owned()),
                    Err(_) => serde_json::json!({ "base64": base64::engine::general_purpose::STANDARD.encode(b) }),
                },
            };
            let headers: Vec<serde_json::Value> =
                r.headers.iter().flat_map(|h| [bytes(Some(&h.key)), bytes(h.value.as_deref())]).collect();
            let tstype = match r.timestamp_type {
                TimestampType::CreateTime => "create",
                TimestampType::LogAppendTime => "logappend",
                TimestampType::NoTimestamp => "none",
            };
            let line = serde_json::json!({
                "topic": &*r.topic,
                "partition": r.partition,
                "offset": r.offset,
                "tstype": tstype,
                "ts": r.timestamp,
                "broker": -1,
                "headers": headers,
                "key": bytes(key),
                "payload": bytes(value),
            });
            writeln!(out, "{line}")
        }
    }
}

/// Where each partition starts, from `-o`.
enum Start {
    Beginning,
    End,
    Stored,
    Offset(i64),
    FromEnd(i64),
    Time(i64),
}

fn parse_start(offset: &str) -> Result<Start, String> {
    Ok(match offset {
        "beginning" | "earliest" => Start::Beginning,
        "end" | "latest" => Start::End,
        "stored" => Start::Stored,
        o if o.starts_with("s@") => {
            Start::Time(o[2..].parse().map_err(|_| format!("-o {o}: expected s@MILLISECONDS"))?)
        }
        o if o.starts_with('-') => Start::FromEnd(o[1..].parse().map_err(|_| format!("-o {o}: expected -N"))?),
        o => Start::Offset(
            o.parse()
                .map_err(|_| format!("-o {o}: expected beginning, end, stored, an offset, -N or s@MILLISECONDS"))?,
        ),
    })
}

fn config(a: &ConsumeArgs) -> Result<ConsumerConfig, String> {
    let mut config = ConsumerConfig::new(&a.brokers).client_id("kwire-consume");
    if let Some(group) = &a.group {
        config = config.group_id(group.clone());
        config = match a.offset.as_str() {
            "beginning" | "earliest" => config.auto_offset_reset(OffsetReset::Earliest),
            "end" | "latest" => config.auto_offset_reset(OffsetReset::Latest),
            "stored" => config,
            other => {
                return Err(format!(
                    "-o {other} with -G: a group starts from its committed offsets; use beginning or end"
                ))
            }
        };
    }
    for pair in &a.config {
        let (key, value) = pair.split_once('=').ok_or_else(|| format!("-X {pair}: expected KEY=VALUE"))?;
        config = config.set(key.trim(), value).map_err(|e| e.to_string())?;
    }
    Ok(config)
}

/// Assigns the partitions asked for and moves each to where `-o` says.
async fn assign(consumer: &Consumer, a: &ConsumeArgs) -> CmdResult<()> {
    let topics: Vec<&str> = a.topics.iter().chain(&a.more_topics).map(String::as_str).collect();
    if topics.is_empty() {
        return Err("a topic is needed (-t TOPIC)".into());
    }
    let metadata = consumer.metadata(&topics).await?;
    let mut partitions = Vec::new();
    for topic in &topics {
        let Some(meta) = metadata.topics.get(*topic).filter(|t| t.error == kwire::ErrorCode::NONE) else {
            return Err(format!("topic {topic} does not exist").into());
        };
        let wanted: Vec<i32> = if a.partitions.is_empty() {
            meta.partitions.iter().map(|p| p.partition).collect()
        } else {
            a.partitions.clone()
        };
        partitions.extend(wanted.into_iter().map(|p| TopicPartition::new(*topic, p)));
    }
    consumer.assign(partitions.clone()).await?;
    match parse_start(&a.offset)? {
        Start::Beginning => consumer.seek_to_beginning(&partitions)?,
        Start::End => consumer.seek_to_end(&partitions)?,
        Start::Stored => {
            if consumer.config().group_id.is_none() {
                return Err("-o stored needs a group: -X group.id=GROUP".into());
            }
        }
        Start::Offset(offset) => {
            for tp in &partitions {
                consumer.seek(tp, offset)?;
            }
        }
        Start::FromEnd(n) => {
            let ends = consumer.end_offsets(&partitions).await?;
            let starts = consumer.beginning_offsets(&partitions).await?;
            for tp in &partitions {
                let start = (ends.get(tp).copied().unwrap_or(0) - n).max(starts.get(tp).copied().unwrap_or(0));
                consumer.seek(tp, start)?;
            }
        }
        Start::Time(ms) => {
            let found = consumer.offsets_for_times(partitions.iter().map(|tp| (tp.clone(), ms)).collect()).await?;
            let ends = consumer.end_offsets(&partitions).await?;
            for tp in &partitions {
                let offset = found.get(tp).copied().flatten().map_or(ends.get(tp).copied().unwrap_or(0), |o| o.offset);
                consumer.seek(tp, offset)?;
            }
        }
    }
    Ok(())
}

pub async fn run(a: ConsumeArgs) -> CmdResult {
    let output = match (&a.format, a.json) {
        (Some(format), _) => Output::Format(parse_format(format)?),
        (None, true) => Output::Json,
        (None, false) => Output::Plain { key_delimiter: a.key_delimiter.clone(), delimiter: unescape(&a.delimiter) },
    };
    if a.group.is_some() && !a.partitions.is_empty() {
        return Err("-p cannot be used with -G: the group assigns partitions".into());
    }
    let consumer = Consumer::new(config(&a)?).await?;
    match &a.group {
        Some(group) => {
            let topics: Vec<String> = a.topics.iter().chain(&a.more_topics).cloned().collect();
            if topics.is_empty() {
                return Err("a topic is needed (-t TOPIC, or topics after the options)".into());
            }
            consumer.subscribe(topics).await?;
            if !a.quiet {
                eprintln!("% Waiting for group {group} to assign partitions");
            }
        }
        None => assign(&consumer, &a).await?,
    }
    let result = read(&consumer, &a, &output).await;
    let closed = tokio::time::timeout(Duration::from_secs(30), consumer.close()).await;
    result?;
    match closed {
        Ok(result) => result?,
        Err(_) => return Err("closing the consumer took over 30 s".into()),
    }
    Ok(())
}

fn unescape(text: &str) -> String {
    match parse_format(&text.replace('%', "%%")) {
        Ok(tokens) => tokens.into_iter().map(|t| if let Token::Text(t) = t { t } else { String::new() }).collect(),
        Err(_) => text.to_owned(),
    }
}

/// Polls and prints until the end (`-e`), the count (`-c`), Ctrl-C or a closed output.
async fn read(consumer: &Consumer, a: &ConsumeArgs, output: &Output) -> CmdResult {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut printed = 0u64;
    let mut reported: BTreeMap<TopicPartition, bool> = BTreeMap::new();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        let records = tokio::select! {
            records = consumer.poll(Duration::from_millis(200)) => records?,
            _ = &mut ctrl_c => break,
        };
        for record in records.iter() {
            if a.count.is_some_and(|count| printed >= count) {
                break;
            }
            if let Err(e) = write_record(&mut out, output, record) {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    return Ok(());
                }
                return Err(e.into());
            }
            printed += 1;
        }
        match out.flush() {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            other => other?,
        }
        if a.count.is_some_and(|count| printed >= count) {
            break;
        }
        if a.exit {
            let assignment = consumer.assignment();
            let mut all = !assignment.is_empty();
            for tp in &assignment {
                let at_end = consumer.current_lag(tp) == Some(0);
                if at_end && !a.quiet && !reported.get(tp).copied().unwrap_or(false) {
                    eprintln!(
                        "% Reached end of topic {} [{}] at offset {}",
                        tp.topic,
                        tp.partition,
                        consumer.position(tp).await.unwrap_or(-1)
                    );
                }
                reported.insert(tp.clone(), at_end);
                all &= at_end;
            }
            if all {
                break;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kcats_format_tokens_parse() {
        let tokens = parse_format("%t [%p] @%o: %k=%s (%S)\\n%%").unwrap();
        assert_eq!(tokens.first(), Some(&Token::Topic));
        assert!(tokens.contains(&Token::ValueLength));
        assert_eq!(tokens.last(), Some(&Token::Text(")\n%".into())));
        assert!(parse_format("%x").is_err());
        assert!(matches!(parse_start("-10"), Ok(Start::FromEnd(10))));
        assert!(matches!(parse_start("s@1700000000000"), Ok(Start::Time(1_700_000_000_000))));
        assert!(parse_start("later").is_err());
    }
}
