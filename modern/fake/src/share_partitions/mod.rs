//! What share groups (KIP-932) are handed, record by record, as the partitions' leaders keep it
//! (Kafka's `SharePartitionManager`): for each (group, partition) a share-partition (`partition`)
//! tracking which records are acquired, by whom and how often, and each member's share session
//! with each node it fetches from.

mod partition;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use kwire::Uuid;

pub(crate) use partition::{Limits, SharePartition};

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

/// Every share-partition and share session.
#[derive(Debug, Default)]
pub(crate) struct SharePartitions {
    /// (group, topic id, partition) → its share-partition, from the group's first fetch of it.
    pub partitions: BTreeMap<(String, Uuid, i32), SharePartition>,
    /// (group, member, node) → its share session.
    pub sessions: BTreeMap<(String, String, i32), Session>,
}

impl SharePartitions {
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

    /// A group is deleted: its share-partitions' state and its sessions go with it.
    pub fn forget_group(&mut self, group: &str) {
        self.partitions.retain(|(g, _, _), _| g != group);
        self.sessions.retain(|(g, _, _), _| g != group);
    }

    /// Lets go of the records whose acquisition locks ran out, each group's records past its
    /// delivery count limit (`limit_of`) archived. True if records became available.
    pub fn expire_locks(&mut self, now: Instant, limit_of: impl Fn(&str) -> i16) -> bool {
        let mut changed = false;
        let groups: BTreeSet<String> = self.partitions.keys().map(|(g, _, _)| g.clone()).collect();
        for group in groups {
            let limit = limit_of(&group);
            for ((g, _, _), p) in self.partitions.iter_mut() {
                if *g == group {
                    changed |= p.expire_locks(now, limit);
                }
            }
        }
        changed
    }
}
