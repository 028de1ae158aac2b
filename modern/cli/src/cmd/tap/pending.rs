//! The requests of one connection that wait for a response, kept bounded whatever the peers do:
//! a Produce with acks=0 is not waited for (no response comes), Kafka answers a connection's
//! requests in order (so a response settles every request sent before the one it answers), and
//! at most [`MAX_WAITING`] wait at once (a broker that never answers, or a client that never
//! reads, costs no more than that). The waiting requests are the connection's
//! [`InFlight`], as a client keeps its own.

use std::collections::VecDeque;
use std::time::Instant;

use kwire_connection::in_flight::InFlight;

/// Requests waiting at once, per connection; beyond it the oldest is forgotten (its response,
/// should it come, is reported as unmatched). Kafka clients keep a few in flight (the Java
/// client 5 by default) and a broker reads the next only after answering the last.
pub const MAX_WAITING: usize = 1024;

/// The acks=0 Produce requests remembered, newest last, so that a response some brokers send
/// anyway is still decoded (and reported as unexpected).
const RECENT_UNACKED: usize = 16;

/// A request sent upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub api_key: i16,
    pub version: i16,
    pub correlation: i32,
    pub at: Instant,
    pub size: usize,
}

/// What a response answers.
#[derive(Debug, PartialEq, Eq)]
pub enum Answered {
    /// A request that waited for it.
    Waited(Request),
    /// A recent Produce with acks=0, which asked for no response.
    Unasked(Request),
    /// No request this connection remembers.
    Unknown,
}

/// One connection's waiting requests, oldest first, and how many there ever were at once.
#[derive(Debug)]
pub struct Waiting {
    queue: InFlight<Request>,
    unacked: VecDeque<Request>,
    /// Requests let go unanswered: over [`MAX_WAITING`], or passed over by a later response.
    forgotten: u64,
    /// Requests seen, waited for or not.
    seen: u64,
}

impl Default for Waiting {
    fn default() -> Self {
        Waiting { queue: InFlight::new(MAX_WAITING), unacked: VecDeque::new(), forgotten: 0, seen: 0 }
    }
}

impl Waiting {
    /// A request that expects a response; the oldest one goes when [`MAX_WAITING`] wait already.
    /// Returns the one forgotten, if any.
    pub fn expect(&mut self, request: Request) -> Option<Request> {
        self.seen += 1;
        let forgotten = self.queue.expect(request.correlation, request).map(|(_, r)| r);
        self.forgotten += u64::from(forgotten.is_some());
        forgotten
    }

    /// A request that asked for no response (Produce with acks=0): only the last few are kept.
    pub fn unasked(&mut self, request: Request) {
        self.seen += 1;
        if self.unacked.len() >= RECENT_UNACKED {
            self.unacked.pop_front();
        }
        self.unacked.push_back(request);
    }

    /// The request a response with `correlation` answers. Requests sent before it that are
    /// still waiting will get no response (Kafka answers in order): they are removed and
    /// returned in `passed_over`.
    pub fn answer(&mut self, correlation: i32, passed_over: &mut Vec<Request>) -> Answered {
        let forgotten = &mut self.forgotten;
        let settled = self.queue.settle(correlation, |_, request| {
            *forgotten += 1;
            passed_over.push(request);
        });
        if let Some(request) = settled {
            return Answered::Waited(request);
        }
        match self.unacked.iter().position(|r| r.correlation == correlation) {
            Some(at) => self.unacked.remove(at).map_or(Answered::Unknown, Answered::Unasked),
            None => Answered::Unknown,
        }
    }

    /// The requests still waiting, oldest first.
    pub fn unanswered(&self) -> impl Iterator<Item = &Request> {
        self.queue.iter().map(|(_, r)| r)
    }

    /// How many requests wait now.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// One line of counts for the end of a connection.
    pub fn summary(&self) -> String {
        let plural = if self.seen == 1 { "" } else { "s" };
        let mut text = format!("{} request{plural}, at most {} waiting at once", self.seen, self.queue.most());
        if self.forgotten > 0 {
            text.push_str(&format!(", {} given up unanswered", self.forgotten));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(correlation: i32) -> Request {
        Request { api_key: 3, version: 12, correlation, at: Instant::now(), size: 40 }
    }

    #[test]
    fn a_response_settles_the_requests_sent_before_it() {
        let mut w = Waiting::default();
        for c in 1..=3 {
            assert_eq!(w.expect(request(c)), None);
        }
        let mut passed = Vec::new();
        assert!(matches!(w.answer(3, &mut passed), Answered::Waited(r) if r.correlation == 3));
        assert_eq!(passed.iter().map(|r| r.correlation).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(w.len(), 0);
        assert!(w.summary().contains("2 given up"), "{}", w.summary());
        // A correlation id no request used settles nothing.
        w.expect(request(4));
        assert_eq!(w.answer(99, &mut passed), Answered::Unknown);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn acks_0_produces_wait_for_nothing_and_only_the_last_few_are_kept() {
        let mut w = Waiting::default();
        for c in 0..100_000 {
            w.unasked(request(c));
        }
        assert_eq!((w.len(), w.unacked.len()), (0, RECENT_UNACKED));
        assert!(w.summary().starts_with("100000 requests, at most 0 waiting"), "{}", w.summary());
        let mut passed = Vec::new();
        assert!(matches!(w.answer(99_999, &mut passed), Answered::Unasked(_)));
        assert_eq!(w.answer(0, &mut passed), Answered::Unknown);
    }

    #[test]
    fn no_more_than_the_cap_wait() {
        let mut w = Waiting::default();
        let forgotten: Vec<i32> =
            (0..MAX_WAITING as i32 + 10).filter_map(|c| w.expect(request(c))).map(|r| r.correlation).collect();
        assert_eq!(forgotten, (0..10).collect::<Vec<_>>());
        assert_eq!(w.len(), MAX_WAITING);
        assert_eq!(w.unanswered().next().map(|r| r.correlation), Some(10));
    }
}
