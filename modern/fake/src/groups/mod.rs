//! The group coordinator, after Kafka's `GroupMetadataManager` and `OffsetMetadataManager`: one
//! namespace of group ids, each naming one group of one kind ([`Group`]: classic, KIP-848
//! consumer or KIP-932 share), and, kept apart from the groups, the offsets committed under
//! each id (`offsets`) and the configs set on it (`configs`). An id taken by one kind is refused
//! to the others, except that an empty group gives way, as Kafka converts an empty classic
//! group to a consumer group and back.
//!
//! A new kind of group is one more [`Group`] variant: its module, its [`GroupKind`], and its
//! arm in `each_kind!`.

pub(crate) mod assignors;
pub(crate) mod classic;
pub(crate) mod configs;
pub(crate) mod consumer;
pub(crate) mod offsets;
pub(crate) mod share;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kwire::ErrorCode;

use self::classic::ClassicGroup;
use self::configs::{Configs, Settings};
use self::consumer::ConsumerGroup;
use self::offsets::Offsets;
use self::share::ShareGroup;

/// An error code and Kafka's message for it.
pub(crate) type Refusal = (ErrorCode, String);

/// The group a group id names.
#[derive(Debug)]
pub(crate) enum Group {
    /// JoinGroup, SyncGroup and Heartbeat's group.
    Classic(ClassicGroup),
    /// KIP-848's: ConsumerGroupHeartbeat's.
    Consumer(ConsumerGroup),
    /// KIP-932's: ShareGroupHeartbeat's.
    Share(ShareGroup),
}

/// `$body` with `$g` bound to the group inside `$group`, whatever its kind.
macro_rules! each_kind {
    ($group:expr, $g:ident => $body:expr) => {
        match $group {
            Group::Classic($g) => $body,
            Group::Consumer($g) => $body,
            Group::Share($g) => $body,
        }
    };
}

/// What every kind of group answers alike, whatever its protocol: for ListGroups, DeleteGroups,
/// the clock, and the tests' control.
pub(crate) trait GroupKind {
    /// Its type as ListGroups names it (`classic`, `consumer`, `share`).
    const TYPE: &'static str;
    /// Its protocol type as ListGroups names it.
    fn protocol_type(&self) -> &str;
    /// Kafka's name for its state.
    fn state_name(&self) -> &'static str;
    /// Its members' ids.
    fn member_ids(&self) -> Vec<String>;
    /// Whether it has no members: only then may DeleteGroups delete it, or another kind take
    /// its id.
    fn is_empty(&self) -> bool {
        self.member_ids().is_empty()
    }
    /// The clock's work at `now` (members past their timeouts removed, rounds past their
    /// deadline ended), with the group's configs.
    fn tick(&mut self, now: Instant, settings: &Settings) -> Ticked;
    /// Removes a member as its session timeout would; false if it is not one.
    fn remove_member(&mut self, member: &str, now: Instant) -> bool;
    /// Starts a rebalance (the tests' control); false where none can start.
    fn force_rebalance(&mut self, now: Instant) -> bool;
}

/// What the clock did to a group: whether anything changed, and the members it removed.
#[derive(Debug, Default)]
pub(crate) struct Ticked {
    pub changed: bool,
    pub gone: Vec<String>,
}

/// Members removed by the clock, and nothing else changed.
impl From<Vec<String>> for Ticked {
    fn from(gone: Vec<String>) -> Ticked {
        Ticked { changed: !gone.is_empty(), gone }
    }
}

fn type_of<K: GroupKind>(_: &K) -> &'static str {
    K::TYPE
}

impl Group {
    /// Its type as ListGroups names it.
    pub fn type_name(&self) -> &'static str {
        each_kind!(self, g => type_of(g))
    }

    pub fn protocol_type(&self) -> &str {
        each_kind!(self, g => g.protocol_type())
    }

    pub fn state_name(&self) -> &'static str {
        each_kind!(self, g => g.state_name())
    }

    pub fn member_ids(&self) -> Vec<String> {
        each_kind!(self, g => g.member_ids())
    }

    pub fn is_empty(&self) -> bool {
        each_kind!(self, g => g.is_empty())
    }

    fn tick(&mut self, now: Instant, settings: &Settings) -> Ticked {
        each_kind!(self, g => g.tick(now, settings))
    }

    pub fn remove_member(&mut self, member: &str, now: Instant) -> bool {
        each_kind!(self, g => g.remove_member(member, now))
    }

    pub fn force_rebalance(&mut self, now: Instant) -> bool {
        each_kind!(self, g => g.force_rebalance(now))
    }
}

/// Every group, with the offsets and configs kept under group ids.
#[derive(Debug)]
pub(crate) struct Groups {
    by_id: BTreeMap<String, Group>,
    offsets: Offsets,
    configs: Configs,
    /// Kafka's `group.initial.rebalance.delay.ms`, for new classic groups.
    initial_rebalance_delay: Duration,
}

impl Groups {
    pub fn new(initial_rebalance_delay: Duration) -> Groups {
        Groups {
            by_id: BTreeMap::new(),
            offsets: Offsets::default(),
            configs: Configs::default(),
            initial_rebalance_delay,
        }
    }

    pub fn get(&self, id: &str) -> Option<&Group> {
        self.by_id.get(id)
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Group> {
        self.by_id.get_mut(id)
    }

    /// Every group, by id.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Group)> {
        self.by_id.iter()
    }

    /// The classic group `id`, if it is one.
    pub fn classic(&self, id: &str) -> Option<&ClassicGroup> {
        match self.by_id.get(id) {
            Some(Group::Classic(g)) => Some(g),
            _ => None,
        }
    }

    /// The classic group `id`, if it is one, to change.
    pub fn classic_mut(&mut self, id: &str) -> Option<&mut ClassicGroup> {
        match self.by_id.get_mut(id) {
            Some(Group::Classic(g)) => Some(g),
            _ => None,
        }
    }

    /// A new, empty classic group under `id` (in place of the group that had it, if any): Kafka's
    /// "simple" group of a commit from outside any group, or a conversion.
    pub fn new_classic(&mut self, id: &str, now: Instant) -> &mut ClassicGroup {
        let group = Group::Classic(ClassicGroup::new(now, self.initial_rebalance_delay));
        self.by_id.insert(id.to_string(), group);
        self.classic_mut(id).expect("just inserted")
    }

    /// The classic group a JoinGroup joins: created for a new id, or taking the place of an
    /// empty consumer group (Kafka's online downgrade); a share group, or a consumer group with
    /// members (which Kafka would take classic members into), is INCONSISTENT_GROUP_PROTOCOL.
    pub fn classic_to_join(&mut self, id: &str, now: Instant) -> Result<&mut ClassicGroup, ErrorCode> {
        match self.by_id.get(id) {
            Some(Group::Classic(_)) => {}
            Some(Group::Consumer(g)) if g.is_empty() => {
                tracing::debug!(group = %id, "an empty consumer group converted to a classic group");
                self.new_classic(id, now);
            }
            Some(_) => return Err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL),
            None => {
                self.new_classic(id, now);
            }
        }
        Ok(self.classic_mut(id).expect("a classic group"))
    }

    /// The consumer group `id`, if it is one.
    pub fn consumer(&self, id: &str) -> Result<&ConsumerGroup, Refusal> {
        match self.by_id.get(id) {
            Some(Group::Consumer(g)) => Ok(g),
            Some(_) => Err(not_a(id, "consumer")),
            None => Err(not_found(id)),
        }
    }

    /// The consumer group a ConsumerGroupHeartbeat speaks to: created for a new id, or taking
    /// the place of an empty classic group; another kind is refused, as Kafka refuses it.
    pub fn consumer_to_join(&mut self, id: &str) -> Result<&mut ConsumerGroup, Refusal> {
        match self.by_id.get(id) {
            Some(Group::Consumer(_)) => {}
            Some(Group::Classic(g)) if g.is_empty() => {
                tracing::debug!(group = %id, "an empty classic group converted to a consumer group");
                self.by_id.insert(id.to_string(), Group::Consumer(ConsumerGroup::default()));
            }
            Some(_) => return Err(not_a(id, "consumer")),
            None => {
                self.by_id.insert(id.to_string(), Group::Consumer(ConsumerGroup::default()));
            }
        }
        match self.by_id.get_mut(id) {
            Some(Group::Consumer(g)) => Ok(g),
            _ => unreachable!("a consumer group"),
        }
    }

    /// The share group `id`, if it is one.
    pub fn share(&self, id: &str) -> Result<&ShareGroup, Refusal> {
        match self.by_id.get(id) {
            Some(Group::Share(g)) => Ok(g),
            Some(_) => Err(not_a(id, "share")),
            None => Err(not_found(id)),
        }
    }

    /// The share group `id`, created for a new id (ShareGroupHeartbeat, AlterShareGroupOffsets);
    /// another kind is refused, empty or not, as Kafka refuses it.
    pub fn share_or_create(&mut self, id: &str) -> Result<&mut ShareGroup, Refusal> {
        let group = self.by_id.entry(id.to_string()).or_insert_with(|| Group::Share(ShareGroup::default()));
        match group {
            Group::Share(g) => Ok(g),
            _ => Err(not_a(id, "share")),
        }
    }

    /// Deletes an empty group (DeleteGroups) with its offsets: GROUP_ID_NOT_FOUND or
    /// NON_EMPTY_GROUP otherwise.
    pub fn delete(&mut self, id: &str) -> Result<Group, ErrorCode> {
        match self.by_id.get(id) {
            None => Err(ErrorCode::GROUP_ID_NOT_FOUND),
            Some(group) if !group.is_empty() => Err(ErrorCode::NON_EMPTY_GROUP),
            Some(_) => {
                self.offsets.forget(id);
                Ok(self.by_id.remove(id).expect("found above"))
            }
        }
    }

    pub fn offsets(&self) -> &Offsets {
        &self.offsets
    }

    pub fn offsets_mut(&mut self) -> &mut Offsets {
        &mut self.offsets
    }

    pub fn configs(&self) -> &Configs {
        &self.configs
    }

    pub fn configs_mut(&mut self) -> &mut Configs {
        &mut self.configs
    }

    /// The clock's work on every group: (group id, members removed) of each that changed.
    pub fn tick(&mut self, now: Instant, defaults: &crate::config::FakeConfig) -> Vec<(String, Vec<String>)> {
        let mut changed = Vec::new();
        for (id, group) in self.by_id.iter_mut() {
            let settings = self.configs.settings(id, defaults);
            let ticked = group.tick(now, &settings);
            if ticked.changed || !ticked.gone.is_empty() {
                changed.push((id.clone(), ticked.gone));
            }
        }
        changed
    }
}

/// Kafka's refusal of a group id it does not know.
fn not_found(id: &str) -> Refusal {
    (ErrorCode::GROUP_ID_NOT_FOUND, format!("Group {id} not found."))
}

/// Kafka's refusal of a group id another kind of group has.
fn not_a(id: &str, kind: &str) -> Refusal {
    (ErrorCode::GROUP_ID_NOT_FOUND, format!("Group {id} is not a {kind} group."))
}
