//! `Cluster` against a scripted one-broker cluster: the connection opened to the bootstrap
//! server is the one used after (the old cluster dropped it, and its first produce took three
//! handshakes); a closed connection is dropped and opened again; the coordinator is found
//! again after NOT_COORDINATOR or a lost connection; a FindCoordinator v4+ answer without the
//! key asked for is an error (the old one routed to broker 0, the top-level default); a
//! Metadata answer of REBOOTSTRAP_REQUIRED (KIP-1102) starts again from the bootstrap servers.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::peer::{Mode, Options, Peer};
use kwire::messages::{ApiKey, MetadataRequest};
use kwire::{ErrorCode, Records};
use kwire_connection::{ClientConfig, Cluster, CoordinatorType, Error};

async fn cluster(peer: &Peer) -> Cluster {
    Cluster::connect(&[&peer.address()], ClientConfig::default()).await.unwrap()
}

#[tokio::test]
async fn the_first_produce_after_connect_reuses_the_bootstrap_connection() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = cluster(&peer).await;
    cluster.produce("t", 0, Records::default(), 1, Duration::from_secs(5)).await.unwrap();
    cluster.coordinator(CoordinatorType::Group, "g").await.unwrap();
    assert_eq!(peer.accepted(), 1);
    assert_eq!(peer.requests(ApiKey::ApiVersions), 1, "one handshake");
}

#[tokio::test]
async fn a_closed_connection_is_dropped_and_opened_again() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = cluster(&peer).await;
    let before = cluster.broker(0).await.unwrap();
    peer.set(Mode::Hangup);
    let error = before.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(error, Error::Closed(_) | Error::Io(_)), "{error}");
    assert!(before.is_closed());
    peer.set(Mode::Serve);
    for client in [cluster.broker(0).await.unwrap(), cluster.any().await.unwrap()] {
        assert!(!client.is_closed(), "the cluster handed out its closed client");
        client.send(MetadataRequest::default()).await.unwrap();
    }
    assert_eq!(peer.accepted(), 2, "one connection opened again, and kept");
}

#[tokio::test]
async fn not_coordinator_sends_the_next_try_to_find_coordinator() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = cluster(&peer).await;
    cluster.coordinator(CoordinatorType::Group, "g").await.unwrap();
    cluster.coordinator(CoordinatorType::Group, "g").await.unwrap();
    assert_eq!(peer.requests(ApiKey::FindCoordinator), 1, "the coordinator is kept");
    let tries = AtomicUsize::new(0);
    let answer = cluster
        .with_coordinator(CoordinatorType::Group, "g", |client| {
            let first = tries.fetch_add(1, Ordering::SeqCst) == 0;
            async move {
                if first {
                    return Err(Error::Broker {
                        api: ApiKey::OffsetFetch,
                        code: ErrorCode::NOT_COORDINATOR,
                        message: None,
                    });
                }
                client.send(MetadataRequest::default()).await
            }
        })
        .await;
    answer.unwrap();
    assert_eq!(tries.load(Ordering::SeqCst), 2);
    assert_eq!(peer.requests(ApiKey::FindCoordinator), 2, "NOT_COORDINATOR did not send it to FindCoordinator");
}

#[tokio::test]
async fn a_lost_coordinator_connection_is_found_again() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = cluster(&peer).await;
    let coordinator = cluster.coordinator(CoordinatorType::Transaction, "txn").await.unwrap();
    peer.set(Mode::Hangup);
    let answer = cluster
        .with_coordinator(CoordinatorType::Transaction, "txn", |client| {
            let peer = peer.clone();
            async move {
                let answer = client.send(MetadataRequest::default()).await;
                // The connection is lost on the first try; the peer answers from then on.
                peer.set(Mode::Serve);
                answer
            }
        })
        .await;
    answer.unwrap();
    assert!(coordinator.is_closed());
    assert_eq!(peer.requests(ApiKey::FindCoordinator), 2);
    let again = cluster.coordinator(CoordinatorType::Transaction, "txn").await.unwrap();
    assert!(!again.is_closed());
}

#[tokio::test]
async fn find_coordinator_v4_without_the_key_is_an_error() {
    let peer = Peer::start(Mode::Serve, Options { no_coordinators: true, ..Options::default() }).await;
    let cluster = cluster(&peer).await;
    let error = cluster.coordinator(CoordinatorType::Group, "g").await.unwrap_err();
    assert!(matches!(&error, Error::Protocol(message) if message.contains("\"g\"")), "{error}");
    assert_eq!(peer.requests(ApiKey::FindCoordinator), 1, "a protocol error is not retried");
}

#[tokio::test]
async fn rebootstrap_required_reconnects_through_the_bootstrap_servers() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = cluster(&peer).await;
    peer.rebootstrap_next(1);
    cluster.refresh(&["t"]).await.unwrap();
    assert_eq!(peer.metadata_topics(), [None, Some("t".into()), Some("t".into())], "asked again after the rebootstrap");
    assert_eq!(peer.accepted(), 2, "a new connection to the bootstrap server");
    cluster.leader("t", 0).await.unwrap().send(MetadataRequest::default()).await.unwrap();
    cluster.any().await.unwrap().send(MetadataRequest::default()).await.unwrap();
    assert_eq!(peer.accepted(), 2, "the new connection is kept and serves the broker");

    // A broker that keeps asking is an error, not a loop.
    peer.rebootstrap_next(2);
    let error = cluster.refresh(&["t"]).await.unwrap_err();
    assert!(matches!(&error, Error::Broker { code: ErrorCode::REBOOTSTRAP_REQUIRED, .. }), "{error}");
}
