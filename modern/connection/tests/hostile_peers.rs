//! Brokers that stop answering, against scripted peers: one that goes silent with the socket
//! open after ApiVersions, one that drips its answer a byte a second. The caller gets a typed
//! error within its timeout, the connection closes rather than hang every later request, a
//! caller that gives up never leaves a permit behind, and a `Cluster` serves the next request
//! once the peer answers again.

mod common;

use std::time::{Duration, Instant};

use common::peer::{cluster_recovers, eventually, Mode, Options, Peer, MARGIN};
use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::{ApiKey, MetadataRequest};
use kwire::Records;
use kwire_connection::{Client, ClientConfig, Cluster, Error};

const TIMEOUT: Duration = Duration::from_millis(500);

fn config() -> ClientConfig {
    ClientConfig::default().request_timeout(TIMEOUT)
}

fn metadata_for(topic: &str) -> MetadataRequest {
    MetadataRequest {
        topics: Some(vec![MetadataRequestTopic { name: Some(topic.into()), ..Default::default() }]),
        ..Default::default()
    }
}

/// A request to a silent broker fails with `Timeout`, and its connection is closed; the old
/// client kept the connection open and every later request timed out as well.
async fn times_out_and_closes(client: &Client) {
    let start = Instant::now();
    let error = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(error, Error::Timeout(t) if t == TIMEOUT), "{error}");
    assert!(start.elapsed() < TIMEOUT + MARGIN);
    assert!(client.is_closed(), "a request that timed out leaves its connection open");
    let start = Instant::now();
    let error = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(error, Error::Closed(Some(_))), "{error}");
    assert!(start.elapsed() < TIMEOUT, "a closed connection still waited {:?}", start.elapsed());
}

#[tokio::test]
async fn a_broker_silent_after_api_versions_times_out_closes_and_the_cluster_reconnects() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let mut cluster = Cluster::connect(&[&peer.address()], config()).await.unwrap();
    cluster.attempts = 1;
    let client = cluster.any().await.unwrap();
    peer.set(Mode::Silent);
    times_out_and_closes(&client).await;
    // Through the cluster, too: the error is typed, and comes within the timeout.
    let start = Instant::now();
    let error = cluster.produce("t", 0, Records::default(), 1, Duration::from_secs(5)).await.unwrap_err();
    assert!(matches!(&error, Error::RetriesExhausted { last, .. } if matches!(**last, Error::Timeout(_))), "{error}");
    assert!(start.elapsed() < TIMEOUT + MARGIN);
    cluster_recovers(&cluster, &peer).await;
}

#[tokio::test]
async fn a_broker_that_drips_its_answer_times_out_and_the_cluster_reconnects() {
    let peer = Peer::start(Mode::Serve, Options::default()).await;
    let cluster = Cluster::connect(&[&peer.address()], config()).await.unwrap();
    let client = cluster.any().await.unwrap();
    peer.set(Mode::Drip);
    times_out_and_closes(&client).await;
    cluster_recovers(&cluster, &peer).await;
}

/// Two requests in flight time out; the third, which waited for a permit, gets the
/// connection's `Closed` at that moment instead of waiting out a timeout of its own.
#[tokio::test]
async fn one_timeout_fails_every_waiter_with_a_typed_error() {
    let peer = Peer::start(Mode::Silent, Options::default()).await;
    let timeout = Duration::from_secs(1);
    let config = ClientConfig::default().request_timeout(timeout).max_in_flight(2);
    let client = Client::connect(peer.addr(), config).await.unwrap();
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.send(MetadataRequest::default()).await }
    });
    let second = tokio::spawn({
        let client = client.clone();
        async move { client.send(MetadataRequest::default()).await }
    });
    eventually("both requests written", || peer.requests(ApiKey::Metadata) == 2).await;
    tokio::time::sleep(timeout / 2).await;
    let third = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(third, Error::Closed(Some(_))), "{third}");
    for waiter in [first, second] {
        let error = waiter.await.unwrap().unwrap_err();
        assert!(matches!(error, Error::Timeout(_) | Error::Closed(_)), "{error}");
    }
    assert_eq!(peer.requests(ApiKey::Metadata), 2, "the request waiting for a permit was written");
}

/// Callers that drop their futures once their requests are written hold no permit for ever:
/// the connection times those requests out itself and closes (the old one kept both permits,
/// and every later request waited for one until its own timeout).
#[tokio::test]
async fn callers_that_give_up_cannot_exhaust_the_in_flight_limit() {
    let peer = Peer::start(Mode::Silent, Options::default()).await;
    let client = Client::connect(peer.addr(), config().max_in_flight(2)).await.unwrap();
    let callers: Vec<_> = (0..2)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move { client.send(MetadataRequest::default()).await })
        })
        .collect();
    eventually("both requests written", || peer.requests(ApiKey::Metadata) == 2).await;
    for caller in callers {
        caller.abort();
    }
    eventually("the connection closed by its own timeout", || client.is_closed()).await;
    let error = client.send(MetadataRequest::default()).await.unwrap_err();
    assert!(matches!(error, Error::Closed(Some(_))), "{error}");
}

/// A caller that gives up while its request waits to be written (here, behind a throttle)
/// has it skipped: the broker never sees it. The old writer wrote it all the same.
#[tokio::test]
async fn a_request_whose_caller_is_gone_is_not_written() {
    let peer = Peer::start(Mode::Serve, Options { throttle_ms: 1000, ..Options::default() }).await;
    let client = Client::connect(peer.addr(), ClientConfig::default()).await.unwrap();
    client.send(metadata_for("first")).await.unwrap();
    let gone = tokio::spawn({
        let client = client.clone();
        async move { client.send(metadata_for("gone")).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    gone.abort();
    client.send(metadata_for("kept")).await.unwrap();
    let seen = peer.metadata_topics();
    assert_eq!(seen, [Some("first".to_string()), Some("kept".to_string())]);
    assert!(!client.is_closed(), "a caller that gave up before the write closed the connection");
}
