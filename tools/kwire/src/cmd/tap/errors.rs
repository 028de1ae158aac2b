//! The non-zero error codes of a decoded response, for the one-line-per-exchange output, found
//! without JSON and without touching record data.
//!
//! Neither the generated code nor the runtime offers a walk over a message's fields (no
//! visitor; the per-API accessor there is `throttle_time_ms`). What every generated type does
//! offer is `Json` (a tree of values, records as base64: what this replaces) and `Debug`. So
//! the walk is `Debug` written into a sink that allocates nothing and keeps only counts: every
//! `...ErrorCode` field has the runtime's `ErrorCode` type, whose `Debug` is
//! `ErrorCode(6, NOT_LEADER_OR_FOLLOWER)`, while strings and bytes print quoted and escaped, so
//! the sink counts `ErrorCode(` outside quotes and cannot be fooled by a topic name. The three
//! responses that carry records (Fetch, ShareFetch, FetchSnapshot) are walked by their fields
//! instead, so that no record byte is formatted.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use kafka_wire::messages::ResponseKind;
use kafka_wire::ErrorCode;

/// Non-zero error codes anywhere in `body`, with how often each occurs.
pub fn error_codes(body: &ResponseKind) -> BTreeMap<ErrorCode, usize> {
    let mut found = Found::default();
    match body {
        ResponseKind::Fetch(f) => {
            found.add(f.error_code);
            f.responses.iter().flat_map(|t| &t.partitions).for_each(|p| found.add(p.error_code));
        }
        ResponseKind::ShareFetch(f) => {
            found.add(f.error_code);
            for p in f.responses.iter().flat_map(|t| &t.partitions) {
                found.add(p.error_code);
                found.add(p.acknowledge_error_code);
            }
        }
        ResponseKind::FetchSnapshot(f) => {
            found.add(f.error_code);
            f.topics.iter().flat_map(|t| &t.partitions).for_each(|p| found.add(p.error_code));
        }
        // The sink never fails, and a Debug impl only fails when its sink does.
        other => {
            let _ = write!(found, "{other:?}");
        }
    }
    found.codes
}

/// What `Debug` text names an error code.
const MARK: &[u8] = b"ErrorCode(";

/// Where the sink is in the `Debug` text.
#[derive(Clone, Copy)]
enum State {
    /// Outside quotes, the first this many bytes of [`MARK`] just seen.
    Text(usize),
    /// Inside a quoted string or byte string; `escaped` after a backslash.
    Quoted { escaped: bool },
    /// After [`MARK`]: the code's digits so far.
    Code { value: i32, negative: bool },
}

impl Default for State {
    fn default() -> Self {
        State::Text(0)
    }
}

/// Reads `Debug` text as it is written, counting error codes.
#[derive(Default)]
struct Found {
    codes: BTreeMap<ErrorCode, usize>,
    state: State,
}

impl Found {
    fn add(&mut self, code: ErrorCode) {
        if code.is_err() {
            *self.codes.entry(code).or_default() += 1;
        }
    }

    /// The state after `b` outside quotes, having matched `matched` bytes of [`MARK`].
    fn text(matched: usize, b: u8) -> State {
        match b {
            b'"' => State::Quoted { escaped: false },
            _ if MARK.get(matched) == Some(&b) && matched + 1 == MARK.len() => {
                State::Code { value: 0, negative: false }
            }
            _ if MARK.get(matched) == Some(&b) => State::Text(matched + 1),
            _ if MARK.first() == Some(&b) => State::Text(1),
            _ => State::Text(0),
        }
    }

    fn byte(&mut self, b: u8) {
        self.state = match self.state {
            State::Text(matched) => Self::text(matched, b),
            State::Quoted { escaped: true } => State::Quoted { escaped: false },
            State::Quoted { escaped: false } => match b {
                b'\\' => State::Quoted { escaped: true },
                b'"' => State::Text(0),
                _ => State::Quoted { escaped: false },
            },
            State::Code { value: 0, negative: false } if b == b'-' => State::Code { value: 0, negative: true },
            State::Code { value, negative } if b.is_ascii_digit() => {
                State::Code { value: value.saturating_mul(10).saturating_add(i32::from(b - b'0')), negative }
            }
            State::Code { value, negative } => {
                let value = if negative { -value } else { value };
                if let Ok(code) = i16::try_from(value) {
                    self.add(ErrorCode(code));
                }
                Self::text(0, b)
            }
        };
    }
}

impl fmt::Write for Found {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        s.bytes().for_each(|b| self.byte(b));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_wire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kafka_wire::messages::metadata_response::MetadataResponseTopic;
    use kafka_wire::messages::{ApiKey, FetchResponse, MetadataResponse};
    use kafka_wire::{Bytes, Records};
    use kafka_wire_codegen::ir::MessageKind;
    use kafka_wire_inspect::explain::Schemas;
    use kafka_wire_inspect::sample::{self, Mode, Rng};
    use kafka_wire_test_support::alloc::{largest_during, Counting};
    use serde_json::Value;

    #[global_allocator]
    static ALLOCATOR: Counting = Counting;

    /// What the tap did before: `errorCode` and `...ErrorCode` keys of the body's JSON.
    fn json_walk(body: &ResponseKind, version: i16) -> BTreeMap<ErrorCode, usize> {
        fn walk(v: &Value, out: &mut BTreeMap<ErrorCode, usize>) {
            match v {
                Value::Object(map) => {
                    for (k, v) in map {
                        match v.as_i64() {
                            Some(code) if k == "errorCode" || k.ends_with("ErrorCode") => {
                                if code != 0 {
                                    *out.entry(ErrorCode(code as i16)).or_default() += 1;
                                }
                            }
                            _ => walk(v, out),
                        }
                    }
                }
                Value::Array(items) => items.iter().for_each(|i| walk(i, out)),
                _ => {}
            }
        }
        let mut out = BTreeMap::new();
        walk(&body.to_json(version).unwrap(), &mut out);
        out
    }

    #[test]
    fn every_response_at_every_version_gives_the_codes_its_json_has() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap();
        let schemas = Schemas::load(&[kafka_wire_codegen::locate_kafka_schemas(root).unwrap()]).unwrap();
        let mut rng = Rng::new(0x7a9_e770);
        let (mut checked, mut with_codes) = (0, 0);
        for msg in schemas.messages().iter().filter(|m| m.kind == MessageKind::Response) {
            let Some(api) = msg.api_key.and_then(ApiKey::from_key) else { continue };
            let Some(ours) = api.supported_versions() else { continue };
            for v in ours.min..=ours.max {
                let mut random = || Mode::Random(Rng::new(rng.next_u64()));
                for mode in [Mode::Maximal, random(), random(), random()] {
                    let mut bytes = Bytes::from(sample::encode(msg, v, mode));
                    let body = ResponseKind::decode(api, &mut bytes, v).unwrap();
                    let want = json_walk(&body, v);
                    assert_eq!(error_codes(&body), want, "{} v{v}: {body:?}", msg.name);
                    checked += 1;
                    with_codes += usize::from(!want.is_empty());
                }
            }
        }
        assert!(checked > 1000 && with_codes > checked / 2, "{checked} checked, {with_codes} with codes");
    }

    #[test]
    fn quoted_text_that_looks_like_an_error_code_is_not_one() {
        let topic = MetadataResponseTopic {
            error_code: ErrorCode::UNKNOWN_TOPIC_OR_PARTITION,
            name: Some("ErrorCode(6, \"NOT_LEADER\\\"ErrorCode(7, X)".into()),
            ..Default::default()
        };
        let body =
            ResponseKind::Metadata(MetadataResponse { topics: vec![topic.clone(), topic], ..Default::default() });
        assert_eq!(error_codes(&body), BTreeMap::from([(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, 2)]));
    }

    #[test]
    fn record_data_is_not_formatted() {
        let partition = |error_code| PartitionData {
            error_code,
            records: Some(Records::from_bytes(Bytes::from(vec![7u8; 1 << 20]))),
            ..Default::default()
        };
        let topic = FetchableTopicResponse {
            partitions: vec![partition(ErrorCode::NONE), partition(ErrorCode::NOT_LEADER_OR_FOLLOWER)],
            ..Default::default()
        };
        let body = ResponseKind::Fetch(FetchResponse { responses: vec![topic], ..Default::default() });
        let started = std::time::Instant::now();
        let (codes, largest) = largest_during(|| error_codes(&body));
        let took = started.elapsed();
        assert_eq!(codes, BTreeMap::from([(ErrorCode::NOT_LEADER_OR_FOLLOWER, 1)]));
        assert!(largest < 1024, "the walk allocated {largest} bytes at once");
        // The JSON walk it replaces builds the base64 of every record byte.
        let started = std::time::Instant::now();
        let (_, json_largest) = largest_during(|| json_walk(&body, 12));
        let json_took = started.elapsed();
        assert!(json_largest > 1 << 20, "{json_largest}");
        println!(
            "2 MiB of records: largest allocation {largest} B in {took:?}, JSON {json_largest} B in {json_took:?}"
        );
    }
}
