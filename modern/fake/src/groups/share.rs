//! Share groups (KIP-932): members heartbeat their subscription and the coordinator assigns
//! every subscribed partition to them (the `simple` assignor). Unlike a consumer group there is
//! no revocation: a member's assignment is its target at once, and partitions may be shared.
//! What the members are handed, record by record, is the share-partitions' business
//! (`crate::share_partitions`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use kwire::ErrorCode;

use super::assignors::{self, Assignable, Owned, Target};
use super::configs::Settings;
use super::{GroupKind, Refusal, Ticked};

/// One member of a share group.
#[derive(Debug, Clone)]
pub(crate) struct ShareMember {
    pub epoch: i32,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub subscribed: Vec<String>,
    pub assigned: Owned,
    /// The assignment last sent, so that an unchanged one is not sent again.
    sent: Option<Owned>,
    last_seen: Instant,
}

/// A share group's membership and assignment.
#[derive(Debug, Default)]
pub(crate) struct ShareGroup {
    pub epoch: i32,
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, ShareMember>,
    target: Target,
    /// The subscribed topics as last assigned (name → id, partitions): a topic created or grown
    /// later moves the group's epoch.
    assigned_topics: Assignable,
}

/// A ShareGroupHeartbeat's fields the coordinator uses.
pub(crate) struct Beat {
    pub member_id: String,
    pub member_epoch: i32,
    pub rack_id: Option<String>,
    pub subscribed: Option<Vec<String>>,
    pub client_id: String,
    pub client_host: String,
}

/// The coordinator's answer: the member's epoch, and its assignment when it changed.
#[derive(Debug)]
pub(crate) struct Answer {
    pub member_epoch: i32,
    pub assignment: Option<Owned>,
}

impl ShareGroup {
    /// One heartbeat: join (epoch 0), leave (-1), or keep going at the member's epoch.
    pub fn heartbeat(&mut self, beat: Beat, topics: &Assignable, now: Instant) -> Result<Answer, Refusal> {
        if beat.member_epoch == -1 {
            if self.members.remove(&beat.member_id).is_none() {
                return Err(unknown(&beat.member_id));
            }
            self.target.remove(&beat.member_id);
            self.epoch += 1;
            return Ok(Answer { member_epoch: -1, assignment: None });
        }
        let joining = beat.member_epoch == 0;
        if joining {
            if beat.subscribed.as_ref().is_none_or(Vec::is_empty) {
                return Err((
                    ErrorCode::INVALID_REQUEST,
                    "SubscribedTopicNames must be set in first request.".to_string(),
                ));
            }
            let member = ShareMember {
                epoch: 0,
                rack_id: None,
                client_id: beat.client_id.clone(),
                client_host: beat.client_host.clone(),
                subscribed: Vec::new(),
                assigned: Owned::new(),
                sent: None,
                last_seen: now,
            };
            self.members.insert(beat.member_id.clone(), member);
            self.epoch += 1;
        }
        let Some(member) = self.members.get_mut(&beat.member_id) else { return Err(unknown(&beat.member_id)) };
        if beat.member_epoch != member.epoch {
            return Err((
                ErrorCode::FENCED_MEMBER_EPOCH,
                format!("The share group member has a smaller member epoch ({}) than the one known by the group coordinator ({}). The member must abandon all its partitions and rejoin.", beat.member_epoch, member.epoch),
            ));
        }
        member.last_seen = now;
        if beat.rack_id.is_some() {
            member.rack_id = beat.rack_id;
        }
        if let Some(names) = beat.subscribed {
            if !joining && names != member.subscribed {
                self.epoch += 1;
            }
            member.subscribed = names;
        }
        let subscribed = self.subscribed_topics(topics);
        if subscribed != self.assigned_topics && self.assignment_epoch == self.epoch {
            self.epoch += 1;
        }
        if self.assignment_epoch < self.epoch {
            self.assign(topics, subscribed);
        }
        let member = self.members.get_mut(&beat.member_id).expect("a member");
        member.assigned = self.target.get(&beat.member_id).cloned().unwrap_or_default();
        member.epoch = self.assignment_epoch;
        let changed = joining || member.sent.as_ref() != Some(&member.assigned);
        let assignment = changed.then(|| member.assigned.clone());
        if changed {
            member.sent = Some(member.assigned.clone());
        }
        Ok(Answer { member_epoch: member.epoch, assignment })
    }

    /// NON_EMPTY_GROUP for a group with members, whose share-partitions' offsets cannot be
    /// altered or deleted (`id` is the group's, for Kafka's message).
    pub fn check_empty(&self, id: &str) -> Result<(), Refusal> {
        if self.members.is_empty() {
            Ok(())
        } else {
            Err((ErrorCode::NON_EMPTY_GROUP, format!("Share group {id} is not empty.")))
        }
    }

    /// The topics some member subscribes to that exist.
    fn subscribed_topics(&self, topics: &Assignable) -> Assignable {
        let names: BTreeSet<&String> = self.members.values().flat_map(|m| m.subscribed.iter()).collect();
        names.into_iter().filter_map(|n| Some((n.clone(), *topics.get(n)?))).collect()
    }

    fn assign(&mut self, topics: &Assignable, subscribed: Assignable) {
        let subscriptions = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.subscribed.iter().filter(|n| topics.contains_key(*n)).cloned().collect()))
            .collect();
        self.target = assignors::simple(&subscriptions, topics, &self.target);
        self.assigned_topics = subscribed;
        self.assignment_epoch = self.epoch;
    }

    /// Members silent for longer than `timeout`, removed; their ids.
    pub fn expire(&mut self, now: Instant, timeout: std::time::Duration) -> Vec<String> {
        let gone: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| now.duration_since(m.last_seen) > timeout)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &gone {
            tracing::debug!(member = %id, "share group member expired");
            self.remove(id);
        }
        gone
    }

    /// Removes a member (the others get a new assignment on their next heartbeat).
    pub fn remove(&mut self, id: &str) -> bool {
        let gone = self.members.remove(id).is_some();
        if gone {
            self.target.remove(id);
            self.epoch += 1;
        }
        gone
    }
}

fn unknown(member: &str) -> Refusal {
    (ErrorCode::UNKNOWN_MEMBER_ID, format!("Member {member} is not a member of the group."))
}

impl GroupKind for ShareGroup {
    const TYPE: &'static str = "share";

    fn protocol_type(&self) -> &str {
        "share"
    }

    /// A share group is stable as soon as it has members.
    fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    fn member_ids(&self) -> Vec<String> {
        self.members.keys().cloned().collect()
    }

    fn tick(&mut self, now: Instant, settings: &Settings) -> Ticked {
        self.expire(now, settings.session_timeout).into()
    }

    fn remove_member(&mut self, member: &str, _now: Instant) -> bool {
        self.remove(member)
    }

    /// A share group has no rebalance to force: members take their new assignment at once.
    fn force_rebalance(&mut self, _now: Instant) -> bool {
        false
    }
}
