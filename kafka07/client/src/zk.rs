//! Kafka 0.7's ZooKeeper layout (spec §4): brokers, topics, consumer groups and their
//! committed offsets. Node data is plain UTF-8 text; only consumer registrations are JSON.

use std::collections::BTreeMap;
use std::time::Duration;

use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, Error as ZkError};

use kwire07_zk::{BrokerNode, Container, GroupId, Kafka07ConsumerRegistration, NodeKind, TopicName, ZkDataError};

use crate::assignment::BrokerPartition;
use crate::error::{ClientError, Result};

/// Default ZooKeeper session timeout (0.7's `zk.sessiontimeout.ms`).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_millis(6000);

/// A live broker as `/brokers/ids/<id>` registers it (0.7 `creator:host:port` or 0.8 JSON),
/// decoded by `kwire07-zk`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    pub id: i32,
    /// 0.7's `<host>-<epoch ms>`; `-` for a 0.8 registration, which has none.
    pub creator: String,
    pub host: String,
    pub port: u16,
}

impl BrokerInfo {
    /// Decodes the value of `/brokers/ids/<id>`.
    pub fn parse(id: i32, value: &str) -> std::result::Result<BrokerInfo, String> {
        let path = NodeKind::BrokerRegistration { broker_id: id }.path();
        match BrokerNode::parse(&path, value.as_bytes()).map_err(|e| e.to_string())? {
            BrokerNode::Kafka07(b) => Ok(BrokerInfo {
                id,
                creator: format!("{}-{}", b.creator.host, b.creator.epoch_ms),
                host: b.host,
                port: b.port,
            }),
            BrokerNode::Registration(b) => Ok(BrokerInfo { id, creator: "-".to_owned(), host: b.host, port: b.port }),
        }
    }

    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// A consumer's 0.7 registration value (spec §4.2), read and written by `kwire07-zk`.
pub use kwire07_zk::Subscription;

/// The value a Scala 0.7 consumer writes for `subscription`.
pub fn subscription_value(subscription: &Subscription) -> String {
    String::from_utf8_lossy(&Kafka07ConsumerRegistration(subscription.clone()).to_bytes()).into_owned()
}

/// Parses a registration value; members registered by other clients (brod, samsa) that are not
/// in the Scala format are errors.
pub fn parse_subscription(path: &str, value: &str) -> std::result::Result<Subscription, String> {
    Kafka07ConsumerRegistration::parse(path, value.as_bytes()).map(|r| r.0).map_err(|e| e.to_string())
}

/// Streams `subscription` wants for `topic` (0 when not subscribed).
pub fn streams_for(subscription: &Subscription, topic: &str) -> u32 {
    match subscription {
        Subscription::Static(t) => t.iter().find(|(name, _)| name.as_str() == topic).map_or(0, |(_, n)| *n),
        Subscription::Whitelist { regex, streams } => {
            if wildcard_matches(regex, topic) {
                *streams
            } else {
                0
            }
        }
        Subscription::Blacklist { regex, streams } => {
            if wildcard_matches(regex, topic) {
                0
            } else {
                *streams
            }
        }
    }
}

/// 0.7's `TopicFilter`: the pattern with `,` read as `|`, spaces and surrounding quotes
/// removed, matched against the whole topic name (Java's `String.matches`). A pattern the
/// `regex` crate cannot compile matches nothing.
fn wildcard_matches(pattern: &str, topic: &str) -> bool {
    let cleaned = pattern.trim().replace(',', "|").replace(' ', "");
    let cleaned = cleaned.trim_start_matches(['"', '\'']).trim_end_matches(['"', '\'']);
    regex::Regex::new(&format!("^(?:{cleaned})$")).is_ok_and(|re| re.is_match(topic))
}

/// A topic or group name checked as a ZooKeeper path component (no `/`, `..`, …).
fn name<T: TryFrom<String, Error = ZkDataError>>(value: &str) -> Result<T> {
    T::try_from(value.to_owned()).map_err(|e| ClientError::Config(e.to_string()))
}

/// A ZooKeeper session plus the 0.7 paths.
#[derive(Debug, Clone)]
pub struct ZkCluster {
    client: Client,
    connect: String,
}

fn persistent() -> CreateOptions<'static> {
    CreateMode::Persistent.with_acls(Acls::anyone_all())
}

fn ephemeral() -> CreateOptions<'static> {
    CreateMode::Ephemeral.with_acls(Acls::anyone_all())
}

impl ZkCluster {
    /// Connects to `connect` (`host:port[,host:port...][/chroot]`).
    pub async fn connect(connect: &str) -> Result<ZkCluster> {
        Self::connect_with(connect, DEFAULT_SESSION_TIMEOUT).await
    }

    pub async fn connect_with(connect: &str, session_timeout: Duration) -> Result<ZkCluster> {
        let err = |source| ClientError::ZooKeeperConnect { connect: connect.to_owned(), source };
        let connector = Client::connector().with_session_timeout(session_timeout);
        let client = match tokio::time::timeout(session_timeout * 2, connector.connect(connect)).await {
            Err(_) => return Err(err(ZkError::Timeout)),
            Ok(r) => r.map_err(err)?,
        };
        Ok(ZkCluster { client, connect: connect.to_owned() })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn connect_string(&self) -> &str {
        &self.connect
    }

    fn err<'a>(op: &'static str, path: &'a str) -> impl FnOnce(ZkError) -> ClientError + 'a {
        move |source| ClientError::ZooKeeper { op, path: path.to_owned(), source }
    }

    /// Children of `path`, or none when the node does not exist.
    pub async fn children(&self, path: &str) -> Result<Vec<String>> {
        match self.client.list_children(path).await {
            Ok(c) => Ok(c),
            Err(ZkError::NoNode) => Ok(Vec::new()),
            Err(e) => Err(Self::err("list", path)(e)),
        }
    }

    /// Data of `path` as text, or `None` when the node does not exist.
    pub async fn data(&self, path: &str) -> Result<Option<String>> {
        match self.client.get_data(path).await {
            Ok((d, _)) => Ok(Some(String::from_utf8_lossy(&d).into_owned())),
            Err(ZkError::NoNode) => Ok(None),
            Err(e) => Err(Self::err("read", path)(e)),
        }
    }

    /// Creates `path` and its missing parents as persistent nodes.
    pub async fn mkdirs(&self, path: &str) -> Result<()> {
        self.client.mkdir(path, &persistent()).await.map_err(Self::err("create", path))
    }

    /// Sets a persistent node's data, creating it (and its parents) if needed.
    pub async fn write_persistent(&self, path: &str, value: &str) -> Result<()> {
        match self.client.set_data(path, value.as_bytes(), None).await {
            Ok(_) => return Ok(()),
            Err(ZkError::NoNode) => {}
            Err(e) => return Err(Self::err("write", path)(e)),
        }
        if let Some((parent, _)) = path.rsplit_once('/') {
            if !parent.is_empty() {
                self.mkdirs(parent).await?;
            }
        }
        match self.client.create(path, value.as_bytes(), &persistent()).await {
            Ok(_) => Ok(()),
            // Someone created it in between: write over it.
            Err(ZkError::NodeExists) => {
                self.client.set_data(path, value.as_bytes(), None).await.map(|_| ()).map_err(Self::err("write", path))
            }
            Err(e) => Err(Self::err("create", path)(e)),
        }
    }

    /// Creates an ephemeral node (its parent must exist). `Ok(false)` if it already exists.
    pub async fn create_ephemeral(&self, path: &str, value: &str) -> Result<bool> {
        match self.client.create(path, value.as_bytes(), &ephemeral()).await {
            Ok(_) => Ok(true),
            Err(ZkError::NodeExists) => Ok(false),
            Err(e) => Err(Self::err("create", path)(e)),
        }
    }

    /// Deletes a node; a missing node is fine.
    pub async fn delete(&self, path: &str) -> Result<()> {
        match self.client.delete(path, None).await {
            Ok(()) | Err(ZkError::NoNode) => Ok(()),
            Err(e) => Err(Self::err("delete", path)(e)),
        }
    }

    /// Live brokers by id, from `/brokers/ids`. Unparsable entries are errors naming the node.
    pub async fn brokers(&self) -> Result<BTreeMap<i32, BrokerInfo>> {
        let (out, mut bad) = self.brokers_lenient().await?;
        match bad.is_empty() {
            true => Ok(out),
            false => Err(bad.remove(0)),
        }
    }

    /// Every readable broker registration, and the nodes that could not be read (each a
    /// [`ClientError::ZooKeeperData`] naming the node): one malformed node does not hide the
    /// others.
    pub async fn brokers_lenient(&self) -> Result<(BTreeMap<i32, BrokerInfo>, Vec<ClientError>)> {
        let mut out = BTreeMap::new();
        let mut bad = Vec::new();
        let ids = Container::BrokerIds.path();
        for child in self.children(&ids).await? {
            let Some(id) = child.parse::<i32>().ok().filter(|id| *id >= 0) else {
                let path = kwire07_zk::child_path(&ids, &child).unwrap_or_else(|_| format!("{ids}/{child:?}"));
                let value = self.data(&path).await.ok().flatten().unwrap_or_default();
                bad.push(ClientError::ZooKeeperData { path, value, reason: "the node name is not a broker id".into() });
                continue;
            };
            let path = NodeKind::BrokerRegistration { broker_id: id }.path();
            // A broker may vanish between the listing and the read.
            let Some(value) = self.data(&path).await? else { continue };
            let parsed = BrokerInfo::parse(id, &value);
            match parsed {
                Ok(info) => {
                    out.insert(info.id, info);
                }
                Err(reason) => bad.push(ClientError::ZooKeeperData { path, value, reason }),
            }
        }
        Ok((out, bad))
    }

    /// Topics under `/brokers/topics`, sorted.
    pub async fn topics(&self) -> Result<Vec<String>> {
        let mut t = self.children(&Container::BrokerTopics.path()).await?;
        t.sort();
        Ok(t)
    }

    /// Broker id → partition count registered for `topic`.
    pub async fn topic_partition_counts(&self, topic: &str) -> Result<BTreeMap<i32, i32>> {
        let topic: TopicName = name(topic)?;
        let base = NodeKind::TopicRegistration { topic: topic.clone() }.path();
        let mut out = BTreeMap::new();
        for child in self.children(&base).await? {
            let Some(id) = child.parse::<i32>().ok().filter(|id| *id >= 0) else { continue };
            let path = NodeKind::Kafka07TopicBroker { topic: topic.clone(), broker_id: id }.path();
            let Some(value) = self.data(&path).await? else { continue };
            let n = value.trim().parse::<i32>().ok().filter(|n| *n > 0).ok_or_else(|| ClientError::ZooKeeperData {
                path: path.clone(),
                value: value.clone(),
                reason: "partition count is not a positive number".into(),
            })?;
            out.insert(id, n);
        }
        Ok(out)
    }

    /// Consumer groups under `/consumers`, sorted.
    pub async fn groups(&self) -> Result<Vec<String>> {
        let mut g = self.children(&Container::Consumers.path()).await?;
        g.sort();
        Ok(g)
    }

    /// Registered members of `group` with their subscriptions; members whose value is not in
    /// the Scala format (brod, samsa) are returned as errors in the map's values.
    pub async fn group_members(
        &self,
        group: &str,
    ) -> Result<BTreeMap<String, std::result::Result<Subscription, String>>> {
        let base = Self::ids_path(group)?;
        let mut out = BTreeMap::new();
        for id in self.children(&base).await? {
            let Ok(path) = Self::member_path(group, &id) else { continue };
            let Some(value) = self.data(&path).await? else { continue };
            out.insert(id, parse_subscription(&path, &value));
        }
        Ok(out)
    }

    /// `/consumers/<group>/ids`.
    pub fn ids_path(group: &str) -> Result<String> {
        Ok(Container::ConsumerIds { group: name(group)? }.path())
    }

    /// `/consumers/<group>/ids/<consumer>`.
    pub fn member_path(group: &str, consumer: &str) -> Result<String> {
        Ok(NodeKind::ConsumerRegistration { group: name(group)?, consumer: name(consumer)? }.path())
    }

    /// `/consumers/<group>/owners/<topic>`.
    pub fn owners_dir(group: &str, topic: &str) -> Result<String> {
        Ok(Container::ConsumerOwnersTopic { group: name(group)?, topic: name(topic)? }.path())
    }

    pub fn offset_path(group: &str, topic: &str, bp: &BrokerPartition) -> Result<String> {
        Ok(NodeKind::ConsumerOffset { group: name(group)?, topic: name(topic)?, partition: bp.zk_key() }.path())
    }

    pub fn owner_path(group: &str, topic: &str, bp: &BrokerPartition) -> Result<String> {
        Ok(NodeKind::ConsumerOwner { group: name(group)?, topic: name(topic)?, partition: bp.zk_key() }.path())
    }

    /// The committed next offset of a group's partition, if any.
    pub async fn read_offset(&self, group: &str, topic: &str, bp: &BrokerPartition) -> Result<Option<u64>> {
        let path = Self::offset_path(group, topic, bp)?;
        match self.data(&path).await? {
            None => Ok(None),
            Some(v) if v.trim().is_empty() => Ok(None),
            Some(v) => v.trim().parse::<u64>().map(Some).map_err(|_| ClientError::ZooKeeperData {
                path,
                value: v,
                reason: "offset is not a non-negative number".into(),
            }),
        }
    }

    pub async fn write_offset(&self, group: &str, topic: &str, bp: &BrokerPartition, offset: u64) -> Result<()> {
        self.write_persistent(&Self::offset_path(group, topic, bp)?, &offset.to_string()).await
    }

    /// Committed offsets of every partition of `topic` for `group`.
    pub async fn group_offsets(&self, group: &str, topic: &str) -> Result<BTreeMap<BrokerPartition, u64>> {
        let base = Container::ConsumerOffsetsTopic { group: name(group)?, topic: name(topic)? }.path();
        let mut out = BTreeMap::new();
        for child in self.children(&base).await? {
            let Some(bp) = BrokerPartition::parse(&child) else { continue };
            if let Some(o) = self.read_offset(group, topic, &bp).await? {
                out.insert(bp, o);
            }
        }
        Ok(out)
    }

    /// Topics a group has offsets or owners for.
    pub async fn group_topics(&self, group: &str) -> Result<Vec<String>> {
        let group: GroupId = name(group)?;
        let mut t = self.children(&Container::ConsumerOffsets { group: group.clone() }.path()).await?;
        for o in self.children(&Container::ConsumerOwners { group }.path()).await? {
            if !t.contains(&o) {
                t.push(o);
            }
        }
        t.sort();
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broker_value_needs_exactly_three_parts() {
        let b = BrokerInfo::parse(3, "10.0.0.5-1370000000000:10.0.0.5:9092").unwrap();
        assert_eq!((b.id, b.host.as_str(), b.port), (3, "10.0.0.5", 9092));
        assert_eq!(b.creator, "10.0.0.5-1370000000000");
        assert_eq!(b.addr(), "10.0.0.5:9092");
        assert!(BrokerInfo::parse(0, "::1:9092").is_err());
        assert!(BrokerInfo::parse(0, "c:h").is_err());
        assert!(BrokerInfo::parse(0, "c:h:port").is_err());
    }

    #[test]
    fn subscription_round_trips_scala_format() {
        let topic = |t: &str| TopicName::new(t).unwrap();
        let s = Subscription::Static(BTreeMap::from([(topic("a"), 1), (topic("b"), 2)]));
        assert_eq!(subscription_value(&s), r#"{ "a": 1,"b": 2 }"#);
        assert_eq!(parse_subscription("/x", &subscription_value(&s)).unwrap(), s);
        assert_eq!(streams_for(&s, "b"), 2);
        assert_eq!(streams_for(&s, "c"), 0);
        let w = parse_subscription("/x", "*1*events.*").unwrap();
        assert_eq!(w, Subscription::Whitelist { regex: "events.*".into(), streams: 1 });
        assert_eq!(streams_for(&w, "events-x"), 1);
        assert_eq!(streams_for(&w, "other"), 0);
        assert_eq!(subscription_value(&w), "*1*events.*");
        let alt = parse_subscription("/x", "*1*\"a.*, b[0-9]+\"").unwrap();
        assert_eq!(streams_for(&alt, "b12"), 1);
        assert_eq!(streams_for(&alt, "abc"), 1);
        assert_eq!(streams_for(&alt, "b12x"), 0, "whole-name match");
        let b = parse_subscription("/x", "!2!secret").unwrap();
        assert_eq!(streams_for(&b, "secret"), 0);
        assert_eq!(streams_for(&b, "public"), 2);
        // samsa's bare topic name is not a Scala registration.
        assert!(parse_subscription("/x", "events").is_err());
    }

    #[test]
    fn paths_come_from_the_zk_crate_and_refuse_bad_names() {
        let bp = BrokerPartition { broker_id: 0, partition: 3 };
        assert_eq!(ZkCluster::offset_path("g", "t", &bp).unwrap(), "/consumers/g/offsets/t/0-3");
        assert_eq!(ZkCluster::owner_path("g", "t", &bp).unwrap(), "/consumers/g/owners/t/0-3");
        assert!(ZkCluster::offset_path("..", "t", &bp).is_err());
        assert!(ZkCluster::owner_path("g", "a/b", &bp).is_err());
        assert!(ZkCluster::member_path("g", "..").is_err());
    }
}
