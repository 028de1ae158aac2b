//! The metadata task: reads Metadata for the topics the consumer needs (subscribed by name,
//! assigned, or every member's when it leads a classic group; every topic for a pattern)
//! every `metadata.max.age.ms`, and at once when a task asks (a leader unknown, an error that
//! says the metadata is stale), at most once per `retry.backoff.ms`.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::state::{stopping, Shared, Subscription};

/// What to ask Metadata for.
enum Ask {
    Nothing,
    /// Every topic (a pattern subscription).
    All,
    /// These topics; the first set may be created by the broker (subscribed by name, with
    /// `allow.auto.create.topics`), the second not.
    Topics(BTreeSet<String>, BTreeSet<String>),
}

fn ask(shared: &Shared) -> Ask {
    let state = shared.state();
    let mut others: BTreeSet<String> = state.assignment.keys().map(|tp| tp.topic.to_string()).collect();
    others.extend(state.group_topics.iter().cloned());
    match &state.subscription {
        Subscription::Pattern(..) => Ask::All,
        Subscription::Topics(topics) if shared.config.allow_auto_create_topics => {
            others.retain(|t| !topics.contains(t));
            Ask::Topics(topics.clone(), others)
        }
        Subscription::Topics(topics) => {
            others.extend(topics.iter().cloned());
            Ask::Topics(BTreeSet::new(), others)
        }
        _ if others.is_empty() => Ask::Nothing,
        _ => Ask::Topics(BTreeSet::new(), others),
    }
}

/// Whether a topic the consumer needs by name is not in the metadata yet, or is there with an
/// error (just created and not yet known to the broker asked, or not there at all): Metadata is asked again after
/// `retry.backoff.ms`, as Kafka's consumer asks again while a topic answers
/// UNKNOWN_TOPIC_OR_PARTITION, so that a group's leader sees the topic appear and assigns it.
fn unknown_topics(shared: &Shared) -> bool {
    let names: BTreeSet<String> = match ask(shared) {
        Ask::Topics(creatable, others) => creatable.into_iter().chain(others).collect(),
        Ask::Nothing | Ask::All => return false,
    };
    let metadata = shared.cluster.metadata();
    names
        .iter()
        .any(|t| !metadata.topics.get(t).is_some_and(|m| m.error == kwire::ErrorCode::NONE && !m.partitions.is_empty()))
}

pub(crate) async fn run(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    let max_age = shared.config.metadata_max_age.max(Duration::from_millis(100));
    let min_pause = shared.config.retry_backoff.max(Duration::from_millis(10));
    let mut last: Option<Instant> = None;
    loop {
        let notified = shared.wake.metadata.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        if stopping(&shutdown) {
            return;
        }
        let wanted = shared.state().metadata_wanted;
        let due = wanted || last.is_none_or(|at| at.elapsed() >= max_age);
        if due {
            if let Some(at) = last {
                let wait = min_pause.saturating_sub(at.elapsed());
                if !wait.is_zero() {
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = shutdown.changed() => continue,
                    }
                }
            }
            shared.state().metadata_wanted = false;
            let result = match ask(&shared) {
                Ask::Nothing => Ok(()),
                Ask::All => shared.cluster.refresh_all().await,
                Ask::Topics(creatable, others) => {
                    let mut result = Ok(());
                    if !creatable.is_empty() {
                        let topics: Vec<&str> = creatable.iter().map(String::as_str).collect();
                        result = shared.cluster.refresh_topics(&topics, true).await;
                    }
                    if !others.is_empty() && result.is_ok() {
                        let topics: Vec<&str> = others.iter().map(String::as_str).collect();
                        result = shared.cluster.refresh_topics(&topics, false).await;
                    }
                    result
                }
            };
            last = Some(Instant::now());
            match result {
                Ok(()) => {
                    if unknown_topics(&shared) {
                        shared.state().metadata_wanted = true;
                    }
                    shared.wake.fetch.notify_waiters();
                    shared.wake.group.notify_waiters();
                    shared.wake.positions.notify_waiters();
                }
                Err(e) => {
                    tracing::debug!(error = %e, "reading metadata failed");
                    shared.state().metadata_wanted = true;
                }
            }
        }
        let next = last.map_or(Duration::ZERO, |at| max_age.saturating_sub(at.elapsed()));
        let retry = if shared.state().metadata_wanted { min_pause } else { next };
        tokio::select! {
            _ = notified => {}
            _ = tokio::time::sleep(retry) => {}
            _ = shutdown.changed() => {}
        }
    }
}
