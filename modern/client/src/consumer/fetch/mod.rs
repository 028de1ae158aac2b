//! Fetching: a source per broker (`source.rs`, kgo's design), each with its fetch session
//! (`session.rs`, KIP-227), turning answers into records (`decode.rs`). This module routes
//! partitions to brokers (the leader, or the replica it names under KIP-392) and starts a
//! source for every broker that has partitions to fetch.

mod decode;
pub(crate) mod session;
mod source;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use kwire_connection::cluster::Metadata;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::record::TopicPartition;
use super::state::{stopping, PartitionState, Pending, Shared, State};

/// Where a partition is fetched from now, and the leader it is checked against.
pub(crate) struct Route {
    pub node: i32,
    pub leader: i32,
    pub leader_epoch: i32,
    pub topic_id: kwire::Uuid,
}

/// The broker to fetch `tp` from: a preferred replica the leader named, while it lasts and is
/// in the metadata, else the leader. `None` while the metadata knows no leader.
pub(crate) fn route(metadata: &Metadata, tp: &TopicPartition, p: &PartitionState, now: Instant) -> Option<Route> {
    let topic = metadata.topics.get(&*tp.topic)?;
    let pm = topic.partition(tp.partition)?;
    if pm.leader < 0 || pm.error != kwire::ErrorCode::NONE {
        return None;
    }
    let node = match p.preferred_replica {
        Some((replica, until)) if until > now && metadata.brokers.contains_key(&replica) => replica,
        _ => pm.leader,
    };
    Some(Route { node, leader: pm.leader, leader_epoch: pm.leader_epoch, topic_id: topic.id })
}

/// Checks `tp` against the metadata's leader (KIP-320): a new leader, or a new epoch, sends a
/// partition that has read records to validation, dropping what it fetched ahead; one that
/// has not just follows. Returns whether it may be fetched from `route` now.
pub(crate) fn follow_leader(state: &mut State, tp: &TopicPartition, route: &Route) -> bool {
    let Some(p) = state.assignment.get_mut(tp) else { return false };
    let current = (route.leader, route.leader_epoch);
    match p.leader {
        None => p.leader = Some(current),
        Some(old) if old != current => {
            let read_some = p.position.is_some_and(|position| position.epoch.is_some());
            if p.in_flight.is_some() {
                // Its answer comes first; the check waits for it.
                return false;
            }
            if read_some && route.leader_epoch >= 0 {
                tracing::debug!(partition = %tp, ?old, ?current, "the leader changed: validating the position");
                state.drop_buffered(tp);
                if let Some(p) = state.assignment.get_mut(tp) {
                    p.await_position(Pending::Validate);
                }
                return false;
            }
            p.leader = Some(current);
        }
        Some(_) => {}
    }
    true
}

/// The nodes with partitions to fetch, and whether some partition has no known leader.
fn nodes(state: &State, metadata: &Metadata, now: Instant) -> (Vec<i32>, bool) {
    let mut nodes = Vec::new();
    let mut leaderless = false;
    for (tp, p) in &state.assignment {
        if p.revoking || p.pending != Pending::Nothing || p.fetch.is_none() {
            continue;
        }
        match route(metadata, tp, p, now) {
            Some(route) if !nodes.contains(&route.node) => nodes.push(route.node),
            Some(_) => {}
            None => leaderless = true,
        }
    }
    (nodes, leaderless)
}

/// Starts a source for every broker with partitions to fetch, as they appear, and asks for
/// metadata when a partition has no known leader.
pub(crate) async fn run(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    let mut sources: HashMap<i32, JoinHandle<()>> = HashMap::new();
    loop {
        let notified = shared.wake.fetch.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if stopping(&shutdown) {
            break;
        }
        let metadata = shared.cluster.metadata();
        let (nodes, leaderless) = nodes(&shared.state(), &metadata, Instant::now());
        if leaderless {
            shared.want_metadata();
        }
        for node in nodes {
            if sources.get(&node).is_none_or(JoinHandle::is_finished) {
                let task = source::run(shared.clone(), node, shutdown.clone());
                sources.insert(node, tokio::spawn(task));
            }
        }
        tokio::select! {
            _ = notified => {}
            _ = shutdown.changed() => {}
        }
    }
    // Each source closes its fetch session on the way out, within a second.
    for (_, source) in sources {
        let _ = source.await;
    }
}
