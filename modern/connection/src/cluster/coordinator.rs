//! The coordinator of a group or transactional id: found with FindCoordinator, kept until it
//! stops being the coordinator (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE) or its connection
//! is lost, then found again.

use std::future::Future;

use kwire::messages::find_coordinator_request::FindCoordinatorRequest;
use kwire::messages::ApiKey;
use kwire::ErrorCode;

use super::{Cluster, CoordinatorType};
use crate::{Client, Error};

/// Whether `error` says to ask FindCoordinator again rather than retry the same broker.
fn loses_coordinator(error: &Error) -> bool {
    match error {
        Error::Broker { code, .. } => [ErrorCode::NOT_COORDINATOR, ErrorCode::COORDINATOR_NOT_AVAILABLE].contains(code),
        Error::Io(_) | Error::Closed(_) | Error::Timeout(_) | Error::Routing(_) => true,
        _ => false,
    }
}

impl Cluster {
    /// The connection to the coordinator of a group or transactional id. While the cluster
    /// creates the internal topic behind it, Kafka answers COORDINATOR_NOT_AVAILABLE: that and
    /// the other retriable answers are retried, `attempts` times in all.
    pub async fn coordinator(&self, kind: CoordinatorType, key: &str) -> Result<Client, Error> {
        self.retrying(|| async {
            let result = self.coordinator_once(kind, key).await;
            if let Err(e) = &result {
                self.forget_coordinator(kind, key, e).await;
            }
            result
        })
        .await
    }

    /// Runs `attempt` against the coordinator of `key`; an answer of NOT_COORDINATOR (return
    /// it as [`Error::Broker`]) or a lost connection sends the next try to FindCoordinator
    /// again, and retries go as [`Cluster::retrying`] says.
    pub async fn with_coordinator<T, F, Fut>(&self, kind: CoordinatorType, key: &str, attempt: F) -> Result<T, Error>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, Error>>,
    {
        self.retrying(|| async {
            let result = match self.coordinator_once(kind, key).await {
                Ok(client) => attempt(client).await,
                Err(e) => Err(e),
            };
            if let Err(e) = &result {
                self.forget_coordinator(kind, key, e).await;
            }
            result
        })
        .await
    }

    async fn forget_coordinator(&self, kind: CoordinatorType, key: &str, error: &Error) {
        if loses_coordinator(error) {
            self.routes.lock().await.coordinators.remove(&(kind, key.to_string()));
        }
    }

    /// The known coordinator's connection, or FindCoordinator's answer.
    async fn coordinator_once(&self, kind: CoordinatorType, key: &str) -> Result<Client, Error> {
        let known = self.routes.lock().await.coordinators.get(&(kind, key.to_string())).copied();
        match known {
            Some(id) => self.broker(id).await,
            None => self.find_coordinator(kind, key).await,
        }
    }

    /// FindCoordinator for `key`. From v4 the answer is a list by key (KIP-699): one without
    /// an entry for `key` is a protocol error, not the defaults of the top-level fields.
    async fn find_coordinator(&self, kind: CoordinatorType, key: &str) -> Result<Client, Error> {
        let client = self.any().await?;
        let version =
            client.version_of(ApiKey::FindCoordinator).ok_or(Error::NoCommonVersion(ApiKey::FindCoordinator))?;
        let mut request = FindCoordinatorRequest { key_type: kind as i8, ..Default::default() };
        if version >= 4 {
            request.coordinator_keys = vec![key.into()];
        } else {
            request.key = key.into();
        }
        let answer = client.send_at(request, version).await?;
        let (node, host, port, code, message) = if version >= 4 {
            let entry = answer.coordinators.into_iter().find(|c| c.key.as_str() == key).ok_or_else(|| {
                Error::Protocol(format!("FindCoordinator v{version} answered no coordinator for {key:?}"))
            })?;
            (entry.node_id, entry.host, entry.port, entry.error_code, entry.error_message)
        } else {
            (answer.node_id, answer.host, answer.port, answer.error_code, answer.error_message)
        };
        if code != ErrorCode::NONE {
            return Err(Error::Broker { api: ApiKey::FindCoordinator, code, message: message.map(|m| m.to_string()) });
        }
        let id = node.get();
        {
            let mut routes = self.routes.lock().await;
            // A broker newer than the metadata read: FindCoordinator says where it is.
            routes.brokers.entry(id).or_insert_with(|| format!("{host}:{port}"));
            routes.coordinators.insert((kind, key.to_string()), id);
        }
        self.broker(id).await
    }
}
