//! The scenario runner. A scenario is a script of requests, sent through our own client
//! (`kwire-connection`) at versions it names, to the node Kafka's rules route each one to
//! (any node, a partition's leader, a group's or a transactional id's coordinator). The same
//! script runs against the in-process cluster (3 nodes) and Apache Kafka 4.4 in one test, and
//! every response is an observation: its Kafka-style JSON, made comparable by `observe`
//! (records decoded, ids the cluster picks named). The two logs must be equal step for step.
//!
//! Responses that depend on Kafka's timing (a coordinator still loading, transaction markers
//! still being written, a group's assignment still being computed) are sent again until they
//! say what the script waits for ([`Script::send_until`]); only the last one is an
//! observation, and the wait is written in the scenario with the reason. A coordinator that
//! is loading or moving is always waited for.

mod consumer_group;
mod group_kinds;
mod observe;
mod producing;
mod transactions;

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::{ApiRequest, CreateTopicsRequest};
use kwire::{Json, StrBytes, TopicName};
use kwire_connection::cluster::CoordinatorType;
use kwire_connection::{Client, ClientConfig, Cluster};
use kwire_fake::{FakeCluster, FakeConfig};
use serde_json::Value;

use super::support;
use observe::Aliases;

/// A scenario: an async script over a [`Script`].
type Scenario = for<'a> fn(&'a mut Script) -> Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Where a request goes.
#[derive(Debug, Clone, Copy)]
pub enum To<'a> {
    Any,
    Leader(&'a str, i32),
    Group(&'a str),
    Transaction(&'a str),
}

/// One run of a scenario on one cluster: the client, and what was observed so far.
pub struct Script {
    /// The scenario's name: the prefix of every topic, group and transactional id it uses, so
    /// that scenarios sharing one Kafka never meet.
    scenario: &'static str,
    cluster: Cluster,
    aliases: Aliases,
    log: Vec<(String, Value)>,
}

impl Script {
    /// `name` within this scenario (`scenario-name`): the same on both clusters.
    pub fn name(&self, name: &str) -> String {
        format!("{}-{name}", self.scenario)
    }

    /// `value` at a key `key` of any observation, earlier ones too, reads `${name}` (an id the
    /// cluster picked, such as a producer id or a topic id).
    pub fn alias(&mut self, key: &'static str, value: impl Into<Value>, name: &str) {
        self.aliases.add(key, value.into(), name);
    }

    /// Sends `request` at `version` to `to` and records its response as the observation of
    /// step `step`.
    pub async fn send<R>(&mut self, step: &str, to: To<'_>, request: R, version: i16) -> R::Response
    where
        R: ApiRequest + Json + Clone,
        R::Response: Json,
    {
        self.send_until(step, to, request, version, Duration::ZERO, |_| true).await
    }

    /// As [`send`](Self::send), but sends again (every 100 ms, for at most `wait`) until
    /// `done` holds of the response: for answers that depend on Kafka's timing.
    pub async fn send_until<R>(
        &mut self,
        step: &str,
        to: To<'_>,
        request: R,
        version: i16,
        wait: Duration,
        done: impl Fn(&R::Response) -> bool,
    ) -> R::Response
    where
        R: ApiRequest + Json + Clone,
        R::Response: Json,
    {
        let response = self.request_until(to, request, version, wait, done).await;
        self.record(step, &response, version);
        response
    }

    /// Records `response` (at `version`) as the observation of step `step`, made comparable
    /// when the script ends, once every alias is known.
    pub fn record<M: Json>(&mut self, step: &str, response: &M, version: i16) {
        let json = response.to_json(version).unwrap_or_else(|e| panic!("step {step:?}: {e}"));
        self.log.push((step.to_owned(), json));
    }

    /// Sends `request` at `version` to `to`, without observing the response.
    pub async fn request<R: ApiRequest>(&self, to: To<'_>, request: R, version: i16) -> R::Response {
        let client = self.client(to).await;
        client.send_at(request, version).await.unwrap_or_else(|e| panic!("{}, {to:?}: {e}", self.scenario))
    }

    /// [`request`](Self::request) again every 100 ms, for at most `wait`, until `done` holds
    /// of the response. A coordinator that is still loading or moving (Kafka's, after it
    /// starts) is waited for too, whatever `wait`, for up to [`COORDINATOR_WAIT`].
    pub async fn request_until<R>(
        &self,
        to: To<'_>,
        request: R,
        version: i16,
        wait: Duration,
        done: impl Fn(&R::Response) -> bool,
    ) -> R::Response
    where
        R: ApiRequest + Clone,
        R::Response: Json,
    {
        let start = Instant::now();
        loop {
            let response = self.request(to, request.clone(), version).await;
            let waiting = if coordinator_busy(&response, version) {
                start.elapsed() < COORDINATOR_WAIT
            } else {
                !done(&response) && start.elapsed() < wait
            };
            if !waiting {
                return response;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Creates `name` (prefixed) with `partitions`, and names its topic id `${name}`.
    pub async fn create_topic(&mut self, name: &str, partitions: i32) -> String {
        let topic = self.name(name);
        let request = CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: TopicName(StrBytes::from(topic.clone())),
                num_partitions: partitions,
                replication_factor: 1,
                ..Default::default()
            }],
            timeout_ms: 30_000,
            ..Default::default()
        };
        let created = self.send(&format!("create {name}"), To::Any, request, 7).await;
        let json = created.to_json(7).unwrap();
        self.alias("topicId", json["topics"][0]["topicId"].clone(), name);
        support::wait_for_leaders(&self.cluster, &topic, partitions).await;
        topic
    }

    async fn client(&self, to: To<'_>) -> Client {
        let client = match to {
            To::Any => self.cluster.any().await,
            To::Leader(topic, partition) => {
                let _ = self.cluster.refresh(&[topic]).await;
                self.cluster.leader(topic, partition).await
            }
            To::Group(id) => self.cluster.coordinator(CoordinatorType::Group, id).await,
            To::Transaction(id) => self.cluster.coordinator(CoordinatorType::Transaction, id).await,
        };
        client.unwrap_or_else(|e| panic!("{}: no node for {to:?}: {e}", self.scenario))
    }
}

/// The time every record of the scenarios is stamped with: the test's start, the same on both
/// clusters. (Not a fixed time in the past: Kafka rolls a log segment when a batch's time is
/// `segment.ms` past its segment's first, as a control batch stamped now would be, and a Fetch
/// reads one segment; the fake has no segments.)
pub fn now_ms() -> i64 {
    static START: std::sync::OnceLock<i64> = std::sync::OnceLock::new();
    *START.get_or_init(|| {
        let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        i64::try_from(since_epoch.as_millis()).unwrap()
    })
}

/// How long a coordinator may be loading or moving.
const COORDINATOR_WAIT: Duration = Duration::from_secs(60);

/// Whether `response` says its coordinator is loading, unavailable or elsewhere, at the top or
/// for a group: COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR.
fn coordinator_busy<M: Json>(response: &M, version: i16) -> bool {
    let busy = |v: &Value| matches!(v["errorCode"].as_i64(), Some(14..=16));
    let Ok(json) = response.to_json(version) else { return false };
    busy(&json) || json["groups"].as_array().is_some_and(|groups| groups.iter().any(busy))
}

/// Runs `scenario` on a 3-node in-process cluster, then (when its jars are there) on Kafka
/// 4.4, and requires equal observations, step by step.
fn run_on_both(name: &'static str, scenario: Scenario) {
    let _alone = support::one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let on_fake = runtime.block_on(async {
        let fake = FakeCluster::start(FakeConfig::default().nodes(3)).await.unwrap();
        let log = run(name, &fake.bootstrap_servers(), scenario).await;
        fake.shutdown().await;
        log
    });
    let Some(kafka) = support::kafka() else {
        println!("{name}: Kafka's jars are missing; the fake's log only:\n{}", show(&on_fake));
        return;
    };
    let on_kafka = runtime.block_on(run(name, &kafka.bootstrap(), scenario));
    if on_fake != on_kafka {
        println!("{name}, the fake's log:\n{}\nKafka's log:\n{}", show(&on_fake), show(&on_kafka));
    }
    assert_eq!(on_fake.len(), on_kafka.len(), "{name}: the scripts took different paths");
    for ((step, fake), (_, kafka)) in on_fake.iter().zip(&on_kafka) {
        assert_eq!(fake, kafka, "{name}, step {step:?}: the fake observed\n{fake:#}\nKafka observed\n{kafka:#}");
    }
    println!("{name}: {} steps, the same on both:\n{}", on_fake.len(), show(&on_fake));
}

async fn run(name: &'static str, bootstrap: &str, scenario: Scenario) -> Vec<(String, Value)> {
    let servers: Vec<&str> = bootstrap.split(',').collect();
    let cluster = Cluster::connect(&servers, ClientConfig::default()).await.unwrap();
    let mut script = Script { scenario: name, cluster, aliases: Aliases::default(), log: Vec::new() };
    scenario(&mut script).await;
    let Script { aliases, log, .. } = script;
    log.into_iter().map(|(step, json)| (step, observe::observe(json, &aliases))).collect()
}

/// The log, a step a line (a created topic's configs shown only by count).
fn show(log: &[(String, Value)]) -> String {
    let brief = |o: &Value| {
        let mut o = o.clone();
        if let Some(topics) = o.get_mut("topics").and_then(Value::as_array_mut) {
            for t in topics {
                if let Some(configs) = t.get_mut("configs") {
                    *configs = Value::from(configs.as_array().map_or(0, Vec::len));
                }
            }
        }
        o
    };
    log.iter().map(|(step, o)| format!("  {step}: {}\n", brief(o))).collect()
}

#[test]
fn scenario_idempotence() {
    run_on_both("sc-idempotence", producing::idempotence);
}

#[test]
fn scenario_refusals() {
    run_on_both("sc-refusals", producing::refusals);
}

#[test]
fn scenario_transaction_v2_abort_then_commit() {
    run_on_both("sc-txn-v2", transactions::v2_abort_then_commit);
}

#[test]
fn scenario_transaction_v1_with_offsets() {
    run_on_both("sc-txn-v1", transactions::v1_with_offsets);
}

#[test]
fn scenario_transaction_fencing() {
    run_on_both("sc-txn-fence", transactions::fencing);
}

#[test]
fn scenario_consumer_group_hand_over() {
    run_on_both("sc-cg-hand-over", consumer_group::hand_over);
}

#[test]
fn scenario_consumer_group_transactional_commits() {
    run_on_both("sc-cg-txn", consumer_group::transactional_commits);
}

#[test]
fn scenario_one_group_namespace() {
    run_on_both("sc-group-kinds", group_kinds::one_namespace);
}
