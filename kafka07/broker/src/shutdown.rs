//! The broker's shutdown signal: a `watch` flag set once (SIGTERM, `Broker::shutdown`), which
//! the accept loop, every connection and the ZooKeeper registrar wait on.

use tokio::sync::watch;

/// Resolves once the shutdown flag is set (or its sender is gone).
pub(crate) async fn stopped(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}
