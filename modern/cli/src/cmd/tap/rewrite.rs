//! Broker addresses in Metadata and FindCoordinator responses, rewritten to the tap's so that
//! clients, which reconnect to advertised addresses, stay on the tap; and, with
//! `--clamp-versions`, the versions an ApiVersions answer offers, cut to those this build decodes.

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::{ApiKey, ApiVersionsResponse, ResponseFrame, ResponseKind};
use kwire::{BytesMut, ErrorCode, StrBytes, VersionRange};

pub struct Rewriter {
    /// The upstream as given (`host`, `port`).
    upstream: (String, i32),
    /// What clients are told instead.
    advertise: (String, i32),
    addresses: bool,
    clamp: bool,
}

fn split(addr: &str) -> (String, i32) {
    match addr.rsplit_once(':') {
        Some((host, port)) => (host.trim_matches(['[', ']']).to_string(), port.parse().unwrap_or(-1)),
        None => (addr.to_string(), -1),
    }
}

impl Rewriter {
    /// Rewrites addresses when `addresses`, ApiVersions answers when `clamp`.
    pub fn new(upstream: &str, advertise: &str, addresses: bool, clamp: bool) -> Self {
        Rewriter { upstream: split(upstream), advertise: split(advertise), addresses, clamp }
    }

    /// Whether `host:port` is to point at the tap: it is the upstream's (or `always`), and not
    /// the tap's already.
    fn moves(&self, host: &str, port: i32, always: bool) -> bool {
        let is_upstream = host == self.upstream.0 && port == self.upstream.1;
        (is_upstream || always) && !(host == self.advertise.0 && port == self.advertise.1)
    }

    /// Points `host:port` at the tap when [`Self::moves`] says so.
    fn point(&self, host: &mut StrBytes, port: &mut i32, always: bool) {
        if self.moves(host.as_str(), *port, always) {
            *host = StrBytes::from(self.advertise.0.as_str());
            *port = self.advertise.1;
        }
    }

    /// Whether [`Self::apply`] would change `body`: looked at first, so that only the frames
    /// that change are copied.
    fn changes(&self, body: &ResponseKind, version: i16) -> bool {
        match body {
            ResponseKind::ApiVersions(v) if self.clamp => clamp_changes(v),
            ResponseKind::Metadata(m) if self.addresses => {
                let single = m.brokers.len() == 1;
                m.brokers.iter().any(|b| self.moves(b.host.as_str(), b.port, single))
            }
            ResponseKind::FindCoordinator(c) if self.addresses => {
                (version <= 3 && self.moves(c.host.as_str(), c.port, false))
                    || c.coordinators.iter().any(|k| self.moves(k.host.as_str(), k.port, false))
            }
            _ => false,
        }
    }

    fn apply(&self, body: &mut ResponseKind, version: i16) {
        match body {
            ResponseKind::ApiVersions(v) if self.clamp => clamp(v),
            ResponseKind::Metadata(m) if self.addresses => {
                let single = m.brokers.len() == 1;
                for b in &mut m.brokers {
                    self.point(&mut b.host, &mut b.port, single);
                }
            }
            ResponseKind::FindCoordinator(c) if self.addresses => {
                if version <= 3 {
                    self.point(&mut c.host, &mut c.port, false);
                }
                for k in &mut c.coordinators {
                    self.point(&mut k.host, &mut k.port, false);
                }
            }
            _ => {}
        }
    }

    /// The re-encoded frame (size prefix included) when something was rewritten; the frame is
    /// copied only then.
    pub fn rewrite(&self, frame: &ResponseFrame, version: i16) -> Option<Vec<u8>> {
        if !self.changes(&frame.body, version) {
            return None;
        }
        let mut frame = frame.clone();
        self.apply(&mut frame.body, version);
        let mut out = BytesMut::new();
        match frame.encode(&mut out, version) {
            Ok(()) => Some(out.to_vec()),
            Err(e) => {
                eprintln!(
                    "kwire tap: cannot re-encode a rewritten {:?} response: {e}; forwarded unchanged",
                    frame.api_key()
                );
                None
            }
        }
    }
}

/// The first Produce version of transaction protocol 2 (KIP-890): a client that sees
/// `transaction.version` 2 finalized skips AddPartitionsToTxn and counts on Produce v12+.
const PRODUCE_OF_TRANSACTION_VERSION_2: i16 = 12;

/// The versions of `k` this build decodes too, if any.
fn common(k: &ApiVersion) -> Option<VersionRange> {
    let ours = ApiKey::from_key(k.api_key).and_then(ApiKey::supported_versions)?;
    ours.intersect(&VersionRange::new(k.min_version, k.max_version))
}

/// Whether Produce, once cut, stops below v12 while `transaction.version` 2 is offered.
fn caps_transaction_version(answer: &ApiVersionsResponse) -> bool {
    let produce = answer.api_keys.iter().find(|k| k.api_key == ApiKey::Produce.key());
    let cut_below_12 = produce.and_then(common).is_some_and(|r| r.max < PRODUCE_OF_TRANSACTION_VERSION_2);
    cut_below_12
        && (answer
            .finalized_features
            .iter()
            .any(|f| f.name.as_str() == "transaction.version" && (f.max_version_level > 1 || f.min_version_level > 1))
            || answer.supported_features.iter().any(|f| f.name.as_str() == "transaction.version" && f.max_version > 1))
}

/// Whether [`clamp`] would change `answer`.
fn clamp_changes(answer: &ApiVersionsResponse) -> bool {
    answer.api_keys.iter().any(|k| common(k).is_none_or(|c| (c.min, c.max) != (k.min_version, k.max_version)))
        || caps_transaction_version(answer)
}

/// Cuts each API's range to the versions this build decodes and drops the APIs it does not
/// know or shares no version of; and, when Produce is cut below v12, `transaction.version` to 1
/// (features whose protocol needs versions the tap no longer offers would make clients send
/// requests the broker refuses).
fn clamp(answer: &mut ApiVersionsResponse) {
    let cap = caps_transaction_version(answer);
    answer.api_keys.retain_mut(|k| match common(k) {
        Some(common) => {
            (k.min_version, k.max_version) = (common.min, common.max);
            true
        }
        None => false,
    });
    if cap {
        for f in answer.finalized_features.iter_mut().filter(|f| f.name.as_str() == "transaction.version") {
            f.max_version_level = f.max_version_level.min(1);
            f.min_version_level = f.min_version_level.min(1);
        }
        for f in answer.supported_features.iter_mut().filter(|f| f.name.as_str() == "transaction.version") {
            f.max_version = f.max_version.min(1);
        }
    }
}

/// For an ApiVersions request at a version newer than this build decodes: the answer a broker
/// that does not know it gives (KIP-511), UNSUPPORTED_VERSION in version 0 with the ApiVersions
/// versions this build knows, so that the client asks again at one of them.
pub fn answer_unknown_api_versions(request: &[u8]) -> Option<Vec<u8>> {
    let (api_key, version, correlation_id) = super::header_fields(request);
    let ours = ApiKey::ApiVersions.supported_versions()?;
    if api_key != ApiKey::ApiVersions.key() || version <= ours.max {
        return None;
    }
    let answer = ApiVersionsResponse {
        error_code: ErrorCode::UNSUPPORTED_VERSION,
        api_keys: vec![ApiVersion { api_key, min_version: ours.min, max_version: ours.max, ..Default::default() }],
        ..Default::default()
    };
    let mut out = BytesMut::new();
    ResponseFrame::new(answer, correlation_id).encode(&mut out, 0).ok()?;
    Some(out.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kwire::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kwire::messages::metadata_response::MetadataResponseBroker;
    use kwire::messages::{FetchResponse, MetadataResponse};
    use kwire::Bytes;
    use kwire_test_support::alloc::largest_during;

    fn rewriter() -> Rewriter {
        Rewriter::new("10.0.0.1:9092", "127.0.0.1:19092", true, true)
    }

    fn metadata(brokers: &[(&str, i32)]) -> ResponseFrame {
        let brokers = brokers
            .iter()
            .map(|&(host, port)| MetadataResponseBroker { host: host.into(), port, ..Default::default() })
            .collect();
        ResponseFrame::new(MetadataResponse { brokers, ..Default::default() }, 3)
    }

    #[test]
    fn a_response_that_is_not_rewritten_is_not_copied() {
        let partitions = (0..1000).map(|i| PartitionData { partition_index: i, ..Default::default() }).collect();
        let fetch = ResponseFrame::new(
            FetchResponse {
                responses: vec![FetchableTopicResponse { partitions, ..Default::default() }],
                ..Default::default()
            },
            3,
        );
        let others = metadata(&[("10.0.0.2", 9092), ("10.0.0.3", 9092)]);
        let (rewritten, largest) = largest_during(|| (rewriter().rewrite(&fetch, 12), rewriter().rewrite(&others, 12)));
        assert_eq!(rewritten, (None, None));
        assert!(largest < 64, "{largest} bytes allocated at once");
    }

    #[test]
    fn the_upstreams_address_and_a_single_broker_are_rewritten() {
        let advertised = |frame: &ResponseFrame| {
            let bytes = rewriter().rewrite(frame, 12)?;
            let decoded =
                ResponseFrame::decode_with_trailing(Bytes::from(bytes).slice(4..), ApiKey::Metadata, 12).ok()?;
            match decoded.0.body {
                ResponseKind::Metadata(m) => Some(m.brokers.iter().map(|b| format!("{}:{}", b.host, b.port)).collect()),
                _ => None,
            }
        };
        let upstream_and_other = metadata(&[("10.0.0.1", 9092), ("10.0.0.2", 9092)]);
        assert_eq!(advertised(&upstream_and_other), Some(vec!["127.0.0.1:19092".to_string(), "10.0.0.2:9092".into()]));
        assert_eq!(advertised(&metadata(&[("10.0.0.9", 9093)])), Some(vec!["127.0.0.1:19092".to_string()]));
        assert_eq!(advertised(&metadata(&[("127.0.0.1", 19092)])), None, "already the tap's");
    }

    #[test]
    fn api_versions_are_clamped_only_when_they_go_beyond_this_build() {
        let ours = ApiKey::Produce.supported_versions().unwrap();
        let answer = |max_version| {
            let keys = vec![ApiVersion { api_key: 0, min_version: ours.min, max_version, ..Default::default() }];
            ResponseFrame::new(ApiVersionsResponse { api_keys: keys, ..Default::default() }, 1)
        };
        assert_eq!(rewriter().rewrite(&answer(ours.max), 3), None);
        let clamped = rewriter().rewrite(&answer(ours.max + 1), 3).unwrap();
        let decoded =
            ResponseFrame::decode_with_trailing(Bytes::from(clamped).slice(4..), ApiKey::ApiVersions, 3).unwrap();
        assert!(matches!(decoded.0.body, ResponseKind::ApiVersions(v) if v.api_keys[0].max_version == ours.max));
    }
}
