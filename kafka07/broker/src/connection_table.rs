//! Every live connection, so that no client can lock the others out: at the connection limit
//! (in total or from one address) the connection that has gone longest without completing a
//! request is shed to let a new one in, and the bytes held by requests not yet handled are
//! bounded across all connections, shedding the connection that holds the most.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// The table's limits.
#[derive(Debug, Clone, Copy)]
pub struct TableLimits {
    /// `kwire.max.connections`.
    pub max_connections: usize,
    /// `kwire.max.connections.per.ip`.
    pub max_per_ip: usize,
    /// `kwire.max.buffered.request.bytes`: received bytes of requests not yet handled, all
    /// connections together.
    pub max_buffered: usize,
    /// A connection younger than this, or that completed a request this recently, is never
    /// shed for a newcomer: a burst of new connections cannot push out working clients.
    pub shed_grace: Duration,
}

/// What one connection shares with the table.
#[derive(Debug)]
struct Shared {
    peer: IpAddr,
    /// Milliseconds since the table's start of the last completed request (or of the accept).
    last_progress: AtomicU64,
    /// Bytes this connection holds of requests received and not yet handled.
    buffered: AtomicUsize,
    /// Told to close: it was shed.
    shed: Notify,
}

#[derive(Debug)]
pub struct ConnectionTable {
    limits: TableLimits,
    start: Instant,
    entries: Mutex<HashMap<u64, Arc<Shared>>>,
    next_id: AtomicU64,
    buffered: AtomicUsize,
}

/// A connection's place in the table; dropping it (when the connection ends) frees the place
/// and the bytes it held.
#[derive(Debug)]
pub struct Admission {
    id: u64,
    shared: Arc<Shared>,
    table: Arc<ConnectionTable>,
}

/// Why a connection was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl ConnectionTable {
    pub fn new(limits: TableLimits) -> Arc<ConnectionTable> {
        Arc::new(ConnectionTable {
            limits,
            start: Instant::now(),
            entries: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            buffered: AtomicUsize::new(0),
        })
    }

    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64
    }

    /// Lets a connection from `peer` in, shedding the one longest without progress when a
    /// limit is reached; refuses when every candidate is within its grace.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admission, Refused> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let from_peer = entries.values().filter(|s| s.peer == peer).count();
        let full = if entries.len() >= self.limits.max_connections {
            Some(format!("{} connections, the limit (kwire.max.connections)", entries.len()))
        } else if from_peer >= self.limits.max_per_ip {
            Some(format!("{from_peer} connections from {peer}, the limit (kwire.max.connections.per.ip)"))
        } else {
            None
        };
        if let Some(why) = full {
            let same_peer_only = entries.len() < self.limits.max_connections;
            let grace = self.limits.shed_grace.as_millis() as u64;
            let now = self.now_ms();
            let victim = entries
                .iter()
                .filter(|(_, s)| !same_peer_only || s.peer == peer)
                .map(|(id, s)| (*id, s.last_progress.load(Ordering::Relaxed)))
                .filter(|(_, last)| now.saturating_sub(*last) >= grace)
                .min_by_key(|(_, last)| *last);
            let Some((victim, last)) = victim else { return Err(Refused(why)) };
            if let Some(shed) = entries.remove(&victim) {
                tracing::info!(
                    peer = %shed.peer,
                    idle_ms = now.saturating_sub(last),
                    "shedding the connection longest without a request: {why}"
                );
                self.release(&shed);
                shed.shed.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let shared = Arc::new(Shared {
            peer,
            last_progress: AtomicU64::new(self.now_ms()),
            buffered: AtomicUsize::new(0),
            shed: Notify::new(),
        });
        entries.insert(id, shared.clone());
        Ok(Admission { id, shared, table: self.clone() })
    }

    fn release(&self, shared: &Shared) {
        let held = shared.buffered.swap(0, Ordering::Relaxed);
        self.buffered.fetch_sub(held, Ordering::Relaxed);
    }

    /// Bytes held by requests not yet handled, all connections together.
    pub fn buffered(&self) -> usize {
        self.buffered.load(Ordering::Relaxed)
    }

    /// How many connections are in the table.
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What [`Admission::make_room`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// There is room for the read.
    Granted,
    /// Another connection holding more was told to close; try again shortly.
    Wait,
    /// This connection holds the most: it must close.
    Refused,
}

impl Admission {
    /// Records that a request was received in full.
    pub fn progress(&self) {
        self.shared.last_progress.store(self.table.now_ms(), Ordering::Relaxed);
    }

    /// Sets the bytes this connection holds of requests not yet handled.
    pub fn set_buffered(&self, bytes: usize) {
        let before = self.shared.buffered.swap(bytes, Ordering::Relaxed);
        if bytes >= before {
            self.table.buffered.fetch_add(bytes - before, Ordering::Relaxed);
        } else {
            self.table.buffered.fetch_sub(before - bytes, Ordering::Relaxed);
        }
    }

    /// Whether `more` bytes may be read: past the global limit the connection holding the most
    /// is shed (another one: wait for it to go; this one: refuse).
    pub fn make_room(&self, more: usize) -> Room {
        let table = &self.table;
        if table.buffered().saturating_add(more) <= table.limits.max_buffered {
            return Room::Granted;
        }
        let mine = self.shared.buffered.load(Ordering::Relaxed);
        let mut entries = table.entries.lock().unwrap_or_else(|e| e.into_inner());
        let largest = entries
            .iter()
            .filter(|(id, _)| **id != self.id)
            .map(|(id, s)| (*id, s.buffered.load(Ordering::Relaxed)))
            .max_by_key(|(_, held)| *held);
        match largest {
            Some((id, held)) if held > mine => {
                if let Some(shed) = entries.remove(&id) {
                    tracing::info!(
                        peer = %shed.peer,
                        held,
                        "shedding the connection holding the most unhandled request bytes \
                         (kwire.max.buffered.request.bytes)"
                    );
                    table.release(&shed);
                    shed.shed.notify_one();
                }
                Room::Wait
            }
            _ if mine == 0 => Room::Wait,
            _ => Room::Refused,
        }
    }

    /// Resolves when this connection was shed.
    pub async fn shed(&self) {
        self.shared.shed.notified().await
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.table.entries.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
        // Also when it was shed: it may have counted bytes again before it noticed.
        self.table.release(&self.shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max_connections: usize, max_per_ip: usize, grace_ms: u64) -> Arc<ConnectionTable> {
        ConnectionTable::new(TableLimits {
            max_connections,
            max_per_ip,
            max_buffered: 1000,
            shed_grace: Duration::from_millis(grace_ms),
        })
    }

    const A: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 1));
    const B: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));

    #[test]
    fn at_the_limit_the_connection_longest_without_progress_is_shed() {
        let t = table(2, 2, 0);
        let old = t.admit(A).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let busy = t.admit(A).unwrap();
        busy.progress();
        let new = t.admit(B).unwrap();
        assert_eq!(t.len(), 2);
        // `old` was told to go; its place is already free.
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        rt.block_on(async { tokio::time::timeout(Duration::from_secs(1), old.shed()).await.unwrap() });
        drop((old, busy, new));
        assert!(t.is_empty());
    }

    #[test]
    fn connections_within_their_grace_are_never_shed() {
        let t = table(1, 1, 60_000);
        let _first = t.admit(A).unwrap();
        assert!(t.admit(B).unwrap_err().0.contains("kwire.max.connections"));
    }

    #[test]
    fn the_per_address_limit_sheds_only_that_address() {
        let t = table(10, 1, 0);
        let _b = t.admit(B).unwrap();
        std::thread::sleep(Duration::from_millis(5));
        let _a = t.admit(A).unwrap();
        let _a2 = t.admit(A).unwrap();
        assert_eq!(t.len(), 2, "one from A was shed, B kept");
    }

    #[test]
    fn buffered_bytes_are_bounded_by_shedding_the_largest_holder() {
        let t = table(10, 10, 0);
        let big = t.admit(A).unwrap();
        let small = t.admit(B).unwrap();
        big.set_buffered(900);
        small.set_buffered(50);
        assert_eq!(t.buffered(), 950);
        assert_eq!(small.make_room(40), Room::Granted);
        assert_eq!(small.make_room(100), Room::Wait, "the bigger holder is shed");
        assert_eq!(t.buffered(), 50);
        assert_eq!(small.make_room(100), Room::Granted);
        small.set_buffered(990);
        assert_eq!(small.make_room(100), Room::Refused, "the largest holder itself must go");
        drop(big);
        drop(small);
        assert_eq!(t.buffered(), 0);
    }
}
