//! The server-side assignors, each a pure function from the members' subscriptions and the
//! topics to a target assignment: KIP-848's `uniform` (the default) and `range` for consumer
//! groups, KIP-932's `simple` for share groups. Those that keep what a member had are given the
//! previous target.

mod range;
mod simple;
mod uniform;

use std::collections::{BTreeMap, BTreeSet};

use kwire::Uuid;

pub(crate) use range::range;
pub(crate) use simple::simple;
pub(crate) use uniform::uniform;

/// The assignors of consumer groups (Kafka's `group.consumer.assignors` by default), the first
/// the default.
pub(crate) const CONSUMER_ASSIGNORS: [&str; 2] = ["uniform", "range"];

/// What a member owns or is given: topic id → partitions.
pub(crate) type Owned = BTreeMap<Uuid, BTreeSet<i32>>;

/// The topics a group can be assigned: name → (id, partitions).
pub(crate) type Assignable = BTreeMap<String, (Uuid, i32)>;

/// What each member subscribes to: member id → the names of existing topics.
pub(crate) type Subscriptions = BTreeMap<String, BTreeSet<String>>;

/// A target assignment: member id → what it is given.
pub(crate) type Target = BTreeMap<String, Owned>;

/// What `a` holds that `b` does not.
pub(crate) fn minus(a: &Owned, b: &Owned) -> Owned {
    a.iter()
        .filter_map(|(t, ps)| {
            let left: BTreeSet<i32> = ps.iter().filter(|p| !b.get(t).is_some_and(|o| o.contains(p))).copied().collect();
            (!left.is_empty()).then_some((*t, left))
        })
        .collect()
}

/// What `a` and `b` both hold.
pub(crate) fn intersect(a: &Owned, b: &Owned) -> Owned {
    minus(a, &minus(a, b))
}

/// Whether `b` holds all that `a` does.
pub(crate) fn is_within(a: &Owned, b: &Owned) -> bool {
    minus(a, b).is_empty()
}
