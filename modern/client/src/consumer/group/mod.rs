//! Group membership: the classic protocol (`classic.rs`: JoinGroup, SyncGroup, Heartbeat,
//! LeaveGroup, client-side assignors, static members) or KIP-848's (`kip848.rs`:
//! ConsumerGroupHeartbeat, the coordinator assigns). Either runs as one task that hands
//! rebalance steps to `poll` as [`Event`]s, so the application's listener runs on its own task
//! with the consumer at hand, and waits for them while it keeps heartbeating.

mod classic;
mod kip848;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kwire::messages::{ApiKey, ApiRequest};
use kwire::ErrorCode;
use kwire_connection::CoordinatorType;
use tokio::sync::watch;

use super::config::GroupProtocol;
use super::error::ConsumerError;
use super::state::{stopping, Event, Shared, Subscription};

/// Runs the member of `shared`'s group until shutdown, then leaves as Kafka's consumer does on
/// close (a static member stays, KIP-345).
pub(crate) async fn run(shared: Arc<Shared>, shutdown: watch::Receiver<bool>) {
    match shared.config.group_protocol {
        GroupProtocol::Classic => classic::run(shared, shutdown).await,
        GroupProtocol::Consumer => kip848::run(shared, shutdown).await,
    }
}

/// The topics a member subscribes to now: by name, or every topic of the metadata the
/// pattern matches, internal ones excluded (`exclude.internal.topics`).
pub(crate) fn subscribed_topics(shared: &Shared) -> BTreeSet<String> {
    let subscription = shared.state().subscription.clone();
    match subscription {
        Subscription::Topics(topics) => topics,
        Subscription::Pattern(_, regex) => {
            let metadata = shared.cluster.metadata();
            metadata
                .topics
                .values()
                .filter(|t| t.error == ErrorCode::NONE)
                .filter(|t| !(t.is_internal && shared.config.exclude_internal_topics))
                .filter(|t| regex.is_match(&t.name))
                .map(|t| t.name.clone())
                .collect()
        }
        Subscription::None | Subscription::Assigned => BTreeSet::new(),
    }
}

/// The partition count of each of `topics` the metadata knows.
pub(crate) fn partition_counts(shared: &Shared, topics: &BTreeSet<String>) -> BTreeMap<String, i32> {
    let metadata = shared.cluster.metadata();
    topics
        .iter()
        .filter_map(|t| {
            let topic = metadata.topics.get(t).filter(|m| m.error == ErrorCode::NONE)?;
            Some((t.clone(), topic.partitions.len() as i32))
        })
        .collect()
}

/// Sends `request` to the group's coordinator: an answer whose error says the coordinator
/// moved is retried at the new one (by `Cluster::with_coordinator`); other answers come back
/// for the caller to read.
pub(crate) async fn to_coordinator<R>(
    shared: &Shared,
    request: R,
    error_of: fn(&R::Response) -> ErrorCode,
) -> Result<R::Response, kwire_connection::Error>
where
    R: ApiRequest + Clone,
{
    to_coordinator_at(shared, request, error_of, |_, _| {}).await
}

/// [`to_coordinator`], with `adapt` fitting the request to the version the coordinator speaks
/// (a field that moved between versions).
pub(crate) async fn to_coordinator_at<R>(
    shared: &Shared,
    request: R,
    error_of: fn(&R::Response) -> ErrorCode,
    adapt: fn(&mut R, i16),
) -> Result<R::Response, kwire_connection::Error>
where
    R: ApiRequest + Clone,
{
    let (Some(cluster), Some(group)) = (&shared.coordinator, &shared.config.group_id) else {
        return Err(kwire_connection::Error::Routing("no group.id".into()));
    };
    cluster
        .with_coordinator(CoordinatorType::Group, group, |client| {
            let mut request = request.clone();
            async move {
                let version = client.version_of(R::API).ok_or(kwire_connection::Error::NoCommonVersion(R::API))?;
                adapt(&mut request, version);
                let response = client.send_at(request, version).await?;
                let code = error_of(&response);
                if matches!(code, ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_NOT_AVAILABLE) {
                    return Err(kwire_connection::Error::Broker { api: R::API, code, message: None });
                }
                Ok(response)
            }
        })
        .await
}

/// Posts `event` for `poll` and waits until it ran, calling `beat` every `interval` meanwhile
/// (a listener may take longer than the session timeout). Returns early on shutdown.
pub(crate) async fn run_event<F, Fut>(
    shared: &Shared,
    event: Event,
    interval: Duration,
    shutdown: &mut watch::Receiver<bool>,
    mut beat: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut done = shared.post(event);
    loop {
        if stopping(shutdown) {
            return;
        }
        tokio::select! {
            _ = &mut done => return,
            _ = tokio::time::sleep(interval) => beat().await,
            _ = shutdown.changed() => {}
        }
    }
}

/// Whether the application stopped calling `poll` for longer than `max.poll.interval.ms`.
pub(crate) fn poll_timed_out(shared: &Shared) -> bool {
    let state = shared.state();
    state.events.is_empty() && state.last_poll.elapsed() > shared.config.max_poll_interval
}

/// When `poll` last started.
pub(crate) fn last_poll(shared: &Shared) -> Instant {
    shared.state().last_poll
}

/// Records an error that ends the membership, for `poll` to raise.
pub(crate) fn fail(shared: &Shared, error: ConsumerError) {
    tracing::error!(error = %error, "the consumer left its group for good");
    shared.state().fatal.get_or_insert(error);
    shared.wake.poll.notify_waiters();
}

/// The pause after `failures` failures in a row.
pub(crate) fn backoff(shared: &Shared, failures: u32) -> Duration {
    let base = shared.config.retry_backoff.max(Duration::from_millis(10));
    base.saturating_mul(1 << failures.min(8)).min(shared.config.retry_backoff_max.max(base))
}

/// A group answer's error as the consumer reports it when it cannot go on.
pub(crate) fn group_error(api: ApiKey, code: ErrorCode, message: Option<String>) -> ConsumerError {
    let _ = api;
    ConsumerError::Group { code, message }
}
