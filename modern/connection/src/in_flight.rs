//! The requests of one connection that wait for a response, oldest first, by correlation id:
//! a client's own ([`Connection`](crate::Connection)) and those a proxy forwards for its clients
//! (`kwire tap`). At most a given number wait at once: beyond it the oldest is given up, so
//! a peer that never answers costs no more than that.

use std::collections::VecDeque;

/// Requests waiting for responses (see the module docs).
#[derive(Debug, Clone)]
pub struct InFlight<T> {
    queue: VecDeque<(i32, T)>,
    cap: usize,
    most: usize,
}

impl<T> InFlight<T> {
    /// At most `cap` requests wait at once.
    pub fn new(cap: usize) -> Self {
        InFlight { queue: VecDeque::new(), cap, most: 0 }
    }

    /// A request sent with `correlation` that expects a response. Returns the oldest one, given
    /// up, if `cap` waited already.
    pub fn expect(&mut self, correlation: i32, request: T) -> Option<(i32, T)> {
        let given_up = if self.queue.len() >= self.cap { self.queue.pop_front() } else { None };
        self.queue.push_back((correlation, request));
        self.most = self.most.max(self.queue.len());
        given_up
    }

    /// The request a response with `correlation` answers, whatever the order responses come in.
    pub fn take(&mut self, correlation: i32) -> Option<T> {
        let at = self.queue.iter().position(|(c, _)| *c == correlation)?;
        self.queue.remove(at).map(|(_, request)| request)
    }

    /// The request a response with `correlation` answers, Kafka's order assumed: a broker
    /// answers a connection's requests in the order they came, so those sent before it and still
    /// waiting will get no response; they are removed and handed to `passed_over`, oldest first.
    pub fn settle(&mut self, correlation: i32, mut passed_over: impl FnMut(i32, T)) -> Option<T> {
        let at = self.queue.iter().position(|(c, _)| *c == correlation)?;
        self.queue.drain(..at).for_each(|(c, request)| passed_over(c, request));
        self.queue.pop_front().map(|(_, request)| request)
    }

    /// Removes every request waiting, oldest first.
    pub fn drain(&mut self) -> impl Iterator<Item = (i32, T)> + '_ {
        self.queue.drain(..)
    }

    /// The requests waiting, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = &(i32, T)> {
        self.queue.iter()
    }

    /// How many requests wait now.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The most requests that ever waited at once.
    pub fn most(&self) -> usize {
        self.most
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn take_finds_a_request_in_any_order_and_settle_lets_the_earlier_ones_go() {
        let mut w = InFlight::new(usize::MAX);
        for c in 1..=4 {
            assert!(w.expect(c, c * 10).is_none());
        }
        assert_eq!(w.take(3), Some(30));
        assert_eq!(w.take(3), None);
        let mut passed = Vec::new();
        assert_eq!(w.settle(2, |c, r| passed.push((c, r))), Some(20));
        assert_eq!(passed, [(1, 10)]);
        assert_eq!(w.settle(9, |c, r| passed.push((c, r))), None, "an id no request used settles nothing");
        assert_eq!((w.len(), w.most()), (1, 4));
    }

    #[test]
    fn no_more_than_the_cap_wait() {
        let mut w = InFlight::new(3);
        let given_up: Vec<i32> = (0..5).filter_map(|c| w.expect(c, ())).map(|(c, ())| c).collect();
        assert_eq!(given_up, [0, 1]);
        assert_eq!(w.iter().map(|(c, _)| *c).collect::<Vec<_>>(), [2, 3, 4]);
    }
}
