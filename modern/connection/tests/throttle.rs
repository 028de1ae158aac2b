//! Honouring `throttle_time_ms` (KIP-219) against a scripted peer that answers the handshake,
//! then a Metadata request with a 400 ms throttle, and notes when the next request arrives:
//! with `honour_throttle` (the default) it is written only after the throttle, without it at
//! once. (Against Kafka, whose muted socket hides the difference, see kafka_broker.rs.)

use std::time::{Duration, Instant};

use kwire::messages::api_versions_response::ApiVersion;
use kwire::messages::{
    ApiKey, ApiVersionsResponse, MetadataRequest, MetadataResponse, RequestFrame, ResponseFrame, ResponseKind,
};
use kwire::{Bytes, BytesMut};
use kwire_connection::{Client, ClientConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const THROTTLE: Duration = Duration::from_millis(400);

async fn read_request(socket: &mut TcpStream) -> RequestFrame {
    let size = socket.read_i32().await.unwrap();
    let mut body = vec![0; size as usize];
    socket.read_exact(&mut body).await.unwrap();
    RequestFrame::decode(Bytes::from(body)).unwrap()
}

async fn answer(socket: &mut TcpStream, request: &RequestFrame, body: impl Into<ResponseKind>) {
    let mut out = BytesMut::new();
    ResponseFrame::new(body, request.header.correlation_id).encode(&mut out, request.version()).unwrap();
    socket.write_all(&out).await.unwrap();
}

/// Serves one client; returns when the request after the throttled one arrived, and the
/// throttle's end as the client computed it.
async fn run(config: ClientConfig) -> (Instant, Instant) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let hello = read_request(&mut socket).await;
        let versions = [(ApiKey::ApiVersions, 4), (ApiKey::Metadata, 12)].map(|(api, max)| ApiVersion {
            api_key: api.key(),
            min_version: 0,
            max_version: max,
            ..Default::default()
        });
        answer(
            &mut socket,
            &hello,
            ApiVersionsResponse { api_keys: versions.into_iter().collect(), ..Default::default() },
        )
        .await;
        let first = read_request(&mut socket).await;
        answer(
            &mut socket,
            &first,
            MetadataResponse { throttle_time_ms: THROTTLE.as_millis() as i32, ..Default::default() },
        )
        .await;
        let second = read_request(&mut socket).await;
        let arrived = Instant::now();
        answer(&mut socket, &second, MetadataResponse::default()).await;
        arrived
    });
    let client = Client::connect(addr, config).await.unwrap();
    client.send(MetadataRequest::default()).await.unwrap();
    let until = client.throttled_until().expect("the throttle is reported");
    client.send(MetadataRequest::default()).await.unwrap();
    (peer.await.unwrap(), until)
}

#[tokio::test]
async fn the_next_request_waits_out_the_throttle() {
    let (arrived, until) = run(ClientConfig::default()).await;
    assert!(arrived >= until, "written {:?} before the throttle ended", until - arrived);
}

#[tokio::test]
async fn without_honour_throttle_the_next_request_goes_at_once() {
    let (arrived, until) = run(ClientConfig::default().honour_throttle(false)).await;
    assert!(arrived < until, "held back {:?} past the throttle", arrived - until);
}
