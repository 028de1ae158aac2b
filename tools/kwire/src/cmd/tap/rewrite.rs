//! Broker addresses in Metadata and FindCoordinator responses, rewritten to the tap's so that
//! clients, which reconnect to advertised addresses, stay on the tap.

use kafka_wire::messages::{ResponseFrame, ResponseKind};
use kafka_wire::{BytesMut, StrBytes};

pub struct Rewriter {
    /// The upstream as given (`host`, `port`).
    upstream: (String, i32),
    /// What clients are told instead.
    advertise: (String, i32),
}

fn split(addr: &str) -> (String, i32) {
    match addr.rsplit_once(':') {
        Some((host, port)) => (host.trim_matches(['[', ']']).to_string(), port.parse().unwrap_or(-1)),
        None => (addr.to_string(), -1),
    }
}

impl Rewriter {
    pub fn new(upstream: &str, advertise: &str) -> Self {
        Rewriter { upstream: split(upstream), advertise: split(advertise) }
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
            ResponseKind::Metadata(m) => {
                let single = m.brokers.len() == 1;
                let mut changed = false;
                for b in &mut m.brokers {
                    changed |= self.address(&mut b.host, &mut b.port, single);
                }
                changed
            }
            ResponseKind::FindCoordinator(c) => {
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
