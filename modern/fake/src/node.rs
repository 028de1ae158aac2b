//! A node's listener: a task per socket, a limit on how many, and an explicit stop.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::connection;
use crate::shared::Shared;

/// A running node.
#[derive(Debug)]
pub(crate) struct NodeHandle {
    pub addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl NodeHandle {
    /// Closes the listener and every connection, and waits for them.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}

/// Starts serving `listener` as node `id`.
pub(crate) fn spawn(id: i32, listener: TcpListener, shared: Arc<Shared>) -> io::Result<NodeHandle> {
    let addr = listener.local_addr()?;
    let (stop, stopped) = watch::channel(false);
    let task = tokio::spawn(accept_loop(id, listener, shared, stopped));
    Ok(NodeHandle { addr, stop, task })
}

async fn accept_loop(id: i32, listener: TcpListener, shared: Arc<Shared>, mut stopped: watch::Receiver<bool>) {
    let open = Arc::new(AtomicUsize::new(0));
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = stopped.changed() => break,
            accepted = listener.accept() => {
                let Ok((socket, peer)) = accepted else { continue };
                // Shedding: past the limit a connection is closed as it arrives, so that a
                // client opening sockets in a loop costs a node nothing it keeps.
                if open.load(Ordering::Relaxed) >= shared.config.max_connections {
                    tracing::debug!(node = id, %peer, "connection limit reached: closed");
                    continue;
                }
                let _ = socket.set_nodelay(true);
                open.fetch_add(1, Ordering::Relaxed);
                let (open, shared, stopped) = (open.clone(), shared.clone(), stopped.clone());
                connections.spawn(async move {
                    connection::serve(socket, id, shared, stopped).await;
                    open.fetch_sub(1, Ordering::Relaxed);
                });
            }
            // Reap finished connection tasks as they end.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}
