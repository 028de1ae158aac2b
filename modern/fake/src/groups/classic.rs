//! Classic groups, as Kafka's group coordinator runs them: members join, one round of JoinGroup
//! ends when every member has rejoined or the rebalance timeout passes, the leader's SyncGroup
//! hands out the assignments, and heartbeats keep members alive past their session timeout.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

use bytes::Bytes;
use kwire::ErrorCode;

use super::configs::Settings;
use super::{GroupKind, Ticked};

/// Kafka's `group.min.session.timeout.ms` and `group.max.session.timeout.ms`.
pub(crate) const SESSION_TIMEOUTS: std::ops::RangeInclusive<i32> = 6_000..=1_800_000;

/// A group's state, named as DescribeGroups and ListGroups name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Empty => "Empty",
            Phase::PreparingRebalance => "PreparingRebalance",
            Phase::CompletingRebalance => "CompletingRebalance",
            Phase::Stable => "Stable",
        }
    }
}

/// What a member learns when a round of joins ends.
#[derive(Debug, Clone)]
pub(crate) struct JoinAnswer {
    pub generation: i32,
    pub protocol_type: String,
    pub protocol: String,
    pub leader: String,
    /// Every member and its metadata for the chosen protocol: for the leader only.
    pub members: Vec<(String, Option<String>, Bytes)>,
    /// KIP-814: a static leader that rejoined in a stable group keeps the assignment it made.
    pub skip_assignment: bool,
}

/// A member of a group.
#[derive(Debug)]
pub(crate) struct Member {
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout: Duration,
    pub rebalance_timeout: Duration,
    pub protocols: Vec<(String, Bytes)>,
    pub awaiting_join: bool,
    pub join_answer: Option<JoinAnswer>,
    pub last_seen: Instant,
    pub assignment: Bytes,
}

/// A classic group.
#[derive(Debug)]
pub(crate) struct ClassicGroup {
    pub phase: Phase,
    pub protocol_type: Option<String>,
    pub protocol: Option<String>,
    pub generation: i32,
    pub leader: Option<String>,
    pub members: BTreeMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet (KIP-394).
    pub pending: HashSet<String>,
    rebalance_deadline: Instant,
    /// A round that began in an empty group ends no sooner (Kafka's
    /// `group.initial.rebalance.delay.ms`), so that members starting together join together.
    join_not_before: Instant,
    initial_delay: Duration,
}

/// What a JoinGroup comes to at once.
pub(crate) enum JoinStep {
    /// Answer now with this error (and the member id, for MEMBER_ID_REQUIRED).
    Refuse(ErrorCode, String),
    /// Wait for the round to end, as this member.
    Wait(String),
}

/// A JoinGroup's fields that the coordinator uses.
pub(crate) struct JoinRequest {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout_ms: i32,
    pub rebalance_timeout_ms: i32,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    /// v4+: a member without an id is given one and asked to join again with it.
    pub require_known_member_id: bool,
}

impl ClassicGroup {
    pub fn new(now: Instant, initial_delay: Duration) -> ClassicGroup {
        ClassicGroup {
            join_not_before: now,
            initial_delay,
            phase: Phase::Empty,
            protocol_type: None,
            protocol: None,
            generation: 0,
            leader: None,
            members: BTreeMap::new(),
            pending: HashSet::new(),
            rebalance_deadline: now,
        }
    }

    /// Protocol names every member supports.
    fn common_protocols(&self) -> Vec<String> {
        let mut members = self.members.values();
        let Some(first) = members.next() else { return Vec::new() };
        let mut common: Vec<String> = first.protocols.iter().map(|(n, _)| n.clone()).collect();
        for m in members {
            common.retain(|n| m.protocols.iter().any(|(p, _)| p == n));
        }
        common
    }

    pub fn join(&mut self, request: JoinRequest, now: Instant) -> JoinStep {
        if !SESSION_TIMEOUTS.contains(&request.session_timeout_ms) {
            return JoinStep::Refuse(ErrorCode::INVALID_SESSION_TIMEOUT, request.member_id);
        }
        if request.protocol_type.is_empty() || request.protocols.is_empty() {
            return JoinStep::Refuse(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, request.member_id);
        }
        if !self.members.is_empty() {
            let same_type = self.protocol_type.as_deref() == Some(request.protocol_type.as_str());
            let others_common = self.common_protocols();
            let shares = request.protocols.iter().any(|(n, _)| others_common.contains(n));
            let rejoining_alone = self.members.len() == 1 && self.members.contains_key(&request.member_id);
            if !same_type || (!shares && !rejoining_alone) {
                return JoinStep::Refuse(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, request.member_id);
            }
        }
        // KIP-345: a static member is known by its instance id across restarts.
        if let Some(instance) = request.instance_id.clone() {
            match (self.static_member(&instance), request.member_id.is_empty()) {
                (Some(old), true) => return self.replace_static(old, &instance, request, now),
                (Some(old), false) if old != request.member_id => {
                    return JoinStep::Refuse(ErrorCode::FENCED_INSTANCE_ID, request.member_id);
                }
                _ => {}
            }
        }
        let member_id = if request.member_id.is_empty() {
            let id = match &request.instance_id {
                // A new static member joins at once (no MEMBER_ID_REQUIRED round trip).
                Some(instance) => format!("{instance}-{}", crate::ids::random_uuid()),
                None => format!("{}-{}", request.client_id, crate::ids::random_uuid()),
            };
            if request.require_known_member_id && request.instance_id.is_none() {
                self.pending.insert(id.clone());
                return JoinStep::Refuse(ErrorCode::MEMBER_ID_REQUIRED, id);
            }
            id
        } else if self.members.contains_key(&request.member_id) || self.pending.remove(&request.member_id) {
            request.member_id
        } else {
            return JoinStep::Refuse(ErrorCode::UNKNOWN_MEMBER_ID, request.member_id);
        };
        let rebalance_timeout =
            Duration::from_millis(request.rebalance_timeout_ms.max(request.session_timeout_ms) as u64);
        let member = self.members.entry(member_id.clone()).or_insert_with(|| Member {
            instance_id: None,
            client_id: String::new(),
            client_host: String::new(),
            session_timeout: Duration::ZERO,
            rebalance_timeout,
            protocols: Vec::new(),
            awaiting_join: false,
            join_answer: None,
            last_seen: now,
            assignment: Bytes::new(),
        });
        member.instance_id = request.instance_id;
        member.client_id = request.client_id;
        member.client_host = request.client_host;
        member.session_timeout = Duration::from_millis(request.session_timeout_ms as u64);
        member.rebalance_timeout = rebalance_timeout;
        member.protocols = request.protocols;
        member.awaiting_join = true;
        member.join_answer = None;
        member.last_seen = now;
        self.protocol_type = Some(request.protocol_type);
        match self.phase {
            // The first member of an empty group waits for others to join; each one that does
            // extends the wait, up to the rebalance timeout (Kafka's `InitialDelayedJoin`).
            Phase::Empty => {
                self.prepare_rebalance(now);
                self.join_not_before = (now + self.initial_delay).min(self.rebalance_deadline);
            }
            Phase::PreparingRebalance if now < self.join_not_before => {
                self.join_not_before = (now + self.initial_delay).min(self.rebalance_deadline);
            }
            Phase::PreparingRebalance => {}
            Phase::CompletingRebalance | Phase::Stable => self.prepare_rebalance(now),
        }
        self.try_complete_join(now);
        JoinStep::Wait(member_id)
    }

    /// The member id a static member's instance id has now.
    pub fn static_member(&self, instance: &str) -> Option<String> {
        self.members.iter().find(|(_, m)| m.instance_id.as_deref() == Some(instance)).map(|(id, _)| id.clone())
    }

    /// FENCED_INSTANCE_ID for a request naming an instance id that another member id holds
    /// now (SyncGroup, Heartbeat, OffsetCommit, LeaveGroup), as Kafka checks.
    pub fn check_instance(&self, member: &str, instance: Option<&str>) -> Result<(), ErrorCode> {
        match instance.and_then(|i| self.static_member(i)) {
            Some(current) if current != member => Err(ErrorCode::FENCED_INSTANCE_ID),
            _ => Ok(()),
        }
    }

    /// A static member rejoining without its member id (it restarted): it gets a new one and
    /// takes the old one's place. In a stable group whose selected protocol stays the same with
    /// its protocols (Kafka compares the protocol chosen, not the members' metadata: a
    /// restarted consumer's subscription no longer lists the partitions it owned) nothing is
    /// rebalanced and it is answered at once with the current generation (the leader with
    /// every member and KIP-814's skip_assignment); otherwise a round of joins follows.
    fn replace_static(&mut self, old: String, instance: &str, request: JoinRequest, now: Instant) -> JoinStep {
        let id = format!("{instance}-{}", crate::ids::random_uuid());
        let mut member = self.members.remove(&old).expect("the static member found");
        member.client_id = request.client_id;
        member.client_host = request.client_host;
        member.session_timeout = Duration::from_millis(request.session_timeout_ms as u64);
        member.protocols = request.protocols;
        member.last_seen = now;
        self.members.insert(id.clone(), member);
        if self.leader.as_deref() == Some(old.as_str()) {
            self.leader = Some(id.clone());
        }
        let unchanged = self.protocol.as_deref() == Some(self.select_protocol().as_str());
        tracing::debug!(%instance, %old, new = %id, phase = ?self.phase, unchanged, "static member replaced");
        match self.phase {
            Phase::Stable if unchanged => {
                let protocol = self.protocol.clone().unwrap_or_default();
                let leader = self.leader.clone().unwrap_or_default();
                let is_leader = leader == id;
                let members = if is_leader { self.members_metadata(&protocol) } else { Vec::new() };
                let answer = JoinAnswer {
                    generation: self.generation,
                    protocol_type: self.protocol_type.clone().unwrap_or_default(),
                    protocol,
                    leader,
                    members,
                    skip_assignment: is_leader,
                };
                let member = self.members.get_mut(&id).expect("just inserted");
                member.join_answer = Some(answer);
            }
            Phase::PreparingRebalance => {
                self.members.get_mut(&id).expect("just inserted").awaiting_join = true;
                self.try_complete_join(now);
            }
            _ => {
                self.members.get_mut(&id).expect("just inserted").awaiting_join = true;
                self.prepare_rebalance(now);
                self.try_complete_join(now);
            }
        }
        JoinStep::Wait(id)
    }

    /// The protocol the members choose (Kafka's `selectProtocol`): each votes for the first of
    /// its own list that every member supports; the most votes win.
    fn select_protocol(&self) -> String {
        let common = self.common_protocols();
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        for m in self.members.values() {
            if let Some((name, _)) = m.protocols.iter().find(|(n, _)| common.contains(n)) {
                *votes.entry(name.as_str()).or_default() += 1;
            }
        }
        common
            .iter()
            .max_by_key(|n| {
                (votes.get(n.as_str()).copied().unwrap_or(0), std::cmp::Reverse(common.iter().position(|c| c == *n)))
            })
            .cloned()
            .unwrap_or_default()
    }

    /// Every member with its metadata for `protocol`, as the leader's JoinGroup answer lists them.
    fn members_metadata(&self, protocol: &str) -> Vec<(String, Option<String>, Bytes)> {
        self.members
            .iter()
            .map(|(id, m)| {
                let metadata =
                    m.protocols.iter().find(|(n, _)| *n == protocol).map(|(_, b)| b.clone()).unwrap_or_default();
                (id.clone(), m.instance_id.clone(), metadata)
            })
            .collect()
    }

    /// Starts a round of joins: every member must rejoin within the longest rebalance timeout.
    fn prepare_rebalance(&mut self, now: Instant) {
        self.phase = Phase::PreparingRebalance;
        let longest = self.members.values().map(|m| m.rebalance_timeout).max().unwrap_or(Duration::ZERO);
        self.rebalance_deadline = now + longest;
    }

    /// Ends the round of joins once every member rejoined or the deadline passed; returns
    /// whether anything changed.
    pub fn try_complete_join(&mut self, now: Instant) -> bool {
        if self.phase != Phase::PreparingRebalance {
            return false;
        }
        let all_joined = self.members.values().all(|m| m.awaiting_join);
        if (!all_joined && now < self.rebalance_deadline) || now < self.join_not_before {
            return false;
        }
        self.members.retain(|_, m| m.awaiting_join);
        self.generation += 1;
        tracing::debug!(generation = self.generation, members = self.members.len(), "round of joins ended");
        if self.members.is_empty() {
            self.phase = Phase::Empty;
            self.protocol = None;
            self.leader = None;
            return true;
        }
        let protocol = self.select_protocol();
        let leader = match &self.leader {
            Some(l) if self.members.contains_key(l) => l.clone(),
            _ => self.members.keys().next().cloned().unwrap_or_default(),
        };
        let everyone = self.members_metadata(&protocol);
        let protocol_type = self.protocol_type.clone().unwrap_or_default();
        for (id, m) in self.members.iter_mut() {
            m.awaiting_join = false;
            m.assignment = Bytes::new();
            m.last_seen = now;
            m.join_answer = Some(JoinAnswer {
                generation: self.generation,
                protocol_type: protocol_type.clone(),
                protocol: protocol.clone(),
                leader: leader.clone(),
                members: if *id == leader { everyone.clone() } else { Vec::new() },
                skip_assignment: false,
            });
        }
        self.protocol = Some(protocol);
        self.leader = Some(leader);
        self.phase = Phase::CompletingRebalance;
        true
    }

    /// Checks that `member` of `generation` may act now (SyncGroup, Heartbeat, OffsetCommit).
    pub fn check_member(&self, member: &str, generation: i32) -> Result<(), ErrorCode> {
        if !self.members.contains_key(member) {
            return Err(ErrorCode::UNKNOWN_MEMBER_ID);
        }
        if generation != self.generation {
            return Err(ErrorCode::ILLEGAL_GENERATION);
        }
        Ok(())
    }

    /// Kafka's `ClassicGroup.validateOffsetCommit`: with a negative generation anyone commits
    /// while the group has no members; without member id or instance id nobody else does. A
    /// member needs its instance id's current member id and the group's generation, and may
    /// commit while a round of joins runs (before it rejoins), not between its end and the
    /// leader's assignment. A member's commit keeps it alive.
    pub fn validate_offset_commit(
        &mut self,
        member: &str,
        instance: Option<&str>,
        generation: i32,
        now: Instant,
    ) -> Result<(), ErrorCode> {
        if generation < 0 && self.phase == Phase::Empty {
            return Ok(());
        }
        if generation < 0 && member.is_empty() && instance.is_none() {
            return Err(ErrorCode::UNKNOWN_MEMBER_ID);
        }
        self.check_instance(member, instance)?;
        self.check_member(member, generation)?;
        if self.phase == Phase::CompletingRebalance {
            return Err(ErrorCode::REBALANCE_IN_PROGRESS);
        }
        if let Some(m) = self.members.get_mut(member) {
            m.last_seen = now;
        }
        Ok(())
    }

    /// The leader's SyncGroup: stores every member's assignment and makes the group stable.
    pub fn sync(&mut self, member: &str, assignments: Vec<(String, Bytes)>, now: Instant) {
        if let Some(m) = self.members.get_mut(member) {
            m.last_seen = now;
        }
        if self.phase == Phase::CompletingRebalance && self.leader.as_deref() == Some(member) {
            for (id, assignment) in assignments {
                if let Some(m) = self.members.get_mut(&id) {
                    m.assignment = assignment;
                }
            }
            self.phase = Phase::Stable;
        }
    }

    /// Removes members; what remains rebalances, or the group becomes empty.
    pub fn remove(&mut self, ids: &[String], now: Instant) -> bool {
        let before = self.members.len();
        self.members.retain(|id, _| !ids.contains(id));
        if self.members.len() == before {
            return false;
        }
        if self.members.is_empty() {
            self.generation += 1;
            self.phase = Phase::Empty;
            self.protocol = None;
            self.leader = None;
        } else if self.phase != Phase::PreparingRebalance {
            self.prepare_rebalance(now);
            self.try_complete_join(now);
        } else {
            self.try_complete_join(now);
        }
        true
    }

    /// Members silent past their session timeout leave (members waiting in JoinGroup are
    /// bounded by the rebalance deadline instead); returns whether anything changed.
    pub fn expire(&mut self, now: Instant) -> bool {
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| !m.awaiting_join && now.duration_since(m.last_seen) > m.session_timeout)
            .map(|(id, _)| id.clone())
            .collect();
        if !expired.is_empty() {
            tracing::debug!(?expired, "session timeouts");
        }
        let removed = self.remove(&expired, now);
        self.try_complete_join(now) || removed
    }

    /// The topics the members' consumer-protocol subscriptions name.
    pub fn subscribed_topics(&self) -> BTreeSet<String> {
        use kwire::messages::ConsumerProtocolSubscription;
        use kwire::Decode;
        let mut topics = BTreeSet::new();
        if self.protocol_type.as_deref() != Some("consumer") {
            return topics;
        }
        for m in self.members.values() {
            for (_, metadata) in &m.protocols {
                let mut buf = metadata.clone();
                if buf.len() < 2 {
                    continue;
                }
                let version = i16::from_be_bytes([buf[0], buf[1]]);
                let _ = bytes::Buf::get_i16(&mut buf);
                if let Ok(subscription) = ConsumerProtocolSubscription::decode(&mut buf, version.clamp(0, 3)) {
                    topics.extend(subscription.topics.iter().map(|t| t.to_string()));
                }
            }
        }
        topics
    }
}

impl GroupKind for ClassicGroup {
    const TYPE: &'static str = "classic";

    fn protocol_type(&self) -> &str {
        self.protocol_type.as_deref().unwrap_or_default()
    }

    fn state_name(&self) -> &'static str {
        self.phase.name()
    }

    fn member_ids(&self) -> Vec<String> {
        self.members.keys().cloned().collect()
    }

    fn tick(&mut self, now: Instant, _settings: &Settings) -> Ticked {
        let before = self.member_ids();
        let changed = self.expire(now);
        let gone = before.into_iter().filter(|id| !self.members.contains_key(id)).collect();
        Ticked { changed, gone }
    }

    /// The rest rebalance, or the group becomes empty.
    fn remove_member(&mut self, member: &str, now: Instant) -> bool {
        self.remove(&[member.to_string()], now)
    }

    /// Control's forced rebalance: a stable or syncing group starts a round of joins (members
    /// learn it from REBALANCE_IN_PROGRESS); false if one runs already or there are no members.
    fn force_rebalance(&mut self, now: Instant) -> bool {
        if !matches!(self.phase, Phase::Stable | Phase::CompletingRebalance) {
            return false;
        }
        self.prepare_rebalance(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn join(group: &mut ClassicGroup, id: &str, now: Instant) -> JoinStep {
        group.join(
            JoinRequest {
                member_id: id.to_string(),
                instance_id: None,
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                session_timeout_ms: 10_000,
                rebalance_timeout_ms: 30_000,
                protocol_type: "consumer".into(),
                protocols: vec![
                    ("range".into(), Bytes::from_static(b"r")),
                    ("cooperative-sticky".into(), Bytes::new()),
                ],
                require_known_member_id: true,
            },
            now,
        )
    }

    #[test]
    fn a_round_ends_when_every_member_rejoins() {
        let now = Instant::now();
        let mut g = ClassicGroup::new(now, Duration::ZERO);
        let JoinStep::Refuse(ErrorCode::MEMBER_ID_REQUIRED, a) = join(&mut g, "", now) else { panic!() };
        assert!(matches!(join(&mut g, &a, now), JoinStep::Wait(_)));
        assert_eq!((g.phase, g.generation), (Phase::CompletingRebalance, 1), "one member: at once");
        let answer = g.members[&a].join_answer.clone().unwrap();
        assert_eq!((answer.protocol.as_str(), answer.members.len()), ("range", 1));
        g.sync(&a, vec![(a.clone(), Bytes::from_static(b"all"))], now);
        assert_eq!(g.phase, Phase::Stable);

        let JoinStep::Refuse(_, b) = join(&mut g, "", now) else { panic!() };
        join(&mut g, &b, now);
        assert_eq!(g.phase, Phase::PreparingRebalance, "the first member has not rejoined");
        assert_eq!(g.check_member(&a, 1), Ok(()));
        join(&mut g, &a, now);
        assert_eq!((g.phase, g.generation, g.leader.as_deref()), (Phase::CompletingRebalance, 2, Some(a.as_str())));

        // b goes silent: past its session timeout it leaves, and a rebalances alone.
        g.sync(&a, vec![], now);
        g.members.get_mut(&a).unwrap().last_seen = now + Duration::from_secs(20);
        assert!(g.expire(now + Duration::from_secs(15)));
        assert_eq!(g.phase, Phase::PreparingRebalance);
        assert!(!g.members.contains_key(&b));
        assert_eq!(g.check_member(&b, 2), Err(ErrorCode::UNKNOWN_MEMBER_ID));
    }
}
