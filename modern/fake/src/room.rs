//! The bytes every connection of the cluster may hold of requests still arriving, shared: one
//! budget (`max_buffered_request_bytes`) instead of `max_frame` times the connections, which a
//! few clients sending large requests slowly could otherwise fill. A connection takes room
//! before each read and gives it back once its requests are answered; one that cannot get room
//! waits, reading nothing, until others give some back or its request time runs out.

use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::time::Instant;

/// The cluster's budget: one permit per byte.
#[derive(Debug, Clone)]
pub(crate) struct Room(Arc<Semaphore>);

impl Room {
    pub fn new(bytes: usize) -> Room {
        Room(Arc::new(Semaphore::new(bytes.min(Semaphore::MAX_PERMITS))))
    }

    /// Bytes not held by any connection.
    #[cfg(test)]
    pub fn free(&self) -> usize {
        self.0.available_permits()
    }
}

/// What one connection holds of the budget; given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    room: Room,
    bytes: usize,
}

impl Held {
    pub fn new(room: &Room) -> Held {
        Held { room: room.clone(), bytes: 0 }
    }

    /// Holds at least `bytes`, waiting until `deadline` for others to give room back; false
    /// if the deadline came first (or `bytes` is more than the whole budget).
    pub async fn grow_to(&mut self, bytes: usize, deadline: Instant) -> bool {
        let Some(more) = bytes.checked_sub(self.bytes).filter(|&n| n > 0) else { return true };
        let Ok(more32) = u32::try_from(more) else { return false };
        match tokio::time::timeout_at(deadline, self.room.0.acquire_many(more32)).await {
            Ok(Ok(permit)) => {
                permit.forget();
                self.bytes += more;
                true
            }
            _ => false,
        }
    }

    /// Gives back all but `bytes`.
    pub fn shrink_to(&mut self, bytes: usize) {
        if let Some(extra) = self.bytes.checked_sub(bytes).filter(|&n| n > 0) {
            self.room.0.add_permits(extra);
            self.bytes = bytes;
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.shrink_to(0);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn room_is_shared_waited_for_and_given_back() {
        let room = Room::new(100);
        let soon = || Instant::now() + Duration::from_millis(50);
        let mut a = Held::new(&room);
        let mut b = Held::new(&room);
        assert!(a.grow_to(80, soon()).await);
        assert!(!b.grow_to(30, soon()).await, "only 20 bytes are left");
        assert!(b.grow_to(20, soon()).await);
        a.shrink_to(50);
        assert_eq!(room.free(), 30);
        assert!(b.grow_to(50, soon()).await);
        drop(a);
        drop(b);
        assert_eq!(room.free(), 100, "everything held is given back");
        assert!(!Held::new(&room).grow_to(101, soon()).await, "more than the whole budget");
    }
}
