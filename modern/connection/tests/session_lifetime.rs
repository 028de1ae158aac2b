//! KIP-368 against a scripted peer: SASL PLAIN whose SaslAuthenticate answer gives a session
//! lifetime, and which closes a connection that has not authenticated again when the lifetime
//! ends (as a broker with `connections.max.reauth.ms` does). The client re-authenticates on the
//! same connection before then; the old one ignored the lifetime and its next request after it
//! found the connection closed. A refused or unanswered re-authentication closes the
//! connection with a typed error, and a `Cluster` opens another.

mod common;

use std::time::Duration;

use common::peer::{cluster_recovers, Mode, Options, Peer};
use kwire::messages::{ApiKey, MetadataRequest};
use kwire::{ErrorCode, Records};
use kwire_connection::{Client, ClientConfig, Cluster, Credentials, Error};

const LIFETIME_MS: i64 = 2000;

fn sasl() -> ClientConfig {
    ClientConfig::default().sasl(Credentials::plain("alice", "alice-secret"))
}

async fn peer() -> Peer {
    Peer::start(Mode::Serve, Options { session_lifetime_ms: Some(LIFETIME_MS), ..Options::default() }).await
}

#[tokio::test]
async fn the_client_re_authenticates_before_the_session_ends() {
    let peer = peer().await;
    let client = Client::connect(peer.addr(), sasl()).await.unwrap();
    client.send(MetadataRequest::default()).await.unwrap();
    // Two lifetimes: the peer would have closed the connection at the end of the first.
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_millis(LIFETIME_MS as u64)).await;
        client.send(MetadataRequest::default()).await.unwrap();
    }
    assert!(!client.is_closed());
    assert_eq!(peer.accepted(), 1, "re-authenticated by reconnecting, not on the connection");
    assert!(
        peer.requests(ApiKey::SaslAuthenticate) >= 3,
        "{} SaslAuthenticate",
        peer.requests(ApiKey::SaslAuthenticate)
    );
    assert_eq!(peer.requests(ApiKey::SaslHandshake), peer.requests(ApiKey::SaslAuthenticate));
}

/// A re-authentication the broker refuses closes the connection with Kafka's error, typed.
#[tokio::test]
async fn a_refused_re_authentication_closes_with_the_brokers_error() {
    let options =
        Options { session_lifetime_ms: Some(LIFETIME_MS), refuse_reauthentication: true, ..Options::default() };
    let peer = Peer::start(Mode::Serve, options).await;
    let client = Client::connect(peer.addr(), sasl()).await.unwrap();
    common::peer::eventually("closed after the refusal", || client.is_closed()).await;
    let error = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(error, Error::Authentication { code: ErrorCode::SASL_AUTHENTICATION_FAILED, .. }), "{error}");
}

/// A re-authentication the peer never answers closes the connection within the request
/// timeout (the peer then closes it too, at the session's end), and a `Cluster` reconnects
/// and authenticates anew once the peer answers again.
#[tokio::test]
async fn a_cluster_serves_on_after_a_re_authentication_that_failed() {
    let peer = peer().await;
    let config = sasl().request_timeout(Duration::from_millis(300));
    let cluster = Cluster::connect(&[&peer.address()], config).await.unwrap();
    cluster.produce("t", 0, Records::default(), 1, Duration::from_secs(5)).await.unwrap();
    let client = cluster.any().await.unwrap();
    peer.set(Mode::Silent);
    common::peer::eventually("the connection closed at the session's end", || client.is_closed()).await;
    cluster_recovers(&cluster, &peer).await;
    assert!(peer.accepted() >= 2);
}
