//! KIP-848 consumer groups, after Kafka's `GroupMetadataManager`: members heartbeat their
//! subscription (topic names or a regular expression) and what they own; the coordinator keeps
//! a group epoch, computes a target assignment with a server-side assignor (`uniform`, sticky
//! and balanced, or `range`, per topic) whenever the epoch moves, and reconciles each member
//! towards it: partitions to give up are revoked first (the member keeps its epoch until it
//! says it let them go), partitions another member still owns are handed over only once
//! released, and a member that has all it can get moves to the assignment's epoch.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kwire::{ErrorCode, Uuid};

use super::assignors::{
    self, intersect, is_within, minus, Assignable, Owned, Subscriptions, Target, CONSUMER_ASSIGNORS,
};
use super::configs::Settings;
use super::{GroupKind, Refusal, Ticked};

/// Kafka's `group.consumer.heartbeat.interval.ms` and `group.consumer.session.timeout.ms`.
pub(crate) const HEARTBEAT_INTERVAL_MS: i32 = 5_000;
const SESSION_TIMEOUT: Duration = Duration::from_secs(45);

/// The member epoch of a static member that left for now (Kafka's LEAVE_GROUP_STATIC_MEMBER_EPOCH).
const STATIC_STEPPED_OUT: i32 = -2;

/// OffsetCommit v9 carries a KIP-848 member's epoch: its members must use it.
const OFFSET_COMMIT_MEMBER_EPOCH_FROM: i16 = 9;

/// One member.
#[derive(Debug, Clone)]
pub(crate) struct CgMember {
    pub epoch: i32,
    previous_epoch: i32,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    rebalance_timeout: Duration,
    pub subscribed_names: Vec<String>,
    pub subscribed_regex: Option<String>,
    assignor: Option<String>,
    /// What it has been given and not asked to give up.
    pub assigned: Owned,
    /// The assignment epoch each partition it holds (assigned or revoking) was given to it at
    /// (KIP-1251): an offset commit with an older member epoch may commit a partition it
    /// held then.
    assigned_at: BTreeMap<(Uuid, i32), i32>,
    /// What it must give up, and still owns until it says otherwise.
    revoking: Owned,
    revoke_by: Option<Instant>,
    /// The assignment last sent, so that an unchanged one is not sent again.
    sent: Option<Owned>,
    last_seen: Instant,
}

/// A consumer group's membership and assignment.
#[derive(Debug)]
pub(crate) struct ConsumerGroup {
    pub epoch: i32,
    pub assignment_epoch: i32,
    pub assignor: String,
    pub members: BTreeMap<String, CgMember>,
    pub target: Target,
}

/// A ConsumerGroupHeartbeat's fields the coordinator uses.
pub(crate) struct Beat {
    pub member_id: String,
    pub member_epoch: i32,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub subscribed_names: Option<Vec<String>>,
    pub subscribed_regex: Option<String>,
    pub assignor: Option<String>,
    pub owned: Option<Owned>,
    pub client_id: String,
    pub client_host: String,
}

/// The coordinator's answer: the member's id and epoch, and its assignment if it changed.
#[derive(Debug)]
pub(crate) struct Answer {
    pub member_id: String,
    pub member_epoch: i32,
    pub assignment: Option<Owned>,
}

/// A new group is at epoch 1, as Kafka's `ModernGroup` starts: its first member joins at 2.
impl Default for ConsumerGroup {
    fn default() -> ConsumerGroup {
        ConsumerGroup {
            epoch: 1,
            assignment_epoch: 0,
            assignor: String::new(),
            members: BTreeMap::new(),
            target: Target::new(),
        }
    }
}

impl ConsumerGroup {
    /// One heartbeat: join (epoch 0), leave (-1, or -2 for a static member), or keep going.
    pub fn heartbeat(&mut self, beat: Beat, topics: &Assignable, now: Instant) -> Result<Answer, Refusal> {
        if let Some(instance) = &beat.instance_id {
            self.check_instance(&beat.member_id, beat.member_epoch, instance)?;
        }
        if beat.member_epoch < 0 {
            return self.leave(beat);
        }
        // A static member back after stepping out takes its place: a new member id, the same
        // assignment, and no new group epoch unless its subscription changed.
        let stepped_out = beat
            .instance_id
            .as_ref()
            .filter(|_| beat.member_epoch == 0)
            .and_then(|i| self.members.iter().find(|(_, m)| m.instance_id.as_ref() == Some(i)))
            .map(|(id, _)| id.clone());
        if let Some(old) = &stepped_out {
            let mut member = self.members.remove(old).expect("found above");
            (member.epoch, member.previous_epoch, member.sent, member.last_seen) = (0, -1, None, now);
            self.members.insert(beat.member_id.clone(), member);
            if let Some(target) = self.target.remove(old) {
                self.target.insert(beat.member_id.clone(), target);
            }
        } else if beat.member_epoch == 0 {
            // (The request's fields were checked as Kafka checks them: see
            // `consumer_group_heartbeat::invalid`.)
            let member = CgMember {
                epoch: 0,
                previous_epoch: -1,
                instance_id: beat.instance_id.clone(),
                rack_id: beat.rack_id.clone(),
                client_id: beat.client_id.clone(),
                client_host: beat.client_host.clone(),
                rebalance_timeout: Duration::from_millis(beat.rebalance_timeout_ms.max(0) as u64),
                subscribed_names: Vec::new(),
                subscribed_regex: None,
                assignor: None,
                assigned: Owned::new(),
                assigned_at: BTreeMap::new(),
                revoking: Owned::new(),
                revoke_by: None,
                sent: None,
                last_seen: now,
            };
            // A member that joins again starts over.
            self.members.insert(beat.member_id.clone(), member);
        }
        let epoch = self.epoch;
        let Some(member) = self.members.get_mut(&beat.member_id) else {
            return Err((
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!("Member {} is not a member of the group.", beat.member_id),
            ));
        };
        if beat.member_epoch != member.epoch {
            // A member that missed our last answer may still speak with its epoch before it.
            let retried = beat.member_epoch == member.previous_epoch
                && beat.owned.as_ref().is_some_and(|owned| is_within(owned, &member.assigned));
            if !retried {
                return Err((
                    ErrorCode::FENCED_MEMBER_EPOCH,
                    format!("The consumer group member has a smaller member epoch ({}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.", beat.member_epoch, member.epoch),
                ));
            }
        }
        member.last_seen = now;
        // A member joining moves the group's epoch, as does a new subscription.
        let mut changed = beat.member_epoch == 0 && stepped_out.is_none();
        if let Some(names) = beat.subscribed_names {
            changed |= names != member.subscribed_names;
            member.subscribed_names = names;
        }
        if let Some(regex) = beat.subscribed_regex {
            let regex = Some(regex).filter(|r| !r.is_empty());
            changed |= regex != member.subscribed_regex;
            member.subscribed_regex = regex;
        }
        if let Some(assignor) = beat.assignor {
            member.assignor = Some(assignor);
        }
        if let Some(owned) = &beat.owned {
            // It let go of what it was asked to give up.
            if !member.revoking.is_empty()
                && member.revoking.iter().all(|(t, ps)| owned.get(t).is_none_or(|o| o.is_disjoint(ps)))
            {
                member.revoking.clear();
                member.revoke_by = None;
            }
        }
        if changed {
            self.epoch = epoch + 1;
        }
        if self.assignment_epoch < self.epoch {
            self.assign(topics);
        }
        let is_join = beat.member_epoch == 0;
        Ok(self.reconcile(&beat.member_id, is_join, now))
    }

    /// Kafka's checks of a static member's instance id: a join may take it over only from a
    /// member that stepped out (epoch -2); any other heartbeat must come from its owner.
    fn check_instance(&self, member_id: &str, epoch: i32, instance: &str) -> Result<(), Refusal> {
        let owner = self.members.iter().find(|(_, m)| m.instance_id.as_deref() == Some(instance));
        match owner {
            Some((owner, m)) if epoch == 0 && m.epoch != STATIC_STEPPED_OUT => Err((
                ErrorCode::UNRELEASED_INSTANCE_ID,
                format!("Static member {member_id} with instance id {instance} cannot join the group because the instance id is owned by {owner} member."),
            )),
            None if epoch != 0 => {
                Err((ErrorCode::UNKNOWN_MEMBER_ID, format!("Instance id {instance} is unknown.")))
            }
            Some((owner, _)) if epoch != 0 && owner != member_id => Err((
                ErrorCode::FENCED_INSTANCE_ID,
                format!("Static member {member_id} with instance id {instance} was fenced by member {owner}."),
            )),
            _ => Ok(()),
        }
    }

    /// Epoch -1 removes the member and moves the group's epoch; -2 from a static member only
    /// steps out: it keeps its assignment, and the group its epoch, until it comes back with
    /// its instance id or its session times out (Kafka's `consumerGroupLeave`).
    fn leave(&mut self, beat: Beat) -> Result<Answer, Refusal> {
        let answer = Answer { member_id: beat.member_id.clone(), member_epoch: beat.member_epoch, assignment: None };
        let Some(member) = self.members.get_mut(&beat.member_id) else {
            return Err((
                ErrorCode::UNKNOWN_MEMBER_ID,
                format!("Member {} is not a member of the group.", beat.member_id),
            ));
        };
        if beat.member_epoch == STATIC_STEPPED_OUT && member.instance_id.is_some() {
            member.epoch = STATIC_STEPPED_OUT;
            return Ok(answer);
        }
        self.members.remove(&beat.member_id);
        self.target.remove(&beat.member_id);
        self.epoch += 1;
        Ok(answer)
    }

    /// The target assignment for every member, at the group's epoch.
    fn assign(&mut self, topics: &Assignable) {
        let assignor = self
            .members
            .values()
            .find_map(|m| m.assignor.clone())
            .filter(|a| CONSUMER_ASSIGNORS.contains(&a.as_str()))
            .unwrap_or_else(|| CONSUMER_ASSIGNORS[0].to_string());
        let subscriptions: Subscriptions =
            self.members.iter().map(|(id, m)| (id.clone(), subscribed(m, topics))).collect();
        self.target = if assignor == "range" {
            assignors::range(&subscriptions, topics)
        } else {
            assignors::uniform(&subscriptions, topics, &self.target)
        };
        self.assignor = assignor;
        self.assignment_epoch = self.epoch;
    }

    /// Moves `member` towards its target: revoke first, then hand over what others released.
    fn reconcile(&mut self, id: &str, is_join: bool, now: Instant) -> Answer {
        let target = self.target.get(id).cloned().unwrap_or_default();
        let held_by_others: Owned = self
            .members
            .iter()
            .filter(|(other, _)| other.as_str() != id)
            .flat_map(|(_, m)| m.assigned.iter().chain(m.revoking.iter()))
            .fold(Owned::new(), |mut all, (t, ps)| {
                all.entry(*t).or_default().extend(ps);
                all
            });
        let assignment_epoch = self.assignment_epoch;
        let member = self.members.get_mut(id).expect("the member heartbeating");
        if member.revoking.is_empty() {
            let to_revoke = minus(&member.assigned, &target);
            if to_revoke.is_empty() {
                // Everything of its target that nobody else still owns.
                let free = minus(&minus(&target, &member.assigned), &held_by_others);
                for (t, ps) in free {
                    member.assigned_at.extend(ps.iter().map(|p| ((t, *p), assignment_epoch)));
                    member.assigned.entry(t).or_default().extend(ps);
                }
                if member.epoch != assignment_epoch {
                    member.previous_epoch = member.epoch;
                    member.epoch = assignment_epoch;
                }
            } else {
                member.assigned = intersect(&member.assigned, &target);
                member.revoking = to_revoke;
                member.revoke_by = Some(now + member.rebalance_timeout);
            }
        }
        let assignment = (is_join || member.sent.as_ref() != Some(&member.assigned)).then(|| member.assigned.clone());
        if assignment.is_some() {
            member.sent = Some(member.assigned.clone());
        }
        Answer { member_id: id.to_string(), member_epoch: member.epoch, assignment }
    }

    /// Members silent past the session timeout, or holding partitions past their rebalance
    /// timeout, are removed (a new group epoch follows); their ids.
    fn expire(&mut self, now: Instant) -> Vec<String> {
        let gone: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| {
                now.duration_since(m.last_seen) > SESSION_TIMEOUT || m.revoke_by.is_some_and(|by| now > by)
            })
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            tracing::debug!(member = %id, "consumer group member expired");
            self.members.remove(id);
            self.target.remove(id);
        }
        if !gone.is_empty() {
            self.epoch += 1;
        }
        gone
    }

    /// The existing topics some member subscribes to (OffsetDelete refuses to delete their
    /// offsets, as Kafka's `ConsumerGroup.isSubscribedToTopic`).
    pub fn subscribed_topics(&self, topics: &Assignable) -> BTreeSet<String> {
        self.members.values().flat_map(|m| subscribed(m, topics)).collect()
    }

    /// Kafka's `ConsumerGroup.validateOffsetCommit` (4.4, with KIP-1251's assignment epochs)
    /// for an OffsetCommit at `version` of `partitions` (topic id, partition): the group's
    /// members only (anyone, with a negative epoch, while it has none); a member of the
    /// consumer protocol commits with OffsetCommit v9+; at its own epoch it commits anything,
    /// at a newer one nothing, and at an older one only partitions it still holds (assigned or
    /// being revoked) that it was given at that epoch or before. One partition refused refuses
    /// the whole commit.
    ///
    /// `version: None` for a commit in a transaction (TxnOffsetCommit), which any version may
    /// make.
    pub fn validate_offset_commit(
        &self,
        member_id: &str,
        epoch: i32,
        version: Option<i16>,
        partitions: &[(Uuid, i32)],
    ) -> Result<(), ErrorCode> {
        if epoch < 0 && self.members.is_empty() {
            return Ok(());
        }
        let member = self.members.get(member_id).ok_or(ErrorCode::UNKNOWN_MEMBER_ID)?;
        if version.is_some_and(|v| v < OFFSET_COMMIT_MEMBER_EPOCH_FROM) {
            return Err(ErrorCode::UNSUPPORTED_VERSION);
        }
        if epoch == member.epoch {
            return Ok(());
        }
        if epoch > member.epoch {
            return Err(ErrorCode::STALE_MEMBER_EPOCH);
        }
        // The epoch it was given the partition at, if it still holds it.
        let held_since = |(t, p): &(Uuid, i32)| -> Option<i32> {
            let holds = |o: &Owned| o.get(t).is_some_and(|ps| ps.contains(p));
            if holds(&member.assigned) || holds(&member.revoking) {
                member.assigned_at.get(&(*t, *p)).copied()
            } else {
                None
            }
        };
        if partitions.iter().all(|tp| held_since(tp).is_some_and(|since| epoch >= since)) {
            Ok(())
        } else {
            Err(ErrorCode::STALE_MEMBER_EPOCH)
        }
    }

    /// Kafka's `ConsumerGroup.validateOffsetFetch` for OffsetFetch v9+'s member id and epoch:
    /// without a member id and with a negative epoch (admin clients, older consumers) anyone
    /// may fetch; otherwise only a member (an empty id is none), at exactly its epoch. A null
    /// member id with an epoch fails Kafka's lookup of it: UNKNOWN_SERVER_ERROR.
    pub fn validate_offset_fetch(&self, member_id: Option<&str>, epoch: i32) -> Result<(), ErrorCode> {
        let Some(member_id) = member_id else {
            return if epoch < 0 { Ok(()) } else { Err(ErrorCode::UNKNOWN_SERVER_ERROR) };
        };
        let member = self.members.get(member_id).ok_or(ErrorCode::UNKNOWN_MEMBER_ID)?;
        if epoch != member.epoch {
            return Err(ErrorCode::STALE_MEMBER_EPOCH);
        }
        Ok(())
    }
}

/// The topics `member` subscribes to that exist: by name, or by its regular expression
/// (RE2/J in Kafka; the `regex` crate's syntax is RE2's), matched against the whole name.
fn subscribed(member: &CgMember, topics: &Assignable) -> BTreeSet<String> {
    let mut names: BTreeSet<String> =
        member.subscribed_names.iter().filter(|n| topics.contains_key(*n)).cloned().collect();
    if let Some(regex) = member.subscribed_regex.as_ref().and_then(|r| regex::Regex::new(&format!("^(?:{r})$")).ok()) {
        names.extend(topics.keys().filter(|t| regex.is_match(t)).cloned());
    }
    names
}

impl GroupKind for ConsumerGroup {
    const TYPE: &'static str = "consumer";

    fn protocol_type(&self) -> &str {
        "consumer"
    }

    /// Kafka's name for the group's state.
    fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.assignment_epoch < self.epoch {
            "Assigning"
        } else if self.members.values().any(|m| m.epoch != self.assignment_epoch || !m.revoking.is_empty()) {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    fn member_ids(&self) -> Vec<String> {
        self.members.keys().cloned().collect()
    }

    fn tick(&mut self, now: Instant, _settings: &Settings) -> Ticked {
        self.expire(now).into()
    }

    /// The member leaves and the group moves to a new epoch.
    fn remove_member(&mut self, member: &str, _now: Instant) -> bool {
        let gone = self.members.remove(member).is_some();
        if gone {
            self.target.remove(member);
            self.epoch += 1;
        }
        gone
    }

    /// A new group epoch: the assignment is computed again and every member moves to it.
    fn force_rebalance(&mut self, _now: Instant) -> bool {
        if self.members.is_empty() {
            return false;
        }
        self.epoch += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beat(member: &str, epoch: i32, owned: Option<Owned>) -> Beat {
        Beat {
            member_id: member.to_string(),
            member_epoch: epoch,
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: 60_000,
            subscribed_names: (epoch == 0).then(|| vec!["t".to_string()]),
            subscribed_regex: None,
            assignor: None,
            owned,
            client_id: "c".to_string(),
            client_host: "/127.0.0.1".to_string(),
        }
    }

    fn count(o: &Owned) -> usize {
        o.values().map(BTreeSet::len).sum()
    }

    #[test]
    fn a_second_member_gets_partitions_only_after_the_first_revokes_them() {
        let id = Uuid::from_bytes([1; 16]);
        let topics: Assignable = [("t".to_string(), (id, 4))].into();
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        let a = g.heartbeat(beat("a", 0, None), &topics, now).unwrap();
        assert_eq!((a.member_epoch, a.assignment.as_ref().map(count)), (2, Some(4)), "a new group is at 1");
        let owned_a = a.assignment.unwrap();
        let b = g.heartbeat(beat("b", 0, None), &topics, now).unwrap();
        // b is at the new epoch but its partitions are still a's.
        assert_eq!((b.member_epoch, b.assignment.as_ref().map(count)), (3, Some(0)));
        assert_eq!(g.state_name(), "Reconciling");
        // a is asked to give up two and keeps its epoch until it does.
        let a = g.heartbeat(beat("a", 2, Some(owned_a)), &topics, now).unwrap();
        assert_eq!((a.member_epoch, a.assignment.as_ref().map(count)), (2, Some(2)));
        let kept = a.assignment.unwrap();
        let a = g.heartbeat(beat("a", 2, Some(kept.clone())), &topics, now).unwrap();
        assert_eq!((a.member_epoch, a.assignment), (3, None), "the same two, now at epoch 3");
        let b = g.heartbeat(beat("b", 3, Some(Owned::new())), &topics, now).unwrap();
        assert_eq!(b.assignment.as_ref().map(count), Some(2));
        assert!(is_within(&kept, &minus(&kept, &b.assignment.unwrap())), "no partition twice");
        assert_eq!(g.state_name(), "Stable");
        // A stale epoch is fenced.
        assert_eq!(g.heartbeat(beat("b", 7, None), &topics, now).unwrap_err().0, ErrorCode::FENCED_MEMBER_EPOCH);
        // Leaving moves the epoch; a's next heartbeat takes everything back.
        g.heartbeat(beat("b", -1, None), &topics, now).unwrap();
        let a = g.heartbeat(beat("a", 3, Some(kept)), &topics, now).unwrap();
        assert_eq!((a.member_epoch, a.assignment.as_ref().map(count)), (4, Some(4)));
    }

    /// A static member that steps out (-2) keeps its partitions and the group its epoch; back
    /// under a new member id with its instance id, it has them again at once.
    #[test]
    fn a_static_member_steps_out_and_comes_back() {
        let id = Uuid::from_bytes([1; 16]);
        let topics: Assignable = [("t".to_string(), (id, 4))].into();
        let now = Instant::now();
        let mut g = ConsumerGroup::default();
        let static_beat =
            |member: &str, epoch, owned| Beat { instance_id: Some("i".to_string()), ..beat(member, epoch, owned) };
        let a = g.heartbeat(static_beat("a", 0, None), &topics, now).unwrap().assignment.unwrap();
        g.heartbeat(static_beat("a", 2, Some(a.clone())), &topics, now).unwrap();
        let b = g.heartbeat(beat("b", 0, None), &topics, now).unwrap();
        let a = g.heartbeat(static_beat("a", 2, Some(a)), &topics, now).unwrap().assignment.unwrap();
        g.heartbeat(static_beat("a", 2, Some(a.clone())), &topics, now).unwrap();
        let b = g.heartbeat(beat("b", b.member_epoch, Some(Owned::new())), &topics, now).unwrap();
        let owned_b = b.assignment.unwrap();
        assert_eq!((count(&a), count(&owned_b), g.state_name()), (2, 2, "Stable"));
        let epoch = g.epoch;

        g.heartbeat(static_beat("a", -2, None), &topics, now).unwrap();
        assert_eq!((g.members.len(), g.epoch), (2, epoch), "still a member, the same group epoch");
        let b = g.heartbeat(beat("b", epoch, Some(owned_b.clone())), &topics, now).unwrap();
        assert_eq!(b.assignment, None, "b gets none of a's partitions");
        // Back under a new member id: the same partitions at once, at the same epoch.
        let back = g.heartbeat(static_beat("a2", 0, None), &topics, now).unwrap();
        assert_eq!((back.member_epoch, back.assignment), (epoch, Some(a)));
        assert!(!g.members.contains_key("a"));
        // The instance id is taken again: not for another join, and the old member id is fenced.
        let refused = |g: &mut ConsumerGroup, beat| g.heartbeat(beat, &topics, now).unwrap_err().0;
        assert_eq!(refused(&mut g, static_beat("a3", 0, None)), ErrorCode::UNRELEASED_INSTANCE_ID);
        assert_eq!(refused(&mut g, static_beat("a", epoch, None)), ErrorCode::FENCED_INSTANCE_ID);
        // -1 leaves for good.
        g.heartbeat(static_beat("a2", -1, None), &topics, now).unwrap();
        assert_eq!((g.members.len(), g.epoch), (1, epoch + 1));
    }
}
