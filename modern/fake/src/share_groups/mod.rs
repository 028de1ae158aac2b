//! Share groups (KIP-932): members heartbeat their subscription and the coordinator assigns
//! every subscribed partition to them (`assignor`); records are handed out per record, not per
//! offset: each partition has a share-partition (`partition`) tracking which records are
//! acquired, by whom and how often, and each member fetches through a share session per node.
//! Unlike a consumer group there is no revocation: a member's assignment is its target at once,
//! and partitions may be shared.

mod assignor;
pub(crate) mod config;
mod partition;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use kwire::{ErrorCode, Uuid};

use crate::consumer_groups::{Owned, Refusal, Topics};
pub(crate) use config::{GroupConfigs, GROUP_CONFIGS};
pub(crate) use partition::{Limits, SharePartition};

/// Kafka's `group.share.heartbeat.interval.ms`.
pub(crate) const HEARTBEAT_INTERVAL_MS: i32 = 5_000;

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
    target: BTreeMap<String, Owned>,
    /// The subscribed topics as last assigned (name → id, partitions): a topic created or grown
    /// later moves the group's epoch.
    assigned_topics: Topics,
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
    /// Kafka's name for the group's state: a share group is stable as soon as it has members.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    /// One heartbeat: join (epoch 0), leave (-1), or keep going at the member's epoch.
    pub fn heartbeat(&mut self, beat: Beat, topics: &Topics, now: Instant) -> Result<Answer, Refusal> {
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

    /// The topics some member subscribes to that exist.
    fn subscribed_topics(&self, topics: &Topics) -> Topics {
        let names: BTreeSet<&String> = self.members.values().flat_map(|m| m.subscribed.iter()).collect();
        names.into_iter().filter_map(|n| Some((n.clone(), *topics.get(n)?))).collect()
    }

    fn assign(&mut self, topics: &Topics, subscribed: Topics) {
        let subscriptions = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.subscribed.iter().filter(|n| topics.contains_key(*n)).cloned().collect()))
            .collect();
        self.target = assignor::simple(&subscriptions, topics, &self.target);
        self.assigned_topics = subscribed;
        self.assignment_epoch = self.epoch;
    }

    /// Members silent for longer than `timeout`, removed; their ids.
    pub fn expire(&mut self, now: Instant, timeout: Duration) -> Vec<String> {
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

/// A member's share session with one node: the partitions it fetches there, and the epoch its
/// next request must carry.
#[derive(Debug, Default)]
pub(crate) struct Session {
    pub next_epoch: i32,
    pub partitions: BTreeSet<(Uuid, i32)>,
}

/// The epoch after `epoch` (it wraps to 1: 0 opens a session and -1 closes one).
pub(crate) fn next_epoch(epoch: i32) -> i32 {
    if epoch == i32::MAX {
        1
    } else {
        epoch + 1
    }
}

/// Every share group's state.
#[derive(Debug, Default)]
pub(crate) struct Shares {
    pub groups: BTreeMap<String, ShareGroup>,
    /// Configs set on groups (IncrementalAlterConfigs on GROUP resources), share group or not.
    pub configs: BTreeMap<String, BTreeMap<String, String>>,
    /// (group, topic id, partition) → its share-partition, from the group's first fetch of it.
    pub partitions: BTreeMap<(String, Uuid, i32), SharePartition>,
    /// (group, member, node) → its share session.
    pub sessions: BTreeMap<(String, String, i32), Session>,
}

impl Shares {
    /// The group's settings: its own configs over the cluster's defaults.
    pub fn settings(&self, group: &str, defaults: &crate::config::FakeConfig) -> GroupConfigs {
        GroupConfigs::of(self.configs.get(group), defaults)
    }

    /// A member is gone (left, expired, or fenced): its sessions close and what it held is
    /// released. True if a record became available.
    pub fn forget_member(&mut self, group: &str, member: &str) -> bool {
        self.sessions.retain(|(g, m, _), _| !(g == group && m == member));
        let mut released = false;
        for ((g, _, _), p) in self.partitions.iter_mut() {
            if g == group {
                released |= p.release_member(member);
            }
        }
        released
    }

    /// The clock's work: members past their session timeout leave (releasing what they held),
    /// and acquisition locks that ran out are let go. True if records became available.
    pub fn tick(&mut self, now: Instant, defaults: &crate::config::FakeConfig) -> bool {
        let mut changed = false;
        let ids: Vec<String> = self.groups.keys().cloned().collect();
        for id in ids {
            let settings = self.settings(&id, defaults);
            let gone = self.groups.get_mut(&id).map(|g| g.expire(now, settings.session_timeout)).unwrap_or_default();
            for member in gone {
                changed |= self.forget_member(&id, &member);
            }
        }
        let groups: BTreeSet<String> = self.partitions.keys().map(|(g, _, _)| g.clone()).collect();
        for group in groups {
            let limit = self.settings(&group, defaults).delivery_count_limit;
            for ((g, _, _), p) in self.partitions.iter_mut() {
                if *g == group {
                    changed |= p.expire_locks(now, limit);
                }
            }
        }
        changed
    }
}
