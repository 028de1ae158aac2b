//! ZooKeeper registration exactly as Kafka 0.7 lays it out (spec §4.1):
//!
//! * persistent `/brokers/ids` and `/brokers/topics` (created if missing),
//! * ephemeral `/brokers/ids/<id>` = `<host>-<epoch ms>:<host>:<port>`,
//! * ephemeral `/brokers/topics/<topic>/<id>` = partition count, for every topic with a log.
//!
//! A node left by an earlier session of this broker (a restart after `kill -9` within the
//! session timeout) is waited out; a node that outlives that wait belongs to a live broker and
//! start-up is refused. A holder whose published address accepts connections is live, and is
//! refused at once without the wait. After a session expiry everything is registered again.
//!
//! The same session watches the topic configuration ([`crate::zk_config`]): every topic's
//! `/config/topics/<topic>` is applied at start-up and after an expiry, and each new
//! `/config/changes/config_change_<n>` as it appears. A deleted topic's
//! `/brokers/topics/<topic>/<id>` goes, and `/brokers/topics/<topic>` with the last of them.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};
use zookeeper_client::{Acls, Client, CreateMode, CreateOptions, Error as ZkError, SessionState};

use kwire07_zk::{Container, Kafka07BrokerRegistration, Kafka07Creator, NodeKind, TopicName, ZkDataError};

use crate::config::ZkConfig;
use crate::shutdown::stopped;
use crate::state::{BrokerState, TopicEvent};
use crate::zk_config;

#[derive(Debug, thiserror::Error)]
pub enum RegistrationError {
    #[error("cannot connect to ZooKeeper at {hosts}: {source}")]
    Connect { hosts: String, source: ZkError },
    #[error("ZooKeeper {op} {path}: {source}")]
    Op { op: &'static str, path: String, source: ZkError },
    #[error(
        "broker id {id} is already registered by a live broker ({path} = {data:?}); \
         use another brokerid or stop that broker"
    )]
    AlreadyRegistered { id: i32, path: String, data: String },
    #[error("topic configuration in ZooKeeper: {0}")]
    Config(#[from] zk_config::SyncError),
    #[error("cannot register in ZooKeeper: {0}")]
    Name(#[from] ZkDataError),
}

/// What to publish.
#[derive(Debug, Clone)]
pub struct Registration {
    pub broker_id: i32,
    pub host: String,
    pub port: u16,
}

impl Registration {
    fn broker_path(&self) -> String {
        NodeKind::BrokerRegistration { broker_id: self.broker_id }.path()
    }

    fn topic_path(&self, topic: &TopicName) -> String {
        NodeKind::Kafka07TopicBroker { topic: topic.clone(), broker_id: self.broker_id }.path()
    }
}

fn persistent() -> CreateOptions<'static> {
    CreateMode::Persistent.with_acls(Acls::anyone_all())
}

fn ephemeral() -> CreateOptions<'static> {
    CreateMode::Ephemeral.with_acls(Acls::anyone_all())
}

fn op<'a>(op: &'static str, path: &'a str) -> impl FnOnce(ZkError) -> RegistrationError + 'a {
    move |source| RegistrationError::Op { op, path: path.to_owned(), source }
}

/// Connects (creating the chroot if there is one).
async fn connect(cfg: &ZkConfig) -> Result<Client, RegistrationError> {
    let connect_err = |source| RegistrationError::Connect { hosts: cfg.hosts.clone(), source };
    let client = Client::connector()
        .with_session_timeout(cfg.session_timeout)
        .with_connection_timeout(cfg.connection_timeout)
        .connect(&cfg.hosts)
        .await
        .map_err(connect_err)?;
    let Some(chroot) = &cfg.chroot else { return Ok(client) };
    client.mkdir(chroot, &persistent()).await.map_err(op("create chroot", chroot))?;
    client.chroot(chroot.as_str()).map_err(|_| RegistrationError::Op {
        op: "use chroot",
        path: chroot.clone(),
        source: ZkError::BadArguments(&"invalid chroot"),
    })
}

/// Creates an ephemeral node owned by this session. A node from another session with the same
/// data is ours from before and is replaced; with other data it is waited out for up to `wait`,
/// unless it is a broker node (`own_address` given) whose holder answers on its published
/// address. Returns the other owner's data if it is still there after that.
async fn create_ephemeral(
    client: &Client,
    path: &str,
    data: &str,
    wait: Duration,
    own_address: Option<(&str, u16)>,
) -> Result<Option<String>, RegistrationError> {
    let deadline = Instant::now() + wait;
    let mut announced = false;
    loop {
        match client.create(path, data.as_bytes(), &ephemeral()).await {
            Ok(_) => return Ok(None),
            Err(ZkError::NodeExists) => {}
            Err(e) => return Err(op("create", path)(e)),
        }
        let (existing, stat) = match client.get_data(path).await {
            Ok(v) => v,
            Err(ZkError::NoNode) => continue,
            Err(e) => return Err(op("read", path)(e)),
        };
        if stat.ephemeral_owner == client.session_id().0 {
            if existing != data.as_bytes() {
                client.set_data(path, data.as_bytes(), None).await.map_err(op("update", path))?;
            }
            return Ok(None);
        }
        let existing = String::from_utf8_lossy(&existing).into_owned();
        if existing == data || stat.ephemeral_owner == 0 {
            // Left by an earlier session of ours (or a persistent leftover): replace it.
            match client.delete(path, Some(stat.version)).await {
                Ok(()) | Err(ZkError::NoNode) | Err(ZkError::BadVersion) => continue,
                Err(e) => return Err(op("delete", path)(e)),
            }
        }
        if Instant::now() >= deadline {
            return Ok(Some(existing));
        }
        if !announced {
            if let Some((host, port)) = own_address {
                if holder_accepts_connections(path, &existing, host, port).await {
                    return Ok(Some(existing));
                }
            }
            announced = true;
            info!(path, existing, "node held by another session; waiting up to {wait:?} for it to expire");
        }
        // Wait for the node to go (its session expiring), polling at most every 500 ms.
        let remaining = deadline.saturating_duration_since(Instant::now()).min(Duration::from_millis(500));
        match client.check_and_watch_stat(path).await {
            Ok((None, _)) => continue,
            Ok((Some(_), watcher)) => {
                let _ = tokio::time::timeout(remaining, watcher.changed()).await;
            }
            Err(e) => return Err(op("watch", path)(e)),
        }
    }
}

async fn register_topic(client: &Client, reg: &Registration, topic: &str, count: i32) -> Result<(), RegistrationError> {
    let topic = TopicName::new(topic)?;
    let parent = NodeKind::TopicRegistration { topic: topic.clone() }.path();
    client.mkdir(&parent, &persistent()).await.map_err(op("create", &parent))?;
    let path = reg.topic_path(&topic);
    if let Some(other) = create_ephemeral(client, &path, &count.to_string(), Duration::ZERO, None).await? {
        // Another session holds it: only possible after our broker node was taken over; the
        // stale node goes with its session, re-registration on the next expiry fixes it.
        warn!(path, other, "topic registration held by another session");
    }
    Ok(())
}

/// Registers the broker and every topic on a fresh session. `wait` bounds how long a stale
/// broker node may take to disappear.
async fn register_all(
    client: &Client,
    reg: &Registration,
    creator: &Kafka07Creator,
    state: &BrokerState,
    wait: Duration,
) -> Result<(), RegistrationError> {
    for p in [Container::BrokerIds.path(), Container::BrokerTopics.path()] {
        client.mkdir(&p, &persistent()).await.map_err(op("create", &p))?;
    }
    let path = reg.broker_path();
    let value = Kafka07BrokerRegistration { creator: creator.clone(), host: reg.host.clone(), port: reg.port };
    let data = String::from_utf8_lossy(&value.to_bytes()).into_owned();
    let own = Some((reg.host.as_str(), reg.port));
    if let Some(other) = create_ephemeral(client, &path, &data, wait, own).await? {
        return Err(RegistrationError::AlreadyRegistered { id: reg.broker_id, path, data: other });
    }
    info!(path, data, session = %client.session_id(), "registered in ZooKeeper");
    for topic in state.topics() {
        register_topic(client, reg, &topic, state.partition_count(&topic)).await?;
    }
    Ok(())
}

/// Whether the broker that published `holder` (`creator:host:port`, 0.7's broker node value)
/// answers on its address: then it is alive, and waiting for its session to expire is
/// pointless. An address that leads back to us (ours, `host`:`port`, or another name for a
/// local address with our port) says nothing, nor does one that cannot be parsed or reached
/// within a second: those are waited out.
async fn holder_accepts_connections(path: &str, holder: &str, host: &str, port: u16) -> bool {
    let Ok(theirs) = Kafka07BrokerRegistration::parse(path, holder.as_bytes()) else { return false };
    if theirs.host == host && theirs.port == port {
        return false;
    }
    let connect = tokio::net::TcpStream::connect((theirs.host.as_str(), theirs.port));
    let Ok(Ok(stream)) = tokio::time::timeout(Duration::from_secs(1), connect).await else { return false };
    match (stream.local_addr(), stream.peer_addr()) {
        // A local address on our own port is our listener (we hold that port).
        (Ok(local), Ok(peer)) => !(peer.port() == port && local.ip() == peer.ip()),
        _ => false,
    }
}

async fn unregister_topic(client: &Client, reg: &Registration, topic: &str) {
    let Ok(topic) = TopicName::new(topic) else { return };
    let path = reg.topic_path(&topic);
    match client.delete(&path, None).await {
        Ok(()) | Err(ZkError::NoNode) => {}
        Err(e) => warn!(path, "cannot remove the topic registration: {e}"),
    }
    // The last broker to leave removes the topic's node.
    let parent = NodeKind::TopicRegistration { topic: topic.clone() }.path();
    match client.delete(&parent, None).await {
        Ok(()) => info!(topic = topic.as_str(), "removed {parent}"),
        Err(ZkError::NoNode | ZkError::NotEmpty) => {}
        Err(e) => warn!(parent, "cannot remove the topic node: {e}"),
    }
}

/// Resolves when the configuration watch fires (or a retry is due).
type Wake = Pin<Box<dyn Future<Output = ()> + Send>>;

fn wake_on(watcher: zookeeper_client::OneshotWatcher) -> Wake {
    Box::pin(async move {
        let _ = watcher.changed().await;
    })
}

fn retry_soon(e: &dyn std::fmt::Display) -> Wake {
    warn!("topic configuration watch: {e}; retrying");
    Box::pin(tokio::time::sleep(Duration::from_secs(1)))
}

/// Applies every topic configuration and the notifications after `last`, and watches for more.
async fn follow_config(client: &Client, state: &Arc<BrokerState>, last: &mut i64) -> Wake {
    if let Err(e) = zk_config::sync_all(client, state).await {
        return retry_soon(&e);
    }
    match zk_config::process_changes(client, state, last).await {
        Ok(w) => wake_on(w),
        Err(e) => retry_soon(&e),
    }
}

/// A running registrar; stop it with the broker's shutdown signal, then await `task` (the
/// session is closed, so the ephemeral nodes go at once).
pub struct Registrar {
    pub task: JoinHandle<()>,
}

/// Connects and registers (failing start-up if that fails or the id is taken), then keeps the
/// registration alive in the background: new topics are added as they appear, and after a
/// session expiry everything is registered again on a new session.
pub async fn start(
    cfg: ZkConfig,
    reg: Registration,
    state: Arc<BrokerState>,
    mut shutdown: watch::Receiver<bool>,
) -> Result<Registrar, RegistrationError> {
    let epoch_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let creator = Kafka07Creator { host: reg.host.clone(), epoch_ms };
    let (tx, mut new_topics) = mpsc::unbounded_channel();
    state.set_topic_listener(tx);
    state.set_uses_zookeeper();
    let client = connect(&cfg).await?;
    // An earlier session of ours (same configuration, so the same negotiated timeout) lives at
    // most one session timeout after its last ping, rounded up to the server's tick (2 s by
    // default); allow a little more on a loaded machine.
    let stale_wait = client.session_timeout().max(cfg.session_timeout) + Duration::from_secs(3);
    register_all(&client, &reg, &creator, &state, stale_wait).await?;
    state.set_zk_client(Some(client.clone()));
    // Notifications from before this start are history: the configuration nodes say where
    // they led.
    crate::topic_store::ensure_paths(&client).await.map_err(zk_config::SyncError::from)?;
    let (mut last_change, _) = zk_config::watch_changes(&client).await?;
    let mut config_wake = follow_config(&client, &state, &mut last_change).await;

    let task = tokio::spawn(async move {
        let mut client = Some(client);
        loop {
            let Some(c) = client.take() else {
                // Reconnect after an expiry, retrying until shut down.
                let attempt = async {
                    let c = connect(&cfg).await?;
                    register_all(&c, &reg, &creator, &state, stale_wait).await?;
                    Ok::<_, RegistrationError>(c)
                };
                tokio::select! {
                    _ = stopped(&mut shutdown) => return,
                    r = attempt => match r {
                        Ok(c) => {
                            info!("re-registered after session expiry");
                            state.set_zk_client(Some(c.clone()));
                            config_wake = follow_config(&c, &state, &mut last_change).await;
                            client = Some(c);
                        }
                        Err(e) => {
                            warn!("ZooKeeper re-registration failed, retrying: {e}");
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                    }
                }
                continue;
            };
            let mut states = c.state_watcher();
            let expired = loop {
                tokio::select! {
                    _ = stopped(&mut shutdown) => {
                        // Remove the broker node at once; closing the session removes the rest.
                        let _ = tokio::time::timeout(Duration::from_secs(2), c.delete(&reg.broker_path(), None)).await;
                        // The state's clone would keep the session open.
                        state.set_zk_client(None);
                        drop(c);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        return;
                    }
                    s = states.changed() => match s {
                        SessionState::Expired | SessionState::Closed | SessionState::AuthFailed => break s,
                        other => debug!(state = ?other, "ZooKeeper session state"),
                    },
                    Some(event) = new_topics.recv() => match event {
                        TopicEvent::Added(topic) => {
                            let count = state.partition_count(&topic);
                            if let Err(e) = register_topic(&c, &reg, &topic, count).await {
                                warn!(topic, "topic registration failed: {e}");
                            } else {
                                info!(topic, count, "registered topic in ZooKeeper");
                            }
                        }
                        TopicEvent::Removed(topic) => unregister_topic(&c, &reg, &topic).await,
                    },
                    _ = &mut config_wake => {
                        config_wake = match zk_config::process_changes(&c, &state, &mut last_change).await {
                            Ok(w) => wake_on(w),
                            Err(e) => retry_soon(&e),
                        };
                    }
                }
            };
            state.set_zk_client(None);
            warn!(state = ?expired, "ZooKeeper session ended; registering again");
        }
    });
    Ok(Registrar { task })
}
