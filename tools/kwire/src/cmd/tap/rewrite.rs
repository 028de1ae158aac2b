//! Broker addresses in Metadata and FindCoordinator responses, rewritten to the tap's so that
//! clients, which reconnect to advertised addresses, stay on the tap; and, with
//! `--clamp-versions`, the versions an ApiVersions answer offers, cut to those this build decodes.

use kafka_wire::messages::api_versions_response::ApiVersion;
use kafka_wire::messages::{ApiKey, ApiVersionsResponse, ResponseFrame, ResponseKind};
use kafka_wire::{BytesMut, ErrorCode, StrBytes};

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

    /// Points `host:port` at the tap when it is the upstream's (or `always`); whether it changed.
    fn address(&self, host: &mut StrBytes, port: &mut i32, always: bool) -> bool {
        let is_upstream = host.as_str() == self.upstream.0 && *port == self.upstream.1;
        if !(is_upstream || always) || (host.as_str() == self.advertise.0 && *port == self.advertise.1) {
            return false;
        }
        *host = StrBytes::from(self.advertise.0.as_str());
        *port = self.advertise.1;
        true
    }

    /// The re-encoded frame (size prefix included) when an address was rewritten.
    pub fn rewrite(&self, frame: &ResponseFrame, version: i16) -> Option<Vec<u8>> {
        let mut frame = frame.clone();
        let changed = match &mut frame.body {
            ResponseKind::ApiVersions(v) if self.clamp => clamp(v),
            ResponseKind::Metadata(m) if self.addresses => {
                let single = m.brokers.len() == 1;
                let mut changed = false;
                for b in &mut m.brokers {
                    changed |= self.address(&mut b.host, &mut b.port, single);
                }
                changed
            }
            ResponseKind::FindCoordinator(c) if self.addresses => {
                let mut changed = version <= 3 && self.address(&mut c.host, &mut c.port, false);
                for k in &mut c.coordinators {
                    changed |= self.address(&mut k.host, &mut k.port, false);
                }
                changed
            }
            _ => false,
        };
        if !changed {
            return None;
        }
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

/// Cuts each API's range to the versions this build decodes and drops the APIs it does not
/// know or shares no version of; and, when Produce is cut below v12, `transaction.version` to 1
/// (features whose protocol needs versions the tap no longer offers would make clients send
/// requests the broker refuses). Whether anything changed.
fn clamp(answer: &mut ApiVersionsResponse) -> bool {
    let before = answer.clone();
    answer.api_keys.retain_mut(|k| {
        let ours = ApiKey::from_key(k.api_key).and_then(ApiKey::supported_versions);
        match ours.and_then(|ours| ours.intersect(&kafka_wire::VersionRange::new(k.min_version, k.max_version))) {
            Some(common) => {
                (k.min_version, k.max_version) = (common.min, common.max);
                true
            }
            None => false,
        }
    });
    let produce = answer.api_keys.iter().find(|k| k.api_key == ApiKey::Produce.key()).map(|k| k.max_version);
    if produce.is_some_and(|max| max < PRODUCE_OF_TRANSACTION_VERSION_2) {
        for f in answer.finalized_features.iter_mut().filter(|f| f.name.as_str() == "transaction.version") {
            f.max_version_level = f.max_version_level.min(1);
            f.min_version_level = f.min_version_level.min(1);
        }
        for f in answer.supported_features.iter_mut().filter(|f| f.name.as_str() == "transaction.version") {
            f.max_version = f.max_version.min(1);
        }
    }
    *answer != before
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
