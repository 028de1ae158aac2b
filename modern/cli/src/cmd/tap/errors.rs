//! The non-zero error codes of a decoded response, for the one-line-per-exchange output, found
//! through the generated `ResponseKind::for_each_error_code`: no JSON, nothing formatted, no
//! record byte touched.

use std::collections::BTreeMap;

use kwire::messages::ResponseKind;
use kwire::ErrorCode;

/// Non-zero error codes anywhere in `body` at `version`, with how often each occurs.
pub fn error_codes(body: &ResponseKind, version: i16) -> BTreeMap<ErrorCode, usize> {
    let mut codes = BTreeMap::new();
    body.for_each_error_code(version, &mut |code| {
        if code != ErrorCode::NONE {
            *codes.entry(code).or_default() += 1;
        }
    });
    codes
}

#[cfg(test)]
mod tests {
    use super::*;
    use kwire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kwire::messages::metadata_response::MetadataResponseTopic;
    use kwire::messages::{ApiKey, FetchResponse, MetadataResponse};
    use kwire::{Bytes, Records};
    use kwire_codegen::ir::MessageKind;
    use kwire_inspect::explain::Schemas;
    use kwire_inspect::sample::{self, Mode, Rng};
    use kwire_test_support::alloc::{largest_during, Counting};
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
        let schemas = Schemas::load(&[kwire_codegen::locate_kafka_schemas(root).unwrap()]).unwrap();
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
                    assert_eq!(error_codes(&body, v), want, "{} v{v}: {body:?}", msg.name);
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
        assert_eq!(error_codes(&body, 12), BTreeMap::from([(ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, 2)]));
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
        let (codes, largest) = largest_during(|| error_codes(&body, 12));
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
