//! A member of a classic group, as Kafka's `AbstractCoordinator` and `ConsumerCoordinator`
//! are: JoinGroup (with KIP-394's member id round trip), the leader's assignment, SyncGroup,
//! heartbeats every `heartbeat.interval.ms`, LeaveGroup on close or when the application
//! stops polling for `max.poll.interval.ms`. Eager assignors revoke everything before
//! joining; cooperative ones (KIP-429) revoke only what the new assignment takes away, then
//! join again. Static members (KIP-345) send their `group.instance.id` and do not leave on
//! close.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kwire::messages::join_group_request::JoinGroupRequestProtocol;
use kwire::messages::leave_group_request::MemberIdentity;
use kwire::messages::sync_group_request::SyncGroupRequestAssignment;
use kwire::messages::{
    ApiKey, HeartbeatRequest, JoinGroupRequest, JoinGroupResponse, LeaveGroupRequest, SyncGroupRequest,
};
use kwire::{ErrorCode, GroupId, StrBytes};
use tokio::sync::watch;

use super::{backoff, fail, partition_counts, poll_timed_out, run_event, subscribed_topics, to_coordinator};
use crate::consumer::assignors::{self, protocol, Member, RebalanceProtocol};
use crate::consumer::config::AssignmentStrategy;
use crate::consumer::error::ConsumerError;
use crate::consumer::record::TopicPartition;
use crate::consumer::state::{stopping, Event, Pending, Shared, Subscription};

const PROTOCOL_TYPE: &str = "consumer";

/// What a heartbeat (or a sync) said to do next.
enum Next {
    Stay,
    /// Join again (a rebalance started, the subscription changed): partitions are kept.
    Rejoin,
    /// The generation ended: our partitions are someone else's now; join again.
    Lost {
        reset_member_id: bool,
    },
}

/// The member's state between calls.
struct Classic {
    shared: Arc<Shared>,
    group: String,
    member_id: String,
    generation: i32,
    protocol: RebalanceProtocol,
    joined: bool,
    need_join: bool,
    /// The topics and their partition counts when we last joined: a change means a
    /// rebalance (for the leader, of every member's topics).
    joined_topics: BTreeMap<String, i32>,
    leader: bool,
    /// Whether the leader watches `joined_topics`' partition counts: not after a static
    /// leader's rejoin that skipped the assignment (KIP-814), as Kafka's consumer keeps no
    /// metadata snapshot then.
    watch_partitions: bool,
    failures: u32,
}

pub(super) async fn run(shared: Arc<Shared>, mut shutdown: watch::Receiver<bool>) {
    let Some(group) = shared.config.group_id.clone() else { return };
    let protocol = assignors::rebalance_protocol(&shared.config.partition_assignment_strategy);
    let mut member = Classic {
        shared,
        group,
        member_id: String::new(),
        generation: -1,
        protocol,
        joined: false,
        need_join: true,
        joined_topics: BTreeMap::new(),
        leader: false,
        watch_partitions: false,
        failures: 0,
    };
    member.run(&mut shutdown).await;
    member.leave("the consumer is being closed").await;
}

impl Classic {
    async fn run(&mut self, shutdown: &mut watch::Receiver<bool>) {
        let mut next_beat = Instant::now();
        let shared = self.shared.clone();
        loop {
            let notified = shared.wake.group.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if stopping(shutdown) || self.shared.state().fatal.is_some() {
                return;
            }
            let subscribed = self.shared.state().subscription.is_group();
            if !subscribed {
                if self.joined {
                    self.give_up_all(shutdown, false).await;
                    self.leave("the consumer unsubscribed").await;
                }
                tokio::select! {
                    _ = notified => {}
                    _ = shutdown.changed() => {}
                }
                continue;
            }
            if self.joined && poll_timed_out(&self.shared) {
                tracing::warn!(
                    "consumer poll timeout has expired: the time between polls exceeded max.poll.interval.ms; leaving the group"
                );
                self.leave("consumer poll timeout has expired").await;
                self.wait_for_poll(shutdown).await;
                continue;
            }
            if !self.need_join && self.joined && self.metadata_changed() {
                tracing::info!("the subscribed topics or their partitions changed: rejoining");
                self.need_join = true;
            }
            if self.need_join || !self.joined {
                match self.join(shutdown).await {
                    Ok(()) => {
                        self.failures = 0;
                        next_beat = Instant::now() + self.shared.config.heartbeat_interval;
                    }
                    Err(e) if e.is_fatal() => {
                        fail(&self.shared, e);
                        return;
                    }
                    Err(e) => {
                        self.failures += 1;
                        let pause = backoff(&self.shared, self.failures);
                        tracing::debug!(error = %e, ?pause, "joining the group failed; retrying");
                        tokio::select! {
                            _ = tokio::time::sleep(pause) => {}
                            _ = shutdown.changed() => {}
                        }
                    }
                }
                continue;
            }
            let sleep = tokio::time::sleep_until(next_beat.into());
            tokio::select! {
                _ = sleep => {
                    next_beat = Instant::now() + self.shared.config.heartbeat_interval;
                    match self.heartbeat().await {
                        Ok(Next::Stay) => {}
                        Ok(Next::Rejoin) => self.need_join = true,
                        Ok(Next::Lost { reset_member_id }) => self.lost(reset_member_id),
                        Err(e) if e.is_fatal() => {
                            fail(&self.shared, e);
                            return;
                        }
                        Err(e) => {
                            tracing::debug!(error = %e, "heartbeat failed");
                            next_beat = Instant::now() + self.shared.config.retry_backoff;
                        }
                    }
                }
                _ = notified => {
                    if self.subscription_changed() {
                        self.need_join = true;
                    }
                }
                _ = shutdown.changed() => {}
            }
        }
    }

    /// Whether the topics we subscribe to are not those we joined with.
    fn subscription_changed(&self) -> bool {
        let topics = subscribed_topics(&self.shared);
        let joined: BTreeSet<&String> = self.joined_topics.keys().collect();
        if self.leader {
            // The leader's list holds every member's topics: ours must be among them.
            !topics.iter().all(|t| joined.contains(t))
        } else {
            topics.iter().collect::<BTreeSet<_>>() != joined
        }
    }

    /// Whether a pattern now matches other topics, or (the leader's watch only, as in Kafka's
    /// consumer, where only the leader keeps a metadata snapshot of what it assigned) a topic
    /// any member reads changed its partition count or appeared. A member that is not the
    /// leader rejoining when its own metadata arrives after its join would start a rebalance
    /// the leader did not need, and a restarted static member would lose its place.
    fn metadata_changed(&self) -> bool {
        if self.subscription_changed() {
            return true;
        }
        if !self.leader || !self.watch_partitions {
            return false;
        }
        let topics: BTreeSet<String> = self.joined_topics.keys().cloned().collect();
        let now = partition_counts(&self.shared, &topics);
        now.iter().any(|(t, n)| self.joined_topics.get(t).is_some_and(|old| *old >= 0 && old != n))
            || self.joined_topics.iter().any(|(t, n)| *n < 0 && now.contains_key(t))
    }

    /// Waits until the application polls again after a poll timeout.
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

    fn set_membership(&self, rebalancing: bool) {
        let mut state = self.shared.state();
        state.membership.member_id = self.member_id.clone();
        state.membership.generation = self.generation;
        state.membership.rebalancing = rebalancing;
    }

    /// The generation ended under us: what we own is lost, and we join again.
    fn lost(&mut self, reset_member_id: bool) {
        if reset_member_id {
            self.member_id.clear();
        }
        self.generation = -1;
        self.need_join = true;
        self.set_membership(true);
    }

    /// Before joining (Kafka's `onJoinPrepare`): partitions of an ended generation are lost;
    /// eager members revoke all; cooperative ones revoke only topics no longer subscribed.
    async fn prepare(&mut self, shutdown: &mut watch::Receiver<bool>) {
        let owned = self.shared.state().owned();
        if owned.is_empty() {
            return;
        }
        if self.generation < 0 || self.member_id.is_empty() {
            tracing::info!("giving away every partition as lost: the generation or member id was reset");
            self.through_poll(Event::Lost(owned.into_iter().collect()), shutdown).await;
            return;
        }
        match self.protocol {
            RebalanceProtocol::Eager => self.through_poll(Event::Revoked(owned.into_iter().collect()), shutdown).await,
            RebalanceProtocol::Cooperative => {
                let topics = subscribed_topics(&self.shared);
                let gone: Vec<TopicPartition> = owned.into_iter().filter(|tp| !topics.contains(&*tp.topic)).collect();
                if !gone.is_empty() {
                    self.through_poll(Event::Revoked(gone), shutdown).await;
                }
            }
        }
    }

    /// Runs a rebalance step through `poll`, heartbeating meanwhile.
    async fn through_poll(&mut self, event: Event, shutdown: &mut watch::Receiver<bool>) {
        let interval = self.shared.config.heartbeat_interval;
        let shared = self.shared.clone();
        let (group, member_id, generation) = (self.group.clone(), self.member_id.clone(), self.generation);
        run_event(&self.shared, event, interval, shutdown, || {
            let shared = shared.clone();
            let request = heartbeat_request(&shared, &group, &member_id, generation);
            async move {
                // The group is rebalancing: REBALANCE_IN_PROGRESS keeps the session alive.
                let _ = to_coordinator(&shared, request, |r| r.error_code).await;
            }
        })
        .await;
    }

    async fn give_up_all(&mut self, shutdown: &mut watch::Receiver<bool>, lost: bool) {
        let owned: Vec<TopicPartition> = self.shared.state().owned().into_iter().collect();
        if owned.is_empty() {
            return;
        }
        let event = if lost { Event::Lost(owned) } else { Event::Revoked(owned) };
        self.through_poll(event, shutdown).await;
    }

    /// One rebalance: prepare, JoinGroup (until the coordinator accepts us), the leader's
    /// assignment, SyncGroup, and the new assignment handed to `poll`.
    async fn join(&mut self, shutdown: &mut watch::Receiver<bool>) -> Result<(), ConsumerError> {
        self.prepare(shutdown).await;
        self.set_membership(true);
        self.need_join = false;
        let topics = subscribed_topics(&self.shared);
        if topics.is_empty() {
            // A pattern matching nothing yet, or topics not created: join anyway with none,
            // as Kafka's consumer does, and rejoin when they appear.
            tracing::debug!("joining with no topic to read yet");
        }
        let joined = loop {
            let response = self.join_group(&topics).await?;
            match response.error_code {
                ErrorCode::NONE => break response,
                ErrorCode::MEMBER_ID_REQUIRED => {
                    // KIP-394: join again with the id the coordinator gave.
                    self.member_id = response.member_id.as_str().to_owned();
                }
                ErrorCode::UNKNOWN_MEMBER_ID => {
                    self.member_id.clear();
                    self.generation = -1;
                    return Err(ConsumerError::Broker { context: "JoinGroup", code: response.error_code });
                }
                ErrorCode::ILLEGAL_GENERATION => {
                    self.generation = -1;
                    return Err(ConsumerError::Broker { context: "JoinGroup", code: response.error_code });
                }
                ErrorCode::FENCED_INSTANCE_ID => {
                    return Err(ConsumerError::FencedInstanceId(self.instance_id()));
                }
                code if code.is_retriable() || code == ErrorCode::REBALANCE_IN_PROGRESS => {
                    return Err(ConsumerError::Broker { context: "JoinGroup", code });
                }
                code => return Err(super::group_error(ApiKey::JoinGroup, code, None)),
            }
        };
        self.member_id = joined.member_id.as_str().to_owned();
        self.generation = joined.generation_id;
        self.leader = joined.leader.as_str() == self.member_id;
        let strategy = joined
            .protocol_name
            .as_ref()
            .and_then(|name| AssignmentStrategy::parse(name.as_str()))
            .filter(|s| self.shared.config.partition_assignment_strategy.contains(s))
            .ok_or_else(|| {
                ConsumerError::IllegalState(format!(
                    "the coordinator chose an assignor this member did not offer: {:?}",
                    joined.protocol_name
                ))
            })?;
        self.watch_partitions = self.leader && !joined.skip_assignment;
        let assignments = if self.leader && !joined.skip_assignment {
            self.assign(strategy, &joined)?
        } else {
            if self.leader {
                // KIP-814: a static leader rejoined and Kafka kept the group's assignment.
                // As Kafka's consumer, it takes every member's topics (for metadata and the
                // subscription check) but no snapshot of their partitions. Without the topics
                // its subscription check found its own missing and it rejoined at once, a
                // rebalance nobody needed: how the static-member test failed whenever the
                // restarted member had been the leader.
                let topics: BTreeSet<String> =
                    members_of(&joined)?.into_iter().flat_map(|m| m.subscription.topics).collect();
                self.joined_topics = topics.iter().map(|t| (t.clone(), -1)).collect();
                self.shared.state().group_topics = topics;
            } else {
                self.joined_topics = topics.iter().map(|t| (t.clone(), -1)).collect();
                let counts = partition_counts(&self.shared, &topics);
                self.joined_topics.extend(counts);
            }
            Vec::new()
        };
        let request = SyncGroupRequest {
            group_id: GroupId::from(self.group.as_str()),
            generation_id: self.generation,
            member_id: StrBytes::from(self.member_id.clone()),
            group_instance_id: self.shared.config.group_instance_id.clone().map(StrBytes::from),
            protocol_type: Some(StrBytes::from_static_str(PROTOCOL_TYPE)),
            protocol_name: Some(StrBytes::from_static_str(strategy.name())),
            assignments,
            ..Default::default()
        };
        let synced = to_coordinator(&self.shared, request, |r| r.error_code).await?;
        match synced.error_code {
            ErrorCode::NONE => {}
            ErrorCode::REBALANCE_IN_PROGRESS => {
                self.need_join = true;
                return Err(ConsumerError::RebalanceInProgress);
            }
            code @ (ErrorCode::UNKNOWN_MEMBER_ID | ErrorCode::ILLEGAL_GENERATION) => {
                self.lost(code == ErrorCode::UNKNOWN_MEMBER_ID);
                return Err(ConsumerError::Broker { context: "SyncGroup", code });
            }
            ErrorCode::FENCED_INSTANCE_ID => return Err(ConsumerError::FencedInstanceId(self.instance_id())),
            code if code.is_retriable() => {
                self.need_join = true;
                return Err(ConsumerError::Broker { context: "SyncGroup", code });
            }
            code => return Err(super::group_error(ApiKey::SyncGroup, code, None)),
        }
        let assigned = protocol::decode_assignment(&synced.assignment).map_err(|e| {
            ConsumerError::IllegalState(format!("the group's leader sent an assignment that does not decode: {e}"))
        })?;
        self.joined = true;
        self.set_membership(false);
        self.complete(assigned, shutdown).await;
        Ok(())
    }

    fn instance_id(&self) -> String {
        self.shared.config.group_instance_id.clone().unwrap_or_default()
    }

    async fn join_group(&self, topics: &BTreeSet<String>) -> Result<JoinGroupResponse, ConsumerError> {
        let owned: Vec<TopicPartition> = self.shared.state().owned().into_iter().collect();
        let protocols = self
            .shared
            .config
            .partition_assignment_strategy
            .iter()
            .map(|strategy| {
                let subscription = assignors::Subscription {
                    topics: topics.iter().cloned().collect(),
                    user_data: assignors::user_data(*strategy, self.generation),
                    owned: owned.clone(),
                    generation: self.generation,
                    rack: self.shared.config.client_rack.clone(),
                };
                JoinGroupRequestProtocol {
                    name: StrBytes::from_static_str(strategy.name()),
                    metadata: protocol::encode_subscription(&subscription),
                    ..Default::default()
                }
            })
            .collect();
        let config = &self.shared.config;
        let request = JoinGroupRequest {
            group_id: GroupId::from(self.group.as_str()),
            session_timeout_ms: millis(config.session_timeout),
            rebalance_timeout_ms: millis(config.max_poll_interval),
            member_id: StrBytes::from(self.member_id.clone()),
            group_instance_id: config.group_instance_id.clone().map(StrBytes::from),
            protocol_type: StrBytes::from_static_str(PROTOCOL_TYPE),
            protocols,
            reason: Some(StrBytes::from_static_str("rebalance")),
            ..Default::default()
        };
        Ok(to_coordinator(&self.shared, request, |r| r.error_code).await?)
    }

    /// The leader's part: every member's subscription through the chosen assignor.
    fn assign(
        &mut self,
        strategy: AssignmentStrategy,
        joined: &JoinGroupResponse,
    ) -> Result<Vec<SyncGroupRequestAssignment>, ConsumerError> {
        let members = members_of(joined)?;
        let topics: BTreeSet<String> = members.iter().flat_map(|m| m.subscription.topics.iter().cloned()).collect();
        let counts = partition_counts(&self.shared, &topics);
        // The leader watches every member's topics for changes.
        self.joined_topics = topics.iter().map(|t| (t.clone(), counts.get(t).copied().unwrap_or(-1))).collect();
        self.shared.state().group_topics = topics.clone();
        let assignment = assignors::assign(strategy, &counts, &members);
        tracing::debug!(?assignment, strategy = strategy.name(), "assigned as the group's leader");
        Ok(assignment
            .into_iter()
            .map(|(member, partitions)| SyncGroupRequestAssignment {
                member_id: StrBytes::from(member),
                assignment: protocol::encode_assignment(&partitions, None),
                ..Default::default()
            })
            .collect())
    }

    /// After SyncGroup (Kafka's `onJoinComplete`): eager members take the whole assignment;
    /// cooperative ones revoke what it no longer holds (then rejoin) and add what is new.
    async fn complete(&mut self, assigned: Vec<TopicPartition>, shutdown: &mut watch::Receiver<bool>) {
        let topics = subscribed_topics(&self.shared);
        let foreign = assigned.iter().any(|tp| !topics.contains(&*tp.topic) && !self.matches_pattern(&tp.topic));
        if foreign {
            tracing::info!("the assignment does not match the subscription: rejoining");
            self.need_join = true;
        }
        let owned = self.shared.state().owned();
        let assigned: BTreeSet<TopicPartition> = assigned.into_iter().collect();
        let revoked: Vec<TopicPartition> = owned.difference(&assigned).cloned().collect();
        let added: Vec<TopicPartition> = assigned.difference(&owned).cloned().collect();
        tracing::info!(?assigned, ?added, ?revoked, generation = self.generation, "assignment received");
        if !revoked.is_empty() {
            self.through_poll(Event::Revoked(revoked), shutdown).await;
            if self.protocol == RebalanceProtocol::Cooperative {
                self.need_join = true;
            }
        }
        self.shared.state().add(&added, Pending::Committed);
        self.shared.wake.positions.notify_waiters();
        self.shared.wake.metadata.notify_waiters();
        self.through_poll(Event::Assigned(added), shutdown).await;
    }

    fn matches_pattern(&self, topic: &str) -> bool {
        matches!(&self.shared.state().subscription, Subscription::Pattern(_, regex) if regex.is_match(topic))
    }

    async fn heartbeat(&mut self) -> Result<Next, ConsumerError> {
        let request = heartbeat_request(&self.shared, &self.group, &self.member_id, self.generation);
        let timeout = self.shared.config.request_timeout;
        let answer = tokio::time::timeout(timeout, to_coordinator(&self.shared, request, |r| r.error_code))
            .await
            .map_err(|_| ConsumerError::Timeout("heartbeat".into()))??;
        Ok(match answer.error_code {
            ErrorCode::NONE => Next::Stay,
            ErrorCode::REBALANCE_IN_PROGRESS => {
                tracing::info!("the group is rebalancing: rejoining");
                Next::Rejoin
            }
            code @ (ErrorCode::ILLEGAL_GENERATION | ErrorCode::UNKNOWN_MEMBER_ID) => {
                tracing::info!(%code, generation = self.generation, "the member's generation ended");
                Next::Lost { reset_member_id: code == ErrorCode::UNKNOWN_MEMBER_ID }
            }
            ErrorCode::FENCED_INSTANCE_ID => return Err(ConsumerError::FencedInstanceId(self.instance_id())),
            ErrorCode::GROUP_AUTHORIZATION_FAILED => return Err(ConsumerError::GroupAuthorization(self.group.clone())),
            code if code.is_retriable() => return Err(ConsumerError::Broker { context: "Heartbeat", code }),
            code => return Err(super::group_error(ApiKey::Heartbeat, code, None)),
        })
    }

    /// LeaveGroup, for a dynamic member in the group (a static member stays, so that it
    /// takes its place back without a rebalance when it restarts); either way the generation
    /// ends here.
    async fn leave(&mut self, reason: &str) {
        let dynamic = self.shared.config.group_instance_id.is_none();
        if self.joined && dynamic && !self.member_id.is_empty() {
            tracing::info!(member_id = %self.member_id, reason, "leaving the group");
            let request = LeaveGroupRequest {
                group_id: GroupId::from(self.group.as_str()),
                member_id: StrBytes::from(self.member_id.clone()),
                members: vec![MemberIdentity {
                    member_id: StrBytes::from(self.member_id.clone()),
                    reason: Some(StrBytes::from(reason.to_owned())),
                    ..Default::default()
                }],
                ..Default::default()
            };
            // v3 (KIP-345) names members in a list; before, the member id is at the top.
            let leave = super::to_coordinator_at(
                &self.shared,
                request,
                |r| r.error_code,
                |r, version| {
                    if version >= 3 {
                        r.member_id = StrBytes::default();
                    } else {
                        r.members.clear();
                    }
                },
            );
            match tokio::time::timeout(self.shared.config.request_timeout, leave).await {
                Ok(Ok(r)) if r.error_code == ErrorCode::NONE => {}
                Ok(Ok(r)) => tracing::debug!(code = %r.error_code, "LeaveGroup refused"),
                Ok(Err(e)) => tracing::debug!(error = %e, "LeaveGroup failed"),
                Err(_) => tracing::debug!("LeaveGroup timed out"),
            }
            self.member_id.clear();
        }
        self.joined = false;
        self.generation = -1;
        self.need_join = true;
        self.set_membership(false);
    }
}

fn heartbeat_request(shared: &Shared, group: &str, member_id: &str, generation: i32) -> HeartbeatRequest {
    HeartbeatRequest {
        group_id: GroupId::from(group),
        generation_id: generation,
        member_id: StrBytes::from(member_id.to_owned()),
        group_instance_id: shared.config.group_instance_id.clone().map(StrBytes::from),
        ..Default::default()
    }
}

pub(super) fn millis(duration: Duration) -> i32 {
    duration.as_millis().min(i32::MAX as u128) as i32
}

/// Every member's subscription in a JoinGroup response the leader received. Kafka's leader
/// fails the rebalance on a subscription it cannot read.
fn members_of(joined: &JoinGroupResponse) -> Result<Vec<Member>, ConsumerError> {
    joined
        .members
        .iter()
        .map(|m| {
            let subscription = protocol::decode_subscription(&m.metadata).map_err(|e| {
                ConsumerError::IllegalState(format!(
                    "member {} sent a subscription that does not decode: {e}",
                    m.member_id
                ))
            })?;
            Ok(Member {
                id: m.member_id.as_str().to_owned(),
                instance_id: m.group_instance_id.as_ref().map(|i| i.as_str().to_owned()),
                subscription,
            })
        })
        .collect()
}
