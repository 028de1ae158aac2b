//! A fetch session with one broker (KIP-227): the first Fetch lists every partition and asks
//! for a session; later ones send only the partitions whose fetch state changed and the ones to
//! forget, and the broker answers only the partitions with something new. Any error starts
//! over with a full fetch, as Kafka's `FetchSessionHandler` does.

use std::collections::BTreeMap;

use kwire::messages::fetch_request::{FetchPartition, FetchTopic, ForgottenTopic};
use kwire::{ErrorCode, TopicName, Uuid};

use crate::consumer::record::TopicPartition;

/// Fetch v7 brought sessions.
const MIN_SESSION_VERSION: i16 = 7;
/// Fetch v13 names topics by id.
pub(crate) const TOPIC_ID_VERSION: i16 = 13;

/// What a partition is fetched with: compared with the session's copy to decide whether an
/// incremental Fetch must send it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionFetch {
    pub topic_id: Uuid,
    pub fetch_offset: i64,
    pub last_fetched_epoch: i32,
    pub current_leader_epoch: i32,
    pub max_bytes: i32,
}

/// The Fetch to send: its session fields, and what goes in `topics` and `forgotten_topics_data`.
#[derive(Debug)]
pub(crate) struct Plan {
    pub session_id: i32,
    pub session_epoch: i32,
    pub send: Vec<(TopicPartition, PartitionFetch)>,
    pub forget: Vec<(TopicPartition, Uuid)>,
}

impl Plan {
    /// The request's topics and forgotten topics, grouped by topic (name and id: the version
    /// reads one or the other).
    pub(crate) fn topics(&self) -> (Vec<FetchTopic>, Vec<ForgottenTopic>) {
        let mut topics: Vec<FetchTopic> = Vec::new();
        for (tp, fetch) in &self.send {
            let partition = FetchPartition {
                partition: tp.partition,
                current_leader_epoch: fetch.current_leader_epoch,
                fetch_offset: fetch.fetch_offset,
                last_fetched_epoch: fetch.last_fetched_epoch,
                partition_max_bytes: fetch.max_bytes,
                ..Default::default()
            };
            match topics.last_mut() {
                Some(t) if t.topic.as_str() == &*tp.topic && t.topic_id == fetch.topic_id => {
                    t.partitions.push(partition)
                }
                _ => topics.push(FetchTopic {
                    topic: TopicName::from(&*tp.topic),
                    topic_id: fetch.topic_id,
                    partitions: vec![partition],
                    ..Default::default()
                }),
            }
        }
        let mut forgotten: BTreeMap<(&str, Uuid), Vec<i32>> = BTreeMap::new();
        for (tp, id) in &self.forget {
            forgotten.entry((&tp.topic, *id)).or_default().push(tp.partition);
        }
        let forgotten = forgotten
            .into_iter()
            .map(|((topic, topic_id), partitions)| ForgottenTopic {
                topic: TopicName::from(topic),
                topic_id,
                partitions: partitions.into(),
                ..Default::default()
            })
            .collect();
        (topics, forgotten)
    }
}

/// The client's half of a fetch session.
#[derive(Debug, Default)]
pub(crate) struct FetchSession {
    /// 0 until the broker gives one.
    id: i32,
    /// The epoch of the next request: 0 opens a session (a full fetch).
    epoch: i32,
    /// The broker keeps no sessions for us (it has none left): every Fetch is full and
    /// sessionless.
    disabled: bool,
    /// The partitions as the broker's session holds them.
    partitions: BTreeMap<TopicPartition, PartitionFetch>,
    /// Where a full fetch starts listing, moved on each time: a full answer filled early
    /// would otherwise always favour the first partitions.
    rotation: usize,
}

impl FetchSession {
    /// The next Fetch for `wanted` (every partition to fetch now, in order) at `version`.
    /// The session's copy is updated as if the broker will accept it; any failure resets it.
    pub(crate) fn plan(&mut self, mut wanted: Vec<(TopicPartition, PartitionFetch)>, version: i16) -> Plan {
        let sessions = version >= MIN_SESSION_VERSION && !self.disabled;
        if !sessions || self.epoch == 0 {
            if !wanted.is_empty() {
                self.rotation = (self.rotation + 1) % wanted.len();
                wanted.rotate_left(self.rotation);
            }
            self.partitions = wanted.iter().cloned().collect();
            let (session_id, session_epoch) = if sessions { (self.id, 0) } else { (0, -1) };
            return Plan { session_id, session_epoch, send: wanted, forget: Vec::new() };
        }
        let mut send = Vec::new();
        let mut forget = Vec::new();
        let mut next: BTreeMap<TopicPartition, PartitionFetch> = BTreeMap::new();
        for (tp, fetch) in wanted {
            match self.partitions.get(&tp) {
                Some(old) if old == &fetch => {}
                Some(old) if old.topic_id != fetch.topic_id && version >= TOPIC_ID_VERSION => {
                    // The topic was recreated under another id: forget the old one.
                    forget.push((tp.clone(), old.topic_id));
                    send.push((tp.clone(), fetch));
                }
                _ => send.push((tp.clone(), fetch)),
            }
            next.insert(tp, fetch);
        }
        for (tp, old) in &self.partitions {
            if !next.contains_key(tp) {
                forget.push((tp.clone(), old.topic_id));
            }
        }
        self.partitions = next;
        Plan { session_id: self.id, session_epoch: self.epoch, send, forget }
    }

    /// Reads the answer's session fields. `Ok` when its partitions may be used; `Err` with the
    /// top-level error otherwise (the session then starts over).
    pub(crate) fn answered(&mut self, plan: &Plan, error: ErrorCode, session_id: i32) -> Result<(), ErrorCode> {
        match error {
            ErrorCode::NONE => {}
            ErrorCode::FETCH_SESSION_ID_NOT_FOUND if plan.session_epoch == 0 => {
                // The broker could not even open one: it is out of session slots.
                tracing::info!("the broker has no fetch session slot left; fetching without sessions");
                self.disabled = true;
                self.reset();
                return Err(error);
            }
            _ => {
                self.reset();
                return Err(error);
            }
        }
        if plan.session_epoch == -1 {
            return Ok(());
        }
        if plan.session_epoch == 0 {
            if session_id == 0 {
                // No session given: the next Fetch is full again.
                self.reset();
            } else {
                self.id = session_id;
                self.epoch = 1;
            }
        } else {
            self.epoch = if self.epoch == i32::MAX { 1 } else { self.epoch + 1 };
        }
        Ok(())
    }

    /// After an error: the next Fetch is full, and closes the session the broker may still
    /// hold for us (its id with epoch 0).
    pub(crate) fn reset(&mut self) {
        self.epoch = 0;
        self.partitions.clear();
    }

    /// The request that closes the session (epoch -1), if one is open.
    pub(crate) fn close(&mut self) -> Option<(i32, i32)> {
        let open = (self.id != 0 && self.epoch > 0).then_some((self.id, -1));
        self.id = 0;
        self.reset();
        open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: i64) -> PartitionFetch {
        PartitionFetch {
            topic_id: Uuid::from_u128(7),
            fetch_offset: offset,
            last_fetched_epoch: -1,
            current_leader_epoch: 0,
            max_bytes: 1 << 20,
        }
    }

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    #[test]
    fn an_incremental_fetch_sends_only_what_changed_and_forgets_what_left() {
        let mut session = FetchSession::default();
        let full = session.plan(vec![(tp(0), at(0)), (tp(1), at(0)), (tp(2), at(0))], 18);
        assert_eq!((full.session_id, full.session_epoch, full.send.len()), (0, 0, 3));
        session.answered(&full, ErrorCode::NONE, 42).unwrap();
        // p0 moved, p1 unchanged (implied), p2 no longer wanted.
        let next = session.plan(vec![(tp(0), at(10)), (tp(1), at(0))], 18);
        assert_eq!((next.session_id, next.session_epoch), (42, 1));
        assert_eq!(next.send.iter().map(|(tp, f)| (tp.partition, f.fetch_offset)).collect::<Vec<_>>(), [(0, 10)]);
        assert_eq!(next.forget.iter().map(|(tp, _)| tp.partition).collect::<Vec<_>>(), [2]);
        let (topics, forgotten) = next.topics();
        assert_eq!((topics.len(), forgotten[0].partitions.to_vec()), (1, vec![2]));
        session.answered(&next, ErrorCode::NONE, 42).unwrap();
        let again = session.plan(vec![(tp(0), at(10)), (tp(1), at(0))], 18);
        assert_eq!((again.session_epoch, again.send.len(), again.forget.len()), (2, 0, 0));
    }

    #[test]
    fn errors_start_over_with_a_full_fetch_that_closes_the_old_session() {
        let mut session = FetchSession::default();
        let full = session.plan(vec![(tp(0), at(0))], 18);
        session.answered(&full, ErrorCode::NONE, 9).unwrap();
        let next = session.plan(vec![(tp(0), at(5))], 18);
        assert_eq!(
            session.answered(&next, ErrorCode::INVALID_FETCH_SESSION_EPOCH, 0),
            Err(ErrorCode::INVALID_FETCH_SESSION_EPOCH)
        );
        let full = session.plan(vec![(tp(0), at(5))], 18);
        assert_eq!((full.session_id, full.session_epoch, full.send.len()), (9, 0, 1));
        // A broker that gives no session (id 0) gets full fetches.
        session.answered(&full, ErrorCode::NONE, 0).unwrap();
        assert_eq!(session.plan(vec![(tp(0), at(6))], 18).session_epoch, 0);
        // Before v7 there are no sessions.
        assert_eq!(FetchSession::default().plan(vec![(tp(0), at(0))], 6).session_epoch, -1);
    }

    #[test]
    fn a_broker_out_of_slots_gets_sessionless_fetches() {
        let mut session = FetchSession::default();
        let full = session.plan(vec![(tp(0), at(0))], 18);
        assert!(session.answered(&full, ErrorCode::FETCH_SESSION_ID_NOT_FOUND, 0).is_err());
        let next = session.plan(vec![(tp(0), at(0))], 18);
        assert_eq!((next.session_id, next.session_epoch), (0, -1));
    }

    #[test]
    fn a_recreated_topic_is_forgotten_under_its_old_id() {
        let mut session = FetchSession::default();
        let full = session.plan(vec![(tp(0), at(3))], 18);
        session.answered(&full, ErrorCode::NONE, 1).unwrap();
        let new_id = PartitionFetch { topic_id: Uuid::from_u128(8), ..at(0) };
        let next = session.plan(vec![(tp(0), new_id)], 18);
        assert_eq!(next.forget, [(tp(0), Uuid::from_u128(7))]);
        assert_eq!(next.send.len(), 1);
    }
}
