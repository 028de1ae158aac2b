//! Kafka 0.7's ZooKeeper layout (spec §4): brokers, topics, consumer groups and their
//! committed offsets. Node data is plain UTF-8 text; only consumer registrations are JSON.

use std::collections::BTreeMap;
use std::time::Duration;

use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, Error as ZkError};

use crate::assignment::BrokerPartition;
use crate::error::{ClientError, Result};

/// Default ZooKeeper session timeout (0.7's `zk.sessiontimeout.ms`).
pub const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_millis(6000);

/// A broker as registered under `/brokers/ids/<id>`: `creator:host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    pub id: i32,
    pub creator: String,
    pub host: String,
    pub port: u16,
}

impl BrokerInfo {
    /// Parses a broker node value. Like every 0.7 reader it splits on `:` and wants exactly
    /// three parts.
    pub fn parse(id: i32, value: &str) -> std::result::Result<BrokerInfo, String> {
        let parts: Vec<&str> = value.split(':').collect();
        let [creator, host, port] = parts[..] else {
            return Err(format!("expected creator:host:port, found {} parts", parts.len()));
        };
        let port = port.trim().parse().map_err(|_| format!("port {port:?} is not a number"))?;
        Ok(BrokerInfo { id, creator: creator.to_owned(), host: host.to_owned(), port })
    }

    pub fn addr(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// A consumer's registration value (spec §4.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    /// `{ "topicA": 2, "topicB": 1 }`: topic → number of streams.
    Static(BTreeMap<String, u32>),
    /// `*<n>*<regex>` (whitelist, `exclude = false`) or `!<n>!<regex>` (blacklist).
    Wildcard { exclude: bool, streams: u32, pattern: String },
}

impl Subscription {
    /// The value as the Scala consumer writes it: `{ ` + `"t": n` joined by `,` + ` }`.
    pub fn to_zk_value(&self) -> String {
        match self {
            Subscription::Static(topics) => {
                let entries: Vec<String> =
                    topics.iter().map(|(t, n)| format!("{}: {n}", serde_json::Value::String(t.clone()))).collect();
                format!("{{ {} }}", entries.join(","))
            }
            Subscription::Wildcard { exclude: false, streams, pattern } => format!("*{streams}*{pattern}"),
            Subscription::Wildcard { exclude: true, streams, pattern } => format!("!{streams}!{pattern}"),
        }
    }

    pub fn parse(value: &str) -> std::result::Result<Subscription, String> {
        for (mark, exclude) in [('*', false), ('!', true)] {
            if let Some(rest) = value.strip_prefix(mark) {
                let (n, pattern) = rest.split_once(mark).ok_or("wildcard subscription without a second marker")?;
                let streams = n.parse().map_err(|_| format!("stream count {n:?} is not a number"))?;
                return Ok(Subscription::Wildcard { exclude, streams, pattern: pattern.to_owned() });
            }
        }
        let json: serde_json::Value = serde_json::from_str(value).map_err(|e| format!("not JSON: {e}"))?;
        let obj = json.as_object().ok_or("not a JSON object")?;
        let mut topics = BTreeMap::new();
        for (t, n) in obj {
            let n = n
                .as_u64()
                .or_else(|| n.as_str().and_then(|s| s.parse().ok()))
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| format!("stream count for {t:?} is not a number"))?;
            topics.insert(t.clone(), n);
        }
        Ok(Subscription::Static(topics))
    }

    /// Streams for `topic` (0 when not subscribed).
    pub fn streams_for(&self, topic: &str) -> u32 {
        match self {
            Subscription::Static(t) => t.get(topic).copied().unwrap_or(0),
            Subscription::Wildcard { exclude, streams, pattern } => {
                let matches = wildcard_matches(pattern, topic);
                if matches != *exclude {
                    *streams
                } else {
                    0
                }
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
        for child in self.children("/brokers/ids").await? {
            let path = format!("/brokers/ids/{child}");
            // A broker may vanish between the listing and the read.
            let Some(value) = self.data(&path).await? else { continue };
            let parsed = match child.parse::<i32>() {
                Ok(id) => BrokerInfo::parse(id, &value),
                Err(_) => Err("the node name is not a broker id".to_owned()),
            };
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
        let mut t = self.children("/brokers/topics").await?;
        t.sort();
        Ok(t)
    }

    /// Broker id → partition count registered for `topic`.
    pub async fn topic_partition_counts(&self, topic: &str) -> Result<BTreeMap<i32, i32>> {
        let base = format!("/brokers/topics/{topic}");
        let mut out = BTreeMap::new();
        for child in self.children(&base).await? {
            let Ok(id) = child.parse::<i32>() else { continue };
            let path = format!("{base}/{child}");
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
        let mut g = self.children("/consumers").await?;
        g.sort();
        Ok(g)
    }

    /// Registered members of `group` with their subscriptions; members whose value is not in
    /// the Scala format (brod, samsa) are returned as errors in the map's values.
    pub async fn group_members(
        &self,
        group: &str,
    ) -> Result<BTreeMap<String, std::result::Result<Subscription, String>>> {
        let base = format!("/consumers/{group}/ids");
        let mut out = BTreeMap::new();
        for id in self.children(&base).await? {
            let Some(value) = self.data(&format!("{base}/{id}")).await? else { continue };
            out.insert(id, Subscription::parse(&value));
        }
        Ok(out)
    }

    pub fn offset_path(group: &str, topic: &str, bp: &BrokerPartition) -> String {
        format!("/consumers/{group}/offsets/{topic}/{}", bp.name())
    }

    pub fn owner_path(group: &str, topic: &str, bp: &BrokerPartition) -> String {
        format!("/consumers/{group}/owners/{topic}/{}", bp.name())
    }

    /// The committed next offset of a group's partition, if any.
    pub async fn read_offset(&self, group: &str, topic: &str, bp: &BrokerPartition) -> Result<Option<u64>> {
        let path = Self::offset_path(group, topic, bp);
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
        self.write_persistent(&Self::offset_path(group, topic, bp), &offset.to_string()).await
    }

    /// Committed offsets of every partition of `topic` for `group`.
    pub async fn group_offsets(&self, group: &str, topic: &str) -> Result<BTreeMap<BrokerPartition, u64>> {
        let base = format!("/consumers/{group}/offsets/{topic}");
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
        let mut t = self.children(&format!("/consumers/{group}/offsets")).await?;
        for o in self.children(&format!("/consumers/{group}/owners")).await? {
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
        let s = Subscription::Static(BTreeMap::from([("a".into(), 1), ("b".into(), 2)]));
        assert_eq!(s.to_zk_value(), r#"{ "a": 1,"b": 2 }"#);
        assert_eq!(Subscription::parse(&s.to_zk_value()).unwrap(), s);
        assert_eq!(s.streams_for("b"), 2);
        assert_eq!(s.streams_for("c"), 0);
        let w = Subscription::parse("*1*events.*").unwrap();
        assert_eq!(w, Subscription::Wildcard { exclude: false, streams: 1, pattern: "events.*".into() });
        assert_eq!(w.streams_for("events-x"), 1);
        assert_eq!(w.streams_for("other"), 0);
        assert_eq!(w.to_zk_value(), "*1*events.*");
        let alt = Subscription::parse("*1*\"a.*, b[0-9]+\"").unwrap();
        assert_eq!(alt.streams_for("b12"), 1);
        assert_eq!(alt.streams_for("abc"), 1);
        assert_eq!(alt.streams_for("b12x"), 0, "whole-name match");
        let b = Subscription::parse("!2!secret").unwrap();
        assert_eq!(b.streams_for("secret"), 0);
        assert_eq!(b.streams_for("public"), 2);
        // samsa's bare topic name is not a Scala registration.
        assert!(Subscription::parse("events").is_err());
    }
}
