//! What the tap prints (one line per exchange, one JSON object per frame, or object trees)
//! and records.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kwire::messages::{ApiKey, RequestFrame, ResponseFrame, ResponseKind};
use kwire::{DecodeError, Json as _};
use kwire_inspect::explain::recording::{Entry, MAGIC};
use kwire_inspect::explain::{self, hex_preview, Input, Schemas, Side, Style};
use serde_json::{json, Value};

use super::TapArgs;
use crate::cmd::CmdResult;

/// One request and its response.
pub struct Exchange {
    pub connection: u32,
    pub api_key: i16,
    pub version: i16,
    pub correlation: i32,
    pub request_size: usize,
    pub response_size: usize,
    pub latency: Duration,
    pub rewritten: bool,
    /// False when the request said it wanted no response (Produce with acks=0).
    pub expected: bool,
}

enum Mode {
    Lines,
    Json,
    Explain(Schemas),
}

pub struct Reporter {
    mode: Mode,
    record: Option<Mutex<BufWriter<File>>>,
    /// One writer at a time, so lines from different connections never interleave.
    out: Mutex<()>,
}

pub fn api_name(key: i16) -> String {
    ApiKey::from_key(key).map_or_else(|| format!("api {key}"), |a| a.name().to_string())
}

/// The time as RFC 3339 UTC with milliseconds.
pub fn utc_now() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let (secs, millis) = (now.as_secs() as i64, now.subsec_millis());
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

fn micros_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// ` errors: NAME, OTHERx3` (names in order, how often when more than once), or nothing.
fn errors_text(body: &ResponseKind, version: i16) -> String {
    let codes = super::errors::error_codes(body, version);
    if codes.is_empty() {
        return String::new();
    }
    let named: BTreeMap<String, usize> = codes
        .into_iter()
        .map(|(code, n)| (code.name().map_or_else(|| format!("error {}", code.0), str::to_string), n))
        .collect();
    let list: Vec<String> =
        named.into_iter().map(|(name, n)| if n == 1 { name } else { format!("{name}x{n}") }).collect();
    format!(" errors: {}", list.join(", "))
}

impl Reporter {
    pub fn new(args: &TapArgs, schemas: Option<Schemas>) -> CmdResult<Self> {
        let mode = match (schemas, args.json) {
            (Some(s), _) => Mode::Explain(s),
            (None, true) => Mode::Json,
            (None, false) => Mode::Lines,
        };
        let record = match &args.record {
            None => None,
            Some(path) => {
                let mut file = BufWriter::new(File::create(path).map_err(|e| format!("{}: {e}", path.display()))?);
                file.write_all(MAGIC)?;
                file.flush()?;
                Some(Mutex::new(file))
            }
        };
        Ok(Reporter { mode, record, out: Mutex::new(()) })
    }

    fn print(&self, text: &str) {
        let _guard = self.out.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    /// A frame whose re-encoding differs from what was sent (--reencode): one line, or one
    /// JSON object, on stdout beside the frames.
    pub fn reencoded(&self, connection: u32, side: &str, api_key: i16, version: i16, why: &str) {
        let time = utc_now();
        let api = api_name(api_key);
        match self.mode {
            Mode::Json => self.print(
                &json!({
                    "time": time, "connection": connection, "direction": "reencode", "side": side, "api": api,
                    "apiKey": api_key, "version": version, "differs": why,
                })
                .to_string(),
            ),
            _ => self.print(&format!("{time} conn {connection} reencode {side} {api} v{version} differs: {why}")),
        }
    }

    /// A connection event, on stderr (stdout carries only frames).
    pub fn note(&self, connection: u32, text: &str) {
        eprintln!("{} conn {connection} {text}", utc_now());
    }

    fn save(&self, side: Side, connection: u32, api_key: i16, api_version: i16, frame: &[u8]) {
        let Some(record) = &self.record else { return };
        let entry = Entry { side, connection, time_micros: micros_now(), api_key, api_version, frame: frame.to_vec() };
        let mut file = record.lock().unwrap_or_else(|p| p.into_inner());
        // Flushed per frame, so a killed tap leaves a readable recording.
        if file.write_all(&entry.to_bytes()).and_then(|()| file.flush()).is_err() {
            eprintln!("kwire tap: cannot write the recording");
        }
    }

    fn tree(&self, schemas: &Schemas, side: Side, api_key: i16, version: i16, frame: &[u8]) -> String {
        let key = api_key.to_string();
        let input =
            Input { side, api: Some(&key), version: Some(version), frame: true, bytes: frame, style: Style::default() };
        match explain::explain(schemas, &input) {
            Ok(e) => {
                let mut text = e.text();
                if let Some(fail) = &e.error {
                    text.push_str(&format!("error: {fail}\n"));
                }
                text
            }
            Err(e) => format!("cannot explain: {e}\n"),
        }
    }

    pub fn request(
        &self,
        connection: u32,
        frame: &[u8],
        decoded: Result<(&RequestFrame, usize), &DecodeError>,
        expects_response: bool,
    ) {
        let (key, version) = match &decoded {
            Ok((f, _)) => (f.api_key().key(), f.version()),
            Err(_) => {
                let (key, version, _) = super::header_fields(frame);
                (key, version)
            }
        };
        self.save(Side::Request, connection, key, version, frame);
        let time = utc_now();
        match (&self.mode, decoded) {
            (Mode::Json, Ok((f, trailing))) => {
                let api = f.api_key();
                let header = f.header.to_json(api.request_header_version(version)).unwrap_or(Value::Null);
                let body = f.body.to_json(version).unwrap_or_else(|e| json!({ "error": e.to_string() }));
                self.print(
                    &json!({
                        "time": time, "connection": connection, "direction": "request", "api": api.name(),
                        "apiKey": key, "version": version, "correlationId": f.header.correlation_id,
                        "size": frame.len(), "trailing": trailing, "header": header, "body": body,
                    })
                    .to_string(),
                );
            }
            (Mode::Json, Err(e)) => self.print(
                &json!({
                    "time": time, "connection": connection, "direction": "request", "apiKey": key,
                    "version": version, "size": frame.len(), "error": e.to_string(), "hex": hex_preview(frame, 256),
                })
                .to_string(),
            ),
            (Mode::Explain(schemas), _) => {
                let head = format!("{time} conn {connection} request {} v{version} {}B", api_name(key), frame.len());
                self.print(&format!("{head}\n{}", self.tree(schemas, Side::Request, key, version, frame)));
            }
            (Mode::Lines, Err(e)) => self.print(&format!(
                "{time} conn {connection} {} v{version} request not decoded ({e}), {}B: {}",
                api_name(key),
                frame.len(),
                hex_preview(frame, 64)
            )),
            (Mode::Lines, Ok((f, _))) if !expects_response => self.print(&format!(
                "{time} conn {connection} {} v{version} corr {} req {}B no response expected (acks=0)",
                api_name(key),
                f.header.correlation_id,
                frame.len()
            )),
            (Mode::Lines, Ok(_)) => {}
        }
    }

    pub fn response(&self, x: &Exchange, frame: &[u8], decoded: Result<(&ResponseFrame, usize), &String>) {
        self.save(Side::Response, x.connection, x.api_key, x.version, frame);
        let time = utc_now();
        let name = api_name(x.api_key);
        let latency_ms = x.latency.as_secs_f64() * 1000.0;
        let rewritten = match (x.rewritten, x.api_key == ApiKey::ApiVersions.key()) {
            (false, _) => "",
            (true, true) => " (versions clamped)",
            (true, false) => " (addresses rewritten)",
        };
        match (&self.mode, decoded) {
            (Mode::Json, Ok((f, trailing))) => {
                let header_version = f.api_key().response_header_version(x.version);
                let header = f.header.to_json(header_version).unwrap_or(Value::Null);
                let body = f.body.to_json(x.version).unwrap_or_else(|e| json!({ "error": e.to_string() }));
                self.print(
                    &json!({
                        "time": time, "connection": x.connection, "direction": "response", "api": name,
                        "apiKey": x.api_key, "version": x.version, "correlationId": x.correlation,
                        "size": frame.len(), "trailing": trailing, "latencyMs": latency_ms,
                        "rewritten": x.rewritten, "header": header, "body": body,
                    })
                    .to_string(),
                );
            }
            (Mode::Json, Err(e)) => self.print(
                &json!({
                    "time": time, "connection": x.connection, "direction": "response", "api": name,
                    "apiKey": x.api_key, "version": x.version, "correlationId": x.correlation,
                    "size": frame.len(), "error": e, "hex": hex_preview(frame, 256),
                })
                .to_string(),
            ),
            (Mode::Explain(schemas), _) => {
                let head = format!(
                    "{time} conn {} response {name} v{} {}B {latency_ms:.3} ms{rewritten}",
                    x.connection,
                    x.version,
                    frame.len()
                );
                self.print(&format!("{head}\n{}", self.tree(schemas, Side::Response, x.api_key, x.version, frame)));
            }
            (Mode::Lines, _) if !x.expected => self.print(&format!(
                "{time} conn {} {name} v{} corr {} answered although acks=0: resp {}B {latency_ms:.3} ms",
                x.connection, x.version, x.correlation, x.response_size
            )),
            (Mode::Lines, decoded) => {
                let errors = match decoded {
                    Ok((f, _)) => errors_text(&f.body, x.version),
                    Err(e) => format!(" response not decoded ({e}): {}", hex_preview(frame, 64)),
                };
                self.print(&format!(
                    "{time} conn {} {name} v{} corr {} req {}B resp {}B {latency_ms:.3} ms{rewritten}{errors}",
                    x.connection, x.version, x.correlation, x.request_size, x.response_size
                ));
            }
        }
    }

    /// A response whose correlation id no request of the connection used.
    pub fn unmatched(&self, connection: u32, frame: &[u8], correlation: i32) {
        self.save(Side::Response, connection, -1, -1, frame);
        self.print(&format!(
            "{} conn {connection} response with unknown correlation id {correlation}, {}B: {}",
            utc_now(),
            frame.len(),
            hex_preview(frame, 64)
        ));
    }
}
