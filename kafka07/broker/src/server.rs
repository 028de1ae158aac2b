//! The broker's life cycle (spec §3.10): open the logs (with recovery), start the socket
//! server, register in ZooKeeper, run the flush and retention tasks; on shutdown stop
//! accepting, let connections finish their current request, flush and write the
//! clean-shutdown marker.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::Duration;

use kwire07_protocol::log::{LogError, LogManager};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tracing::{debug, error, info, warn};

use crate::config::BrokerConfig;
use crate::connection::{serve, ConnectionLimits};
use crate::connection_table::{ConnectionTable, TableLimits};
use crate::processors::Processors;
use crate::shutdown::stopped;
use crate::state::BrokerState;
use crate::topic_settings::BrokerDefaults;
use crate::zk::{self, Registration, RegistrationError};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    DirLock(#[from] crate::dir_lock::DirLockError),
    #[error("opening the log in {dir}: {source}")]
    Log { dir: String, source: LogError },
    #[error("opening the log in {dir}: the loading task failed: {detail}")]
    LogTask { dir: String, detail: String },
    #[error("listening on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("kwire.socket.congestion.control={algorithm}: {source}")]
    Congestion { algorithm: String, source: std::io::Error },
    #[error("starting {count} connection threads (num.threads): {source}")]
    Processors { count: usize, source: std::io::Error },
    #[error(transparent)]
    ZooKeeper(#[from] RegistrationError),
    #[error("loading the topic configuration in {dir}: {detail}")]
    TopicConfig { dir: String, detail: String },
}

#[derive(Debug, thiserror::Error)]
pub enum ShutdownError {
    #[error("flushing the log: {0}")]
    Log(#[from] LogError),
    #[error("the flush task failed: {0}")]
    Task(String),
}

/// How long connections get to finish their current request at shutdown.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection that completed a request this recently (or is this new) is not shed for a
/// newcomer at the connection limit.
const SHED_GRACE: Duration = Duration::from_secs(1);

/// A started broker. Dropping it without [`Broker::shutdown`] leaves the log to recovery.
pub struct Broker {
    state: Arc<BrokerState>,
    local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    accept_task: tokio::task::JoinHandle<JoinSet<()>>,
    /// The threads the connections run on.
    processors: Arc<Processors>,
    background: Vec<tokio::task::JoinHandle<()>>,
    registrar: Option<zk::Registrar>,
    /// The log directory's lock, released when the broker is dropped or the process exits.
    _dir_lock: crate::dir_lock::DirLock,
}

impl std::fmt::Debug for Broker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Broker").field("local_addr", &self.local_addr).finish()
    }
}

/// The host published in ZooKeeper when `hostname` is not set: the bind address, or for a
/// wildcard bind the address of the interface that routes outwards (no packet is sent).
fn published_host(config: &BrokerConfig) -> String {
    if let Some(h) = &config.hostname {
        return h.clone();
    }
    if !config.bind.is_unspecified() {
        return config.bind.to_string();
    }
    let probe = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0)).and_then(|s| {
        s.connect((Ipv4Addr::new(192, 0, 2, 1), 9))?;
        s.local_addr()
    });
    match probe {
        Ok(addr) if addr.ip().is_ipv4() && !addr.ip().is_unspecified() => addr.ip().to_string(),
        _ => Ipv4Addr::LOCALHOST.to_string(),
    }
}

fn bind(config: &BrokerConfig) -> Result<TcpListener, StartError> {
    let addr = SocketAddr::new(config.bind, config.port);
    let err = |source| StartError::Listen { addr, source };
    let socket = match config.bind {
        IpAddr::V4(_) => TcpSocket::new_v4(),
        IpAddr::V6(_) => TcpSocket::new_v6(),
    }
    .map_err(err)?;
    socket.set_reuseaddr(true).map_err(err)?;
    // Accepted sockets inherit these (0.7's socket.send.buffer / socket.receive.buffer; when
    // they are not configured the kernel autotunes both) and the congestion control.
    if let Some(size) = config.socket_send_buffer {
        socket.set_send_buffer_size(size).map_err(err)?;
    }
    if let Some(size) = config.socket_receive_buffer {
        socket.set_recv_buffer_size(size).map_err(err)?;
    }
    if let Some(algorithm) = &config.socket_congestion {
        // An unknown or forbidden algorithm stops the start-up.
        set_congestion(&socket, algorithm)
            .map_err(|source| StartError::Congestion { algorithm: algorithm.clone(), source })?;
    }
    socket.bind(addr).map_err(err)?;
    socket.listen(1024).map_err(err)
}

/// Sets a socket's TCP congestion control algorithm (`TCP_CONGESTION`; Linux only).
fn set_congestion(socket: &TcpSocket, algorithm: &str) -> std::io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    return socket2::SockRef::from(socket).set_tcp_congestion(algorithm.as_bytes()).map_err(|e| {
        let hint = match e.raw_os_error() {
            // ENOENT
            Some(2) => "unknown algorithm (see /proc/sys/net/ipv4/tcp_available_congestion_control)",
            // EPERM
            Some(1) => {
                "not permitted (without CAP_NET_ADMIN only net.ipv4.tcp_allowed_congestion_control may be chosen)"
            }
            _ => return e,
        };
        std::io::Error::new(e.kind(), hint)
    });
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    {
        let _ = (socket, algorithm);
        Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "TCP_CONGESTION is not available on this platform"))
    }
}

impl Broker {
    /// Starts the broker: accepting, ZooKeeper and the schedules run on the current tokio
    /// runtime, connections on `num.threads` processor threads of their own.
    pub async fn start(config: BrokerConfig) -> Result<Broker, StartError> {
        let dir = config.log_dir.display().to_string();
        // Before anything reads or writes the log: a second broker on this directory stops here.
        let dir_lock = crate::dir_lock::lock(&config.log_dir)?;
        // Every partition and connection holds a descriptor: take all the process may have.
        let nofile = crate::fd_limit::raise_nofile_limit();
        let max_partitions = config.max_partitions.unwrap_or_else(|| crate::fd_limit::default_max_partitions(nofile));
        let opened = {
            let config = config.clone();
            tokio::task::spawn_blocking(move || {
                let mut m = LogManager::open(&config.log_dir, config.log.clone(), config.topic_overrides.clone())?;
                m.set_max_topic_name_length(config.max_topic_name_length);
                m.set_max_partitions(Some(max_partitions));
                // Group commit: log.flush.interval's fsyncs run off the append path.
                m.start_background_flush()?;
                Ok(m)
            })
            .await
            .map_err(|e| StartError::LogTask { dir: dir.clone(), detail: e.to_string() })?
        };
        let logs = opened.map_err(|source| StartError::Log { dir: dir.clone(), source })?;
        for w in logs.load_warnings() {
            warn!("{w}");
        }
        let recovered = logs.recovered();
        let defaults = BrokerDefaults {
            log: config.log.clone(),
            topic_overrides: config.topic_overrides.clone(),
            num_partitions: config.num_partitions,
            partition_counts: config.partition_counts.clone(),
        };
        let state = Arc::new(BrokerState::new(Arc::new(logs), defaults, config.max_topic_name_length));
        state.set_request_decompression_budget(config.max_decompressed_per_request);
        if config.zookeeper.is_none() {
            // Standalone: the topic configuration lives in a file in the log dir.
            let loaded = {
                let state = state.clone();
                tokio::task::spawn_blocking(move || crate::topic_apply::load_standalone(&state))
                    .await
                    .map_err(|e| StartError::LogTask { dir: dir.clone(), detail: e.to_string() })?
            };
            loaded.map_err(|e| StartError::TopicConfig { dir: dir.clone(), detail: e.to_string() })?;
        }

        let listener = bind(&config)?;
        let local_addr =
            listener.local_addr().map_err(|source| StartError::Listen { addr: local_addr_of(&config), source })?;
        let (shutdown, shutdown_rx) = watch::channel(false);
        let limits = ConnectionLimits {
            max_request_size: config.max_request_size,
            idle_timeout: config.idle_timeout,
            request_timeout: config.request_timeout,
        };
        let processors = Arc::new(
            Processors::start(config.num_threads)
                .map_err(|source| StartError::Processors { count: config.num_threads, source })?,
        );
        let table = ConnectionTable::new(TableLimits {
            max_connections: config.max_connections,
            max_per_ip: config.max_connections_per_ip,
            max_buffered: config.max_buffered_request_bytes,
            shed_grace: SHED_GRACE.min(config.request_timeout),
        });
        let accept_task =
            tokio::spawn(accept_loop(listener, state.clone(), processors.clone(), limits, table, shutdown_rx.clone()));
        info!(
            "kwire07-broker {} listening on {local_addr}, log dir {} ({} topics; {})",
            config.broker_id,
            config.log_dir.display(),
            state.topics().len(),
            if recovered { "no clean-shutdown marker: recovery ran" } else { "clean-shutdown marker found" }
        );

        let mut background = vec![
            tokio::spawn(flush_task(state.clone(), config.flush_scheduler_interval, shutdown_rx.clone())),
            tokio::spawn(cleanup_task(
                state.clone(),
                config.cleanup_delay,
                config.cleanup_interval,
                shutdown_rx.clone(),
            )),
        ];
        let registrar = match &config.zookeeper {
            None => None,
            Some(zk_config) => {
                let reg = Registration {
                    broker_id: config.broker_id,
                    host: published_host(&config),
                    port: local_addr.port(),
                };
                match zk::start(zk_config.clone(), reg, state.clone(), shutdown_rx.clone()).await {
                    Ok(r) => Some(r),
                    Err(e) => {
                        let _ = shutdown.send(true);
                        if let Ok(set) = accept_task.await {
                            drain(set).await;
                        }
                        for t in background.drain(..) {
                            let _ = t.await;
                        }
                        let logs = state.logs().clone();
                        let _ = tokio::task::spawn_blocking(move || logs.shutdown()).await;
                        return Err(e.into());
                    }
                }
            }
        };
        Ok(Broker { state, local_addr, shutdown, accept_task, processors, background, registrar, _dir_lock: dir_lock })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Resolves when an append or flush failed with an I/O error and the broker must stop at
    /// once without a clean shutdown (0.7 halts the process with exit status 1; so does
    /// `kwire07-broker`). Its reason says what failed.
    pub async fn halted(&self) -> String {
        self.state.halted().await
    }

    /// The shared state: log manager, live partition counts and topic overrides.
    pub fn state(&self) -> &Arc<BrokerState> {
        &self.state
    }

    /// Stops accepting, waits for connections to finish their current request, unregisters
    /// from ZooKeeper, then flushes every log and writes the clean-shutdown marker.
    pub async fn shutdown(self) -> Result<(), ShutdownError> {
        info!("shutting down");
        let _ = self.shutdown.send(true);
        if let Ok(set) = self.accept_task.await {
            drain(set).await;
        }
        drop(self.processors);
        for t in self.background {
            let _ = t.await;
        }
        if let Some(r) = self.registrar {
            let _ = r.task.await;
        }
        let logs = self.state.logs().clone();
        tokio::task::spawn_blocking(move || logs.shutdown())
            .await
            .map_err(|e| LogError::Closed(e.to_string().into()))??;
        info!("clean shutdown complete");
        Ok(())
    }
}

fn local_addr_of(config: &BrokerConfig) -> SocketAddr {
    SocketAddr::new(config.bind, config.port)
}

async fn drain(mut set: JoinSet<()>) {
    let all = async { while set.join_next().await.is_some() {} };
    if tokio::time::timeout(DRAIN_TIMEOUT, all).await.is_err() {
        warn!("connections still busy after {DRAIN_TIMEOUT:?}; closing them");
        set.abort_all();
        while set.join_next().await.is_some() {}
    }
}

async fn accept_loop(
    listener: TcpListener,
    state: Arc<BrokerState>,
    processors: Arc<Processors>,
    limits: ConnectionLimits,
    table: Arc<ConnectionTable>,
    mut shutdown: watch::Receiver<bool>,
) -> JoinSet<()> {
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            _ = stopped(&mut shutdown) => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            r = listener.accept() => r,
        };
        let (stream, peer) = match accepted {
            Ok(v) => v,
            Err(e) => {
                // Out of file descriptors and the like: back off instead of spinning.
                warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let admission = match table.admit(peer.ip()) {
            Ok(a) => a,
            Err(refused) => {
                warn!(%peer, "refusing connection: {}", refused.0);
                drop(stream);
                continue;
            }
        };
        debug!(%peer, "accepted");
        // The socket moves to its processor's runtime (registered there, not here).
        let stream = match stream.into_std() {
            Ok(s) => s,
            Err(e) => {
                warn!(%peer, "dropping connection: {e}");
                continue;
            }
        };
        let (state, shutdown) = (state.clone(), shutdown.clone());
        processors.spawn(&mut connections, async move {
            match tokio::net::TcpStream::from_std(stream) {
                Ok(stream) => serve(stream, peer, state, limits, admission, shutdown).await,
                Err(e) => warn!(%peer, "dropping connection: {e}"),
            }
        });
    }
    connections
}

async fn flush_task(state: Arc<BrokerState>, interval: Duration, mut shutdown: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = stopped(&mut shutdown) => return,
            _ = tokio::time::sleep(interval) => {}
        }
        let (errors, dropped) = state.logs().take_flush_errors();
        if dropped > 0 {
            error!("{dropped} more background flushes failed");
        }
        if let Some(e) = errors.first() {
            state.halt(format!("background flush failed: {e}"));
        }
        let logs = state.logs().clone();
        match tokio::task::spawn_blocking(move || logs.flush_due()).await {
            Ok(Ok(n)) if n > 0 => debug!(logs = n, "time-based flush"),
            Ok(Ok(_)) => {}
            Ok(Err(e)) => state.halt(format!("time-based flush failed: {e}")),
            Err(e) => error!("time-based flush task failed: {e}"),
        }
    }
}

async fn cleanup_task(
    state: Arc<BrokerState>,
    delay: Duration,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut wait = delay;
    loop {
        tokio::select! {
            _ = stopped(&mut shutdown) => return,
            _ = tokio::time::sleep(wait) => {}
        }
        wait = interval;
        let logs = state.logs().clone();
        match tokio::task::spawn_blocking(move || logs.cleanup()).await {
            Ok(Ok(info)) if info.segments_deleted > 0 => {
                info!(segments = info.segments_deleted, bytes = info.bytes_deleted, "retention deleted old segments")
            }
            Ok(Ok(_)) => {}
            Ok(Err(e)) => error!("retention cleanup failed: {e}"),
            Err(e) => error!("retention cleanup task failed: {e}"),
        }
    }
}
