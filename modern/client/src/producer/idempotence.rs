//! The producer id and epoch (InitProducerId), and how they move on: an idempotent producer
//! bumps its epoch itself when a partition's sequence numbers must start again (after
//! OUT_OF_ORDER_SEQUENCE_NUMBER on the next batch, UNKNOWN_PRODUCER_ID, or a batch failed with
//! its fate unknown), as Kafka's client does since KIP-360, and asks for a new id when the
//! epoch is exhausted or the broker refused the epoch. Each partition keeps the identity its
//! sequences were numbered under (`accumulator.rs`) and moves to the current one once
//! nothing of it is outstanding.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use kwire::messages::InitProducerIdRequest;
use kwire::{ErrorCode, ProducerId};
use kwire_connection::Cluster;

use super::error::ProduceError;

/// A producer id and epoch; `NONE` (-1, -1) for a producer that is not idempotent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Identity {
    pub id: i64,
    pub epoch: i16,
}

impl Identity {
    pub const NONE: Identity = Identity { id: -1, epoch: -1 };

    pub fn is_none(self) -> bool {
        self.id < 0
    }
}

/// The producer's current identity.
pub(crate) struct Idempotence {
    current: Mutex<Identity>,
    /// The broker refused the id (INVALID_PRODUCER_EPOCH): the next reset asks for a new one.
    renew: Mutex<bool>,
}

impl Idempotence {
    pub fn new() -> Idempotence {
        Idempotence { current: Mutex::new(Identity::NONE), renew: Mutex::new(false) }
    }

    pub fn current(&self) -> Identity {
        *self.current.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn set(&self, identity: Identity) {
        *self.current.lock().unwrap_or_else(|e| e.into_inner()) = identity;
    }

    /// Asks the next reset for a new producer id rather than a bumped epoch.
    pub fn renew_id(&self) {
        *self.renew.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    /// A partition numbered under `stale` must start its sequences again: bumps the epoch
    /// (once, however many partitions ask with the same stale identity) and returns the
    /// identity to use, or `None` when a new producer id must be asked for first
    /// ([`Idempotence::needs_new_id`]).
    pub fn bump_from(&self, stale: Identity) -> Option<Identity> {
        if *self.renew.lock().unwrap_or_else(|e| e.into_inner()) {
            return None;
        }
        let mut current = self.current.lock().unwrap_or_else(|e| e.into_inner());
        if *current == stale {
            if current.epoch == i16::MAX {
                drop(current);
                self.renew_id();
                return None;
            }
            current.epoch += 1;
            tracing::info!(producer_id = current.id, epoch = current.epoch, "bumped the producer epoch (KIP-360)");
        }
        Some(*current)
    }

    pub fn needs_new_id(&self) -> bool {
        *self.renew.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// InitProducerId for an idempotent producer without a transactional id; retried while
    /// retriable, until `max_block`.
    pub async fn renew(
        &self,
        cluster: &Cluster,
        max_block: Duration,
        backoff: Duration,
    ) -> Result<Identity, ProduceError> {
        let request = InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: i32::MAX,
            producer_id: ProducerId(-1),
            producer_epoch: -1,
            ..Default::default()
        };
        let deadline = Instant::now() + max_block;
        loop {
            let answer = match cluster.any().await {
                Ok(client) => client.send(request.clone()).await.map_err(ProduceError::from),
                Err(e) => Err(ProduceError::from(e)),
            };
            let error = match answer {
                Ok(r) if r.error_code == ErrorCode::NONE => {
                    let identity = Identity { id: r.producer_id.0, epoch: r.producer_epoch };
                    tracing::info!(producer_id = identity.id, epoch = identity.epoch, "producer id assigned");
                    self.set(identity);
                    *self.renew.lock().unwrap_or_else(|e| e.into_inner()) = false;
                    return Ok(identity);
                }
                Ok(r) if r.error_code.is_retriable() => ProduceError::from_code(r.error_code, None),
                Ok(r) => return Err(ProduceError::from_code(r.error_code, None)),
                Err(ProduceError::Connection(e)) if e.is_retriable() => ProduceError::Connection(e),
                Err(e @ ProduceError::Timeout(_)) => e,
                Err(e) => return Err(e),
            };
            if Instant::now() + backoff > deadline {
                return Err(ProduceError::Timeout(format!(
                    "InitProducerId not answered within {max_block:?}: {error}"
                )));
            }
            tokio::time::sleep(backoff).await;
        }
    }
}
