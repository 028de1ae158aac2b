//! Clients that send garbage, oversized frames or nothing at all lose their connection; the
//! node keeps serving everyone else.

use std::time::Duration;

use kafka_wire::messages::MetadataRequest;
use kafka_wire_connection::{Client, ClientConfig};
use kafka_wire_fake::{FakeCluster, FakeConfig};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Whether the node closes `socket` within a few seconds (read returns 0 or an error).
async fn closed(mut socket: TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(tokio::time::timeout(Duration::from_secs(5), socket.read(&mut buf)).await, Ok(Ok(0) | Err(_)))
}

#[tokio::test]
async fn garbage_oversized_and_silent_connections_are_closed() {
    let config = FakeConfig::default().max_frame(1 << 20).idle_timeout(Duration::from_millis(300));
    let fake = FakeCluster::start(config).await.unwrap();
    let addr = fake.listen_addrs()[0];

    // A frame claiming 200 MiB: closed before anything is buffered for it.
    let mut big = TcpStream::connect(addr).await.unwrap();
    big.write_all(&(200i32 << 20).to_be_bytes()).await.unwrap();
    assert!(closed(big).await, "an oversized frame closes its connection");

    // A frame of an API key that does not exist.
    let mut garbage = TcpStream::connect(addr).await.unwrap();
    garbage.write_all(&[0, 0, 0, 10, 0x7f, 0x7f, 0, 0, 0, 0, 0, 1, 0xff, 0xff]).await.unwrap();
    assert!(closed(garbage).await, "an unknown API closes its connection");

    // A Metadata request cut short inside its body.
    let mut cut = TcpStream::connect(addr).await.unwrap();
    cut.write_all(&[0, 0, 0, 12, 0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 0x05, 0xff]).await.unwrap();
    assert!(closed(cut).await, "an unreadable request closes its connection");

    // Silence past the idle timeout.
    let silent = TcpStream::connect(addr).await.unwrap();
    assert!(closed(silent).await, "an idle connection is closed");

    // Everyone else is still served.
    let client = Client::connect(&addr.to_string(), ClientConfig::default()).await.unwrap();
    let metadata = client.send(MetadataRequest::default()).await.unwrap();
    assert_eq!(metadata.brokers.len(), 1);
    fake.shutdown().await;
}

#[tokio::test]
async fn connections_past_the_limit_are_shed() {
    let fake = FakeCluster::start(FakeConfig::default().max_connections(2)).await.unwrap();
    let addr = fake.listen_addrs()[0];
    let kept = [TcpStream::connect(addr).await.unwrap(), TcpStream::connect(addr).await.unwrap()];
    // Let the node count them before the third arrives.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let third = TcpStream::connect(addr).await.unwrap();
    assert!(closed(third).await, "the third connection is closed as it arrives");
    drop(kept);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let client = Client::connect(&addr.to_string(), ClientConfig::default()).await.unwrap();
    assert!(client.send(MetadataRequest::default()).await.is_ok(), "room again once they leave");
    fake.shutdown().await;
}
