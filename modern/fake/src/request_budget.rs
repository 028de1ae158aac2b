//! The cluster-wide byte budget for requests still arriving: what every connection of every
//! node may hold of them together (`max_buffered_request_bytes`), instead of `max_frame` times
//! the connections, which a few clients sending large requests slowly could otherwise fill. A
//! connection takes room before each read and gives it back once its requests are answered; one
//! that cannot get room waits, reading nothing, until others give some back or its request time
//! runs out.

use std::sync::Arc;

use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

/// The cluster's budget: one permit per byte, and a wake-up when some is given back.
#[derive(Debug, Clone)]
pub(crate) struct RequestBudget(Arc<(Semaphore, Notify)>);

impl RequestBudget {
    pub fn new(bytes: usize) -> RequestBudget {
        RequestBudget(Arc::new((Semaphore::new(bytes.min(Semaphore::MAX_PERMITS)), Notify::new())))
    }

    /// Bytes not held by any connection.
    #[cfg(test)]
    pub fn free(&self) -> usize {
        self.0 .0.available_permits()
    }
}

/// What one connection holds of the budget; given back when dropped.
#[derive(Debug)]
pub(crate) struct Held {
    budget: RequestBudget,
    bytes: usize,
}

impl Held {
    pub fn new(budget: &RequestBudget) -> Held {
        Held { budget: budget.clone(), bytes: 0 }
    }

    /// Holds at least `bytes`, waiting until `deadline` for others to give room back; false
    /// if the deadline came first (or `bytes` is more than the whole budget).
    pub async fn grow_to(&mut self, bytes: usize, deadline: Instant) -> bool {
        let Some(more) = bytes.checked_sub(self.bytes).filter(|&n| n > 0) else { return true };
        let Ok(more32) = u32::try_from(more) else { return false };
        let (semaphore, released) = &*self.budget.0;
        // Not the semaphore's queue: a request waiting for a lot of room must not hold up the
        // small ones behind it, so each waiter tries again whenever room is given back.
        loop {
            let wake = released.notified();
            tokio::pin!(wake);
            wake.as_mut().enable();
            match semaphore.try_acquire_many(more32) {
                Ok(permit) => {
                    permit.forget();
                    self.bytes += more;
                    return true;
                }
                Err(tokio::sync::TryAcquireError::Closed) => return false,
                Err(tokio::sync::TryAcquireError::NoPermits) => {}
            }
            if tokio::time::timeout_at(deadline, wake).await.is_err() {
                return false;
            }
        }
    }

    /// Gives back all but `bytes`.
    pub fn shrink_to(&mut self, bytes: usize) {
        if let Some(extra) = self.bytes.checked_sub(bytes).filter(|&n| n > 0) {
            self.budget.0 .0.add_permits(extra);
            self.budget.0 .1.notify_waiters();
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
        let room = RequestBudget::new(100);
        let soon = || Instant::now() + Duration::from_millis(50);
        let mut a = Held::new(&room);
        let mut b = Held::new(&room);
        assert!(a.grow_to(80, soon()).await);
        assert!(!b.grow_to(30, soon()).await, "only 20 bytes are left");
        assert!(b.grow_to(20, soon()).await);
        a.shrink_to(50);
        assert_eq!(room.free(), 30);
        // A waiter for more than is free does not hold up a smaller one.
        let mut big = Held::new(&room);
        let waiting = tokio::spawn(async move { big.grow_to(60, Instant::now() + Duration::from_secs(5)).await });
        tokio::task::yield_now().await;
        assert!(b.grow_to(25, soon()).await, "5 more fit at once");
        assert_eq!(room.free(), 25);
        a.shrink_to(0);
        assert!(waiting.await.unwrap(), "the big one gets its room once it is given back");
        assert!(b.grow_to(50, soon()).await);
        drop(a);
        drop(b);
        assert_eq!(room.free(), 100, "everything held is given back");
        assert!(!Held::new(&room).grow_to(101, soon()).await, "more than the whole budget");
    }
}
