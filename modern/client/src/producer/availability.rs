//! `partitioner.availability.timeout.ms` (KIP-794): a broker that has had batches ready for
//! longer than the timeout without taking any (a slow or stuck broker: its requests in flight
//! do not come back) is left out of the sticky partitioner's choice, so records without a key
//! go to partitions whose leaders keep up. As Kafka's `RecordAccumulator` does: each broker's
//! last time with batches ready and last time drained; unavailable while the first is more than
//! the timeout after the second. 0 turns it off, as does turning adaptive partitioning off.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// When each broker last had batches ready, and last had some drained into a request; kept
/// only while a timeout is set (the sinks pay nothing otherwise).
#[derive(Default)]
pub(crate) struct Availability {
    /// Zero: off.
    timeout: Duration,
    nodes: Mutex<HashMap<i32, Times>>,
}

#[derive(Clone, Copy)]
struct Times {
    ready: Instant,
    drained: Instant,
}

impl Availability {
    /// Tracking `timeout` (zero: off).
    pub fn new(timeout: Duration) -> Availability {
        Availability { timeout, nodes: Mutex::default() }
    }

    /// `broker` has batches ready at `now` (sent or not).
    pub fn ready(&self, broker: i32, now: Instant) {
        if self.timeout.is_zero() {
            return;
        }
        let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        nodes.entry(broker).or_insert(Times { ready: now, drained: now }).ready = now;
    }

    /// Batches for `broker` went into a request at `now`.
    pub fn drained(&self, broker: i32, now: Instant) {
        if self.timeout.is_zero() {
            return;
        }
        let mut nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        let times = nodes.entry(broker).or_insert(Times { ready: now, drained: now });
        times.drained = now;
        times.ready = times.ready.max(now);
    }

    /// Whether `broker` has had batches ready for longer than the timeout without draining any
    /// (never, when it is off).
    pub fn unavailable(&self, broker: i32) -> bool {
        if self.timeout.is_zero() {
            return false;
        }
        let nodes = self.nodes.lock().unwrap_or_else(|e| e.into_inner());
        nodes.get(&broker).is_some_and(|t| t.ready.saturating_duration_since(t.drained) > self.timeout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_ready_but_not_drained_past_the_timeout_is_unavailable_until_it_drains() {
        let a = Availability::new(Duration::from_millis(100));
        let t0 = Instant::now();
        a.drained(1, t0);
        a.ready(1, t0 + Duration::from_millis(50));
        assert!(!a.unavailable(1), "50 ms ready: within the timeout");
        a.ready(1, t0 + Duration::from_millis(150));
        assert!(a.unavailable(1));
        let off = Availability::new(Duration::ZERO);
        off.drained(1, t0);
        off.ready(1, t0 + Duration::from_millis(150));
        assert!(!off.unavailable(1), "0 turns it off");
        assert!(!a.unavailable(2), "a broker never seen is available");
        a.drained(1, t0 + Duration::from_millis(160));
        assert!(!a.unavailable(1), "it took batches again");
    }
}
