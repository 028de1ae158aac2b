//! Offsets committed to the group's coordinator: OffsetCommit, sent in order by one task (so
//! a later commit never lands before an earlier one, and committed offsets never move
//! backwards behind the application's back), and OffsetFetch for positions (Kafka's
//! `ConsumerCoordinator` commit and fetch paths, with its error handling).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kwire::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
use kwire::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use kwire::messages::{ApiKey, OffsetCommitRequest, OffsetFetchRequest};
use kwire::{ErrorCode, GroupId, StrBytes, TopicName, Uuid};
use kwire_connection::{Cluster, CoordinatorType};
use tokio::sync::{mpsc, oneshot, watch};

use super::error::ConsumerError;
use super::record::{OffsetAndMetadata, TopicPartition};
use super::state::{Membership, Shared};

/// OffsetCommit and OffsetFetch v10 name topics by id.
const TOPIC_ID_VERSION: i16 = 10;

/// How one attempt failed.
enum Failure {
    /// Try again (a coordinator moving, a member epoch refreshed by the next heartbeat).
    Retry(String),
    Fatal(ConsumerError),
}

/// The coordinator's cluster and the group id, or why there is none.
fn group(shared: &Shared) -> Result<(&Cluster, &str), ConsumerError> {
    match (&shared.coordinator, &shared.config.group_id) {
        (Some(cluster), Some(group)) => Ok((cluster, group.as_str())),
        _ => Err(ConsumerError::IllegalState("committed offsets need a group.id".into())),
    }
}

fn topic_ids(shared: &Shared, topics: impl Iterator<Item = Arc<str>>) -> HashMap<Arc<str>, Uuid> {
    let metadata = shared.cluster.metadata();
    topics.map(|t| (t.clone(), metadata.topic_id(&t).unwrap_or_default())).collect()
}

/// Commits `offsets`, retrying what Kafka calls retriable until `deadline`.
pub(crate) async fn commit(
    shared: &Shared,
    offsets: &BTreeMap<TopicPartition, OffsetAndMetadata>,
    deadline: Instant,
) -> Result<(), ConsumerError> {
    if offsets.is_empty() {
        return Ok(());
    }
    let mut pause = shared.config.retry_backoff.max(Duration::from_millis(10));
    loop {
        let membership = shared.state().membership.clone();
        match commit_once(shared, &membership, offsets).await {
            Ok(()) => {
                let mut state = shared.state();
                for (tp, offset) in offsets {
                    state.committed.insert(tp.clone(), offset.offset);
                }
                return Ok(());
            }
            Err(Failure::Fatal(e)) => return Err(e),
            Err(Failure::Retry(why)) => {
                if Instant::now() + pause > deadline {
                    return Err(ConsumerError::Timeout(format!("committing offsets: {why}")));
                }
                tracing::debug!(why, "offset commit will be retried");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(shared.config.retry_backoff_max.max(pause));
            }
        }
    }
}

async fn commit_once(
    shared: &Shared,
    membership: &Membership,
    offsets: &BTreeMap<TopicPartition, OffsetAndMetadata>,
) -> Result<(), Failure> {
    let (cluster, group_id) = group(shared).map_err(Failure::Fatal)?;
    let ids = topic_ids(shared, offsets.keys().map(|tp| tp.topic.clone()));
    let all_ids = ids.values().all(|id| !id.is_nil());
    let answer = cluster
        .with_coordinator(CoordinatorType::Group, group_id, |client| {
            let ids = &ids;
            async move {
                let mut version = client.version_of(ApiKey::OffsetCommit).unwrap_or(0);
                if version >= TOPIC_ID_VERSION && !all_ids {
                    version = TOPIC_ID_VERSION - 1;
                }
                let mut topics: BTreeMap<Arc<str>, Vec<OffsetCommitRequestPartition>> = BTreeMap::new();
                for (tp, offset) in offsets {
                    topics.entry(tp.topic.clone()).or_default().push(OffsetCommitRequestPartition {
                        partition_index: tp.partition,
                        committed_offset: offset.offset,
                        committed_leader_epoch: offset.leader_epoch.unwrap_or(-1),
                        committed_metadata: Some(StrBytes::from(offset.metadata.clone())),
                        ..Default::default()
                    });
                }
                let request = OffsetCommitRequest {
                    group_id: GroupId::from(group_id),
                    generation_id_or_member_epoch: membership.generation,
                    member_id: StrBytes::from(membership.member_id.clone()),
                    group_instance_id: shared.config.group_instance_id.clone().map(StrBytes::from),
                    topics: topics
                        .into_iter()
                        .map(|(name, partitions)| OffsetCommitRequestTopic {
                            topic_id: ids.get(&name).copied().unwrap_or_default(),
                            name: TopicName::from(&*name),
                            partitions,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                };
                let response = client.send_at(request, version).await?;
                // A coordinator moving shows in every partition: hand it to the retry loop.
                let codes: Vec<ErrorCode> =
                    response.topics.iter().flat_map(|t| t.partitions.iter().map(|p| p.error_code)).collect();
                if let Some(code) = codes.iter().copied().find(|c| is_coordinator_error(*c)) {
                    return Err(kwire_connection::Error::Broker { api: ApiKey::OffsetCommit, code, message: None });
                }
                Ok(codes)
            }
        })
        .await;
    let codes = match answer {
        Ok(codes) => codes,
        Err(e) if e.is_retriable() => return Err(Failure::Retry(e.to_string())),
        Err(e) => return Err(Failure::Fatal(e.into())),
    };
    let subject = shared.config.group_instance_id.clone().unwrap_or_else(|| group_id.to_owned());
    for code in codes {
        match code {
            ErrorCode::NONE => {}
            ErrorCode::REBALANCE_IN_PROGRESS => return Err(Failure::Fatal(ConsumerError::RebalanceInProgress)),
            ErrorCode::UNKNOWN_MEMBER_ID | ErrorCode::ILLEGAL_GENERATION => {
                return Err(Failure::Fatal(ConsumerError::CommitFailed(format!(
                    "{code}: the member was removed from the group or its generation is over"
                ))))
            }
            // KIP-848: the member's epoch moved on; the heartbeat brings the new one.
            ErrorCode::STALE_MEMBER_EPOCH => return Err(Failure::Retry(code.to_string())),
            ErrorCode::GROUP_AUTHORIZATION_FAILED => {
                return Err(Failure::Fatal(ConsumerError::GroupAuthorization(group_id.to_owned())))
            }
            ErrorCode::FENCED_INSTANCE_ID => return Err(Failure::Fatal(ConsumerError::FencedInstanceId(subject))),
            ErrorCode::UNKNOWN_TOPIC_ID => {
                shared.want_metadata();
                return Err(Failure::Retry(code.to_string()));
            }
            code if code.is_retriable() && code != ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
                return Err(Failure::Retry(code.to_string()))
            }
            code => return Err(Failure::Fatal(ConsumerError::from_code("OffsetCommit", code, group_id))),
        }
    }
    Ok(())
}

fn is_coordinator_error(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::NOT_COORDINATOR | ErrorCode::COORDINATOR_NOT_AVAILABLE | ErrorCode::COORDINATOR_LOAD_IN_PROGRESS
    )
}

/// The committed offsets of `partitions` (`None`: nothing committed). With `require_stable`
/// (KIP-447), offsets of a transaction still open are waited for, as Kafka's consumer does in
/// read_committed.
pub(crate) async fn fetch_committed(
    shared: &Shared,
    partitions: &[TopicPartition],
    require_stable: bool,
) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>, ConsumerError> {
    let (cluster, group_id) = group(shared)?;
    let membership = shared.state().membership.clone();
    let kip848 = shared.config.group_protocol == super::config::GroupProtocol::Consumer && membership.generation > 0;
    let ids = topic_ids(shared, partitions.iter().map(|tp| tp.topic.clone()));
    let all_ids = ids.values().all(|id| !id.is_nil());
    let mut by_topic: BTreeMap<Arc<str>, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        by_topic.entry(tp.topic.clone()).or_default().push(tp.partition);
    }
    let names: HashMap<Uuid, Arc<str>> = ids.iter().map(|(name, id)| (*id, name.clone())).collect();
    let answer = cluster
        .with_coordinator(CoordinatorType::Group, group_id, |client| {
            let (by_topic, ids, membership, names) = (&by_topic, &ids, &membership, &names);
            async move {
                let mut version = client.version_of(ApiKey::OffsetFetch).unwrap_or(0);
                if version >= TOPIC_ID_VERSION && !all_ids {
                    version = TOPIC_ID_VERSION - 1;
                }
                let mut request =
                    OffsetFetchRequest { require_stable: require_stable && version >= 7, ..Default::default() };
                if version >= 8 {
                    request.groups = vec![OffsetFetchRequestGroup {
                        group_id: GroupId::from(group_id),
                        member_id: kip848.then(|| StrBytes::from(membership.member_id.clone())),
                        member_epoch: if kip848 { membership.generation } else { -1 },
                        topics: Some(
                            by_topic
                                .iter()
                                .map(|(name, partitions)| OffsetFetchRequestTopics {
                                    name: TopicName::from(&**name),
                                    topic_id: ids.get(name).copied().unwrap_or_default(),
                                    partition_indexes: partitions.clone().into(),
                                    ..Default::default()
                                })
                                .collect(),
                        ),
                        ..Default::default()
                    }];
                } else {
                    request.group_id = GroupId::from(group_id);
                    request.topics = Some(
                        by_topic
                            .iter()
                            .map(|(name, partitions)| OffsetFetchRequestTopic {
                                name: TopicName::from(&**name),
                                partition_indexes: partitions.clone().into(),
                                ..Default::default()
                            })
                            .collect(),
                    );
                }
                let response = client.send_at(request, version).await?;
                // (topic, partition, offset, epoch, metadata, error) whatever the version.
                let mut rows = Vec::new();
                let group_error;
                if version >= 8 {
                    let group = response.groups.into_iter().find(|g| g.group_id.as_str() == group_id);
                    let Some(group) = group else {
                        return Err(kwire_connection::Error::Protocol(format!(
                            "OffsetFetch answered no group {group_id}"
                        )));
                    };
                    group_error = group.error_code;
                    for topic in group.topics {
                        let name: Arc<str> = if version >= TOPIC_ID_VERSION {
                            names.get(&topic.topic_id).cloned().unwrap_or_else(|| topic.name.as_str().into())
                        } else {
                            topic.name.as_str().into()
                        };
                        for p in topic.partitions {
                            rows.push((
                                name.clone(),
                                p.partition_index,
                                p.committed_offset,
                                p.committed_leader_epoch,
                                p.metadata,
                                p.error_code,
                            ));
                        }
                    }
                } else {
                    group_error = response.error_code;
                    for topic in response.topics {
                        let name: Arc<str> = topic.name.as_str().into();
                        for p in topic.partitions {
                            rows.push((
                                name.clone(),
                                p.partition_index,
                                p.committed_offset,
                                p.committed_leader_epoch,
                                p.metadata,
                                p.error_code,
                            ));
                        }
                    }
                }
                if is_coordinator_error(group_error) {
                    return Err(kwire_connection::Error::Broker {
                        api: ApiKey::OffsetFetch,
                        code: group_error,
                        message: None,
                    });
                }
                Ok((group_error, rows))
            }
        })
        .await
        .map_err(ConsumerError::from)?;
    let (group_error, rows) = answer;
    match group_error {
        ErrorCode::NONE => {}
        ErrorCode::GROUP_AUTHORIZATION_FAILED => return Err(ConsumerError::GroupAuthorization(group_id.to_owned())),
        code @ (ErrorCode::STALE_MEMBER_EPOCH | ErrorCode::UNKNOWN_MEMBER_ID) => {
            return Err(ConsumerError::Broker { context: "OffsetFetch", code })
        }
        code => return Err(ConsumerError::from_code("OffsetFetch", code, group_id)),
    }
    let mut out = BTreeMap::new();
    for (topic, partition, offset, epoch, metadata, error) in rows {
        let tp = TopicPartition { topic, partition };
        match error {
            ErrorCode::NONE => {
                let committed = (offset >= 0).then(|| OffsetAndMetadata {
                    offset,
                    leader_epoch: (epoch >= 0).then_some(epoch),
                    metadata: metadata.map(|m| m.as_str().to_owned()).unwrap_or_default(),
                });
                out.insert(tp, committed);
            }
            // A transaction still holds offsets for it (KIP-447): ask again.
            ErrorCode::UNSTABLE_OFFSET_COMMIT => {
                return Err(ConsumerError::Broker { context: "OffsetFetch", code: ErrorCode::UNSTABLE_OFFSET_COMMIT })
            }
            ErrorCode::UNKNOWN_TOPIC_OR_PARTITION | ErrorCode::UNKNOWN_TOPIC_ID => {
                out.insert(tp, None);
            }
            code => return Err(ConsumerError::from_code("OffsetFetch", code, &tp.to_string())),
        }
    }
    Ok(out)
}

/// A commit waiting for its turn.
pub(crate) struct Job {
    offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
    deadline: Instant,
    reply: oneshot::Sender<Result<(), ConsumerError>>,
}

/// The queue of commits, sent one after the other by [`run_committer`].
#[derive(Clone)]
pub(crate) struct Committer {
    jobs: mpsc::UnboundedSender<Job>,
}

impl Committer {
    /// Queues a commit now (so it keeps its place), returning what resolves with its result.
    pub(crate) fn submit(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        timeout: Duration,
    ) -> oneshot::Receiver<Result<(), ConsumerError>> {
        let (reply, receiver) = oneshot::channel();
        let job = Job { offsets, deadline: Instant::now() + timeout, reply };
        if let Err(mpsc::error::SendError(job)) = self.jobs.send(job) {
            let _ = job.reply.send(Err(ConsumerError::Closed));
        }
        receiver
    }
}

pub(crate) fn committer() -> (Committer, mpsc::UnboundedReceiver<Job>) {
    let (jobs, receiver) = mpsc::unbounded_channel();
    (Committer { jobs }, receiver)
}

/// Sends queued commits in order until shutdown, then those already queued.
pub(crate) async fn run_committer(
    shared: Arc<Shared>,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let job = tokio::select! {
            job = jobs.recv() => job,
            _ = shutdown.changed() => None,
        };
        let Some(job) = job.or_else(|| jobs.try_recv().ok()) else { return };
        let result = commit(&shared, &job.offsets, job.deadline).await;
        if let Err(e) = &result {
            tracing::debug!(error = %e, "offset commit failed");
        }
        let _ = job.reply.send(result);
    }
}
