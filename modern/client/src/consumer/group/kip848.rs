//! A member of a KIP-848 consumer group (`group.protocol=consumer`), as Kafka's
//! `ConsumerMembershipManager` and `ConsumerHeartbeatRequestManager` are: the member picks
//! its id, ConsumerGroupHeartbeat carries its subscription (names, or a regular expression the
//! broker evaluates) and what it owns, and the coordinator answers with its epoch and target
//! assignment. The member reconciles: revokes what the target drops (through `poll`, so the
//! listener commits), then takes what it adds, then reports what it owns; heartbeats go on
//! meanwhile. FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID lose the partitions and rejoin at
//! epoch 0; leaving is epoch -1 (-2 for a static member, which keeps its place).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kwire::messages::consumer_group_heartbeat_request::TopicPartitions;
use kwire::messages::{ApiKey, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use kwire::{ErrorCode, GroupId, StrBytes, TopicName, Uuid};
use tokio::sync::watch;

use super::classic::millis;
use super::{backoff, fail, poll_timed_out, to_coordinator};
use crate::consumer::error::ConsumerError;
use crate::consumer::record::TopicPartition;
use crate::consumer::state::{stopping, Event, Pending, Shared, Subscription};

/// The epoch a dynamic member leaves with, and a static one (which keeps its place).
const LEAVE_EPOCH: i32 = -1;
const LEAVE_STATIC_EPOCH: i32 = -2;

/// What the member last told the coordinator, so that a heartbeat sends only what changed.
#[derive(Default, Clone, PartialEq, Eq)]
struct Sent {
    names: Option<Vec<String>>,
    regex: Option<String>,
    owned: Option<BTreeSet<TopicPartition>>,
}

type Reconcile = Pin<Box<dyn Future<Output = Reconciled> + Send>>;

/// What a reconciliation ended with.
struct Reconciled {
    owned: BTreeSet<TopicPartition>,
    /// Target partitions whose topic id the metadata did not know yet.
    unresolved: bool,
}

struct Member {
    shared: Arc<Shared>,
    group: String,
    member_id: String,
    epoch: i32,
    joined: bool,
    interval: Duration,
    /// Send every field (joining, or after a failure) rather than only what changed.
    full: bool,
    sent: Sent,
    owned: BTreeSet<TopicPartition>,
    /// The coordinator's last target, by topic id, and the one last reconciled.
    target: Option<BTreeSet<(Uuid, i32)>>,
    reconciled: Option<BTreeSet<(Uuid, i32)>>,
    failures: u32,
}

pub(super) async fn run(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    let Some(group) = shared.config.group_id.clone() else { return };
    let mut member = Member {
        shared,
        group,
        member_id: new_member_id(),
        epoch: 0,
        joined: false,
        interval: Duration::from_secs(5),
        full: true,
        sent: Sent::default(),
        owned: BTreeSet::new(),
        target: None,
        reconciled: None,
        failures: 0,
    };
    member.run(&mut shutdown).await;
    member.leave().await;
}

/// A member id as Kafka's consumer makes one: a random UUID in Kafka's base64 form.
fn new_member_id() -> String {
    use base64::Engine;
    let bytes: [u8; 16] = std::array::from_fn(|_| fastrand::u8(..));
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl Member {
    async fn run(&mut self, shutdown: &mut watch::Receiver<bool>) {
        let mut next_beat = Instant::now();
        let mut reconcile: Option<Reconcile> = None;
        let shared = self.shared.clone();
        loop {
            let notified = shared.wake.group.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if stopping(shutdown) || self.shared.state().fatal.is_some() {
                return;
            }
            if !self.shared.state().subscription.is_group() {
                if self.joined {
                    reconcile = None;
                    self.release(false, shutdown).await;
                    self.leave().await;
                }
                tokio::select! {
                    _ = notified => {}
                    _ = shutdown.changed() => {}
                }
                continue;
            }
            if self.joined && poll_timed_out(&self.shared) {
                tracing::warn!("consumer poll timeout has expired: leaving the group until the next poll");
                reconcile = None;
                self.leave().await;
                self.wait_for_poll(shutdown).await;
                // Rejoining: what was owned is someone else's by now.
                self.release(true, shutdown).await;
                next_beat = Instant::now();
                continue;
            }
            if self.target.is_some() && self.target != self.reconciled && reconcile.is_none() {
                let target = self.target.clone().unwrap_or_default();
                self.reconciled = Some(target.clone());
                reconcile = Some(Box::pin(reconcile_to(self.shared.clone(), self.owned.clone(), target)));
            }
            let force = self.full || self.subscription_changed() || self.sent.owned.as_ref() != Some(&self.owned);
            if force || Instant::now() >= next_beat {
                match self.heartbeat().await {
                    Ok(()) => {
                        self.failures = 0;
                        next_beat = Instant::now() + self.interval;
                    }
                    Err(Beat::Fenced(code)) => {
                        tracing::info!(%code, epoch = self.epoch, "fenced from the group: rejoining at epoch 0");
                        reconcile = None;
                        self.release(true, shutdown).await;
                        next_beat = Instant::now();
                        continue;
                    }
                    Err(Beat::Fatal(e)) => {
                        fail(&self.shared, e);
                        return;
                    }
                    Err(Beat::Retry(why)) => {
                        self.failures += 1;
                        self.full = true;
                        let pause = backoff(&self.shared, self.failures);
                        tracing::debug!(why, ?pause, "heartbeat failed; retrying");
                        next_beat = Instant::now() + pause;
                    }
                }
                // A change to send right away is sent by the next turn; the pause above (or
                // the interval) bounds how often.
                if !self.full && self.failures == 0 {
                    continue;
                }
            }
            let sleep = tokio::time::sleep_until(next_beat.into());
            let reconciling = async {
                match reconcile.as_mut() {
                    Some(future) => future.await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = sleep => {}
                _ = notified => {}
                done = reconciling => {
                    reconcile = None;
                    self.owned = done.owned;
                    if done.unresolved {
                        // Try again once the metadata knows the topics.
                        self.reconciled = None;
                        next_beat = next_beat.min(Instant::now() + self.shared.config.retry_backoff.max(Duration::from_millis(100)));
                    }
                }
                _ = shutdown.changed() => {}
            }
        }
    }

    fn subscription_changed(&self) -> bool {
        let (names, regex) = self.subscription();
        self.sent.names != names.clone().map(|n| n.into_iter().collect()) && names.is_some()
            || self.sent.regex != regex && regex.is_some()
    }

    /// The subscription as ConsumerGroupHeartbeat carries it: names, or the pattern as given
    /// (the broker evaluates it, KIP-848).
    fn subscription(&self) -> (Option<Vec<String>>, Option<String>) {
        match &self.shared.state().subscription {
            Subscription::Topics(topics) => (Some(topics.iter().cloned().collect()), None),
            Subscription::Pattern(raw, _) => (None, Some(raw.clone())),
            _ => (None, None),
        }
    }

    async fn wait_for_poll(&mut self, shutdown: &mut watch::Receiver<bool>) {
        let since = super::last_poll(&self.shared);
        let shared = self.shared.clone();
        loop {
            let notified = shared.wake.group.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if stopping(shutdown) || super::last_poll(&self.shared) != since {
                return;
            }
            tokio::select! {
                _ = notified => {}
                _ = shutdown.changed() => {}
            }
        }
    }

    /// Gives up everything owned (lost after fencing, else revoked) and starts over at epoch 0.
    async fn release(&mut self, lost: bool, shutdown: &mut watch::Receiver<bool>) {
        let owned: Vec<TopicPartition> = self.shared.state().owned().into_iter().collect();
        if !owned.is_empty() {
            let event = if lost { Event::Lost(owned) } else { Event::Revoked(owned) };
            let done = self.shared.post(event);
            tokio::select! {
                _ = done => {}
                _ = shutdown.changed() => {}
            }
        }
        self.owned.clear();
        self.epoch = 0;
        self.joined = false;
        self.full = true;
        self.sent = Sent::default();
        self.target = None;
        self.reconciled = None;
        self.set_membership();
    }

    fn set_membership(&self) {
        let mut state = self.shared.state();
        state.membership.member_id = self.member_id.clone();
        state.membership.generation = if self.joined { self.epoch } else { -1 };
        state.membership.rebalancing = false;
    }

    fn request(&self) -> (ConsumerGroupHeartbeatRequest, Sent) {
        let config = &self.shared.config;
        let (names, regex) = self.subscription();
        let mut sent = self.sent.clone();
        let mut request = ConsumerGroupHeartbeatRequest {
            group_id: GroupId::from(self.group.as_str()),
            member_id: StrBytes::from(self.member_id.clone()),
            member_epoch: self.epoch,
            ..Default::default()
        };
        if self.full {
            request.instance_id = config.group_instance_id.clone().map(StrBytes::from);
            request.rack_id = config.client_rack.clone().map(StrBytes::from);
            request.rebalance_timeout_ms = millis(config.max_poll_interval);
            request.server_assignor = config.group_remote_assignor.clone().map(StrBytes::from);
        }
        let names_now: Option<Vec<String>> = names.map(|n| n.into_iter().collect());
        if self.full || (names_now.is_some() && sent.names != names_now) {
            // Topic names, or none beside a pattern.
            let list = names_now.clone().unwrap_or_default();
            request.subscribed_topic_names = Some(list.iter().map(|t| TopicName::from(t.as_str())).collect());
            sent.names = Some(list);
        }
        if self.full || (regex.is_some() && sent.regex != regex) {
            // An empty pattern clears one sent before.
            let pattern = regex.clone().unwrap_or_default();
            if regex.is_some() || sent.regex.is_some() {
                request.subscribed_topic_regex = Some(StrBytes::from(pattern.clone()));
            }
            sent.regex = regex;
        }
        if self.full || sent.owned.as_ref() != Some(&self.owned) {
            let metadata = self.shared.cluster.metadata();
            let mut by_topic: BTreeMap<Uuid, Vec<i32>> = BTreeMap::new();
            for tp in &self.owned {
                if let Some(id) = metadata.topic_id(&tp.topic) {
                    by_topic.entry(id).or_default().push(tp.partition);
                }
            }
            request.topic_partitions = Some(
                by_topic
                    .into_iter()
                    .map(|(topic_id, partitions)| TopicPartitions {
                        topic_id,
                        partitions: partitions.into(),
                        ..Default::default()
                    })
                    .collect(),
            );
            sent.owned = Some(self.owned.clone());
        }
        (request, sent)
    }

    async fn heartbeat(&mut self) -> Result<(), Beat> {
        let (request, sent) = self.request();
        let timeout = self.shared.config.request_timeout;
        let answer = tokio::time::timeout(timeout, to_coordinator(&self.shared, request, |r| r.error_code)).await;
        let response: ConsumerGroupHeartbeatResponse = match answer {
            Err(_) => return Err(Beat::Retry("timed out".into())),
            Ok(Err(e)) if e.is_retriable() => return Err(Beat::Retry(e.to_string())),
            Ok(Err(e)) => return Err(Beat::Fatal(e.into())),
            Ok(Ok(response)) => response,
        };
        let message = response.error_message.as_ref().map(|m| m.as_str().to_owned());
        match response.error_code {
            ErrorCode::NONE => {}
            code @ (ErrorCode::FENCED_MEMBER_EPOCH | ErrorCode::UNKNOWN_MEMBER_ID) => return Err(Beat::Fenced(code)),
            ErrorCode::UNRELEASED_INSTANCE_ID => {
                let id = self.shared.config.group_instance_id.clone().unwrap_or_default();
                return Err(Beat::Fatal(ConsumerError::UnreleasedInstanceId(id)));
            }
            ErrorCode::FENCED_INSTANCE_ID => {
                let id = self.shared.config.group_instance_id.clone().unwrap_or_default();
                return Err(Beat::Fatal(ConsumerError::FencedInstanceId(id)));
            }
            ErrorCode::GROUP_AUTHORIZATION_FAILED => {
                return Err(Beat::Fatal(ConsumerError::GroupAuthorization(self.group.clone())))
            }
            code if code.is_retriable() => return Err(Beat::Retry(code.to_string())),
            code => return Err(Beat::Fatal(super::group_error(ApiKey::ConsumerGroupHeartbeat, code, message))),
        }
        if let Some(id) = response.member_id.as_ref().filter(|id| !id.as_str().is_empty()) {
            self.member_id = id.as_str().to_owned();
        }
        self.epoch = response.member_epoch;
        self.joined = true;
        self.full = false;
        self.sent = sent;
        if response.heartbeat_interval_ms > 0 {
            self.interval = Duration::from_millis(response.heartbeat_interval_ms as u64);
        }
        if let Some(assignment) = response.assignment {
            let target: BTreeSet<(Uuid, i32)> = assignment
                .topic_partitions
                .iter()
                .flat_map(|t| t.partitions.iter().map(move |p| (t.topic_id, p)))
                .collect();
            self.target = Some(target);
        }
        self.set_membership();
        Ok(())
    }

    /// Leaves the group (epoch -1), or, for a static member, says it is going away for now
    /// (epoch -2: it keeps its assignment until its session times out).
    async fn leave(&mut self) {
        if !self.joined {
            return;
        }
        let epoch = if self.shared.config.group_instance_id.is_some() { LEAVE_STATIC_EPOCH } else { LEAVE_EPOCH };
        let request = ConsumerGroupHeartbeatRequest {
            group_id: GroupId::from(self.group.as_str()),
            member_id: StrBytes::from(self.member_id.clone()),
            member_epoch: epoch,
            instance_id: self.shared.config.group_instance_id.clone().map(StrBytes::from),
            ..Default::default()
        };
        let leave = to_coordinator(&self.shared, request, |r| r.error_code);
        match tokio::time::timeout(self.shared.config.request_timeout, leave).await {
            Ok(Ok(r)) if r.error_code == ErrorCode::NONE => {
                tracing::info!(member_id = %self.member_id, "left the group")
            }
            Ok(Ok(r)) => tracing::debug!(code = %r.error_code, "leaving the group was refused"),
            Ok(Err(e)) => tracing::debug!(error = %e, "leaving the group failed"),
            Err(_) => tracing::debug!("leaving the group timed out"),
        }
        self.joined = false;
        self.epoch = 0;
        self.full = true;
        self.sent = Sent::default();
        self.set_membership();
    }
}

enum Beat {
    Retry(String),
    Fenced(ErrorCode),
    Fatal(ConsumerError),
}

/// Moves from `owned` to `target` through `poll`: revoked partitions first (the listener
/// commits them), then the new ones.
async fn reconcile_to(
    shared: Arc<Shared>,
    owned: BTreeSet<TopicPartition>,
    target: BTreeSet<(Uuid, i32)>,
) -> Reconciled {
    let (mut resolved, mut unresolved) = resolve(&shared, &target);
    if unresolved {
        if let Err(e) = shared.cluster.refresh_all().await {
            tracing::debug!(error = %e, "reading metadata for the assigned topics failed");
        }
        (resolved, unresolved) = resolve(&shared, &target);
    }
    let revoked: Vec<TopicPartition> = owned.difference(&resolved).cloned().collect();
    let mut now_owned = owned.clone();
    if !revoked.is_empty() {
        tracing::info!(?revoked, "revoking partitions the coordinator reassigns");
        let _ = shared.post(Event::Revoked(revoked.clone())).await;
        for tp in &revoked {
            now_owned.remove(tp);
        }
    }
    let added: Vec<TopicPartition> = resolved.difference(&now_owned).cloned().collect();
    if !added.is_empty() || owned.is_empty() {
        tracing::info!(?added, "partitions assigned");
        shared.state().add(&added, Pending::Committed);
        shared.wake.positions.notify_waiters();
        shared.wake.metadata.notify_waiters();
        let _ = shared.post(Event::Assigned(added.clone())).await;
        now_owned.extend(added);
    }
    Reconciled { owned: now_owned, unresolved }
}

/// The target's partitions by name, and whether some topic id is not in the metadata.
fn resolve(shared: &Shared, target: &BTreeSet<(Uuid, i32)>) -> (BTreeSet<TopicPartition>, bool) {
    let metadata = shared.cluster.metadata();
    let names: BTreeMap<Uuid, Arc<str>> =
        metadata.topics.values().map(|t| (t.id, Arc::from(t.name.as_str()))).collect();
    let mut unresolved = false;
    let mut resolved = BTreeSet::new();
    for (id, partition) in target {
        match names.get(id) {
            Some(name) => {
                resolved.insert(TopicPartition { topic: name.clone(), partition: *partition });
            }
            None => unresolved = true,
        }
    }
    (resolved, unresolved)
}
