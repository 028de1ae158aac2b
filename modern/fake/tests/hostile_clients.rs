//! Clients that send garbage, oversized frames or nothing at all lose their connection; the
//! node keeps serving everyone else.

mod support;

use std::time::Duration;

use kwire::messages::MetadataRequest;
use kwire_connection::{Client, ClientConfig};
use kwire_fake::{FakeCluster, FakeConfig};
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

/// A process's memory figure from /proc (`VmRSS`, `VmHWM`), in MiB.
fn vm_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<f64>().unwrap() / 1024.0
}

/// 48 clients each send 12 MiB of a request announced at 16 MiB, then stop: a node reading
/// whatever arrives would hold 576 MiB. The budget for requests still arriving (32 MiB here)
/// bounds what the binary holds instead, and once the clients go the node serves again. (The
/// request timeout is long here: a client closed for it frees room for the next, whose buffer
/// the allocator may place beside the freed one, which would measure the allocator.)
#[test]
fn requests_arriving_slowly_are_held_within_the_budget() {
    use std::io::Write;

    const CLIENTS: usize = 48;
    const SENT: usize = 12 << 20;
    const BUDGET_MIB: usize = 32;
    let (max_frame, budget) = ((16 << 20).to_string(), (BUDGET_MIB << 20).to_string());
    // Killed when dropped, whatever the test comes to.
    let fake = support::fake(&[
        "--max-frame",
        &max_frame,
        "--request-timeout-ms",
        "60000",
        "--max-buffered-request-bytes",
        &budget,
    ]);
    let addr = fake.bootstrap.clone();
    let before = vm_mib(fake.pid(), "VmRSS:");

    let clients: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let addr = addr.clone();
            std::thread::spawn(move || {
                let mut socket = std::net::TcpStream::connect(&addr).unwrap();
                // Writes stop returning once the node stops reading (and the socket buffers fill).
                socket.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
                let mut request = (16i32 << 20).to_be_bytes().to_vec();
                request.resize(4 + SENT, 7);
                let _ = socket.write_all(&request);
                socket
            })
        })
        .collect();
    let sockets: Vec<_> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let grown = vm_mib(fake.pid(), "VmHWM:") - before;
    println!("{CLIENTS} clients × {} MiB sent: the node's peak grew by {grown:.1} MiB", SENT >> 20);
    // The budget, plus a read's room per client and the runtime's own: 576 MiB without it.
    let bound = 1.5 * BUDGET_MIB as f64;
    assert!(grown < bound, "peak memory grew by {grown:.1} MiB, over {bound} MiB ({BUDGET_MIB} MiB budget)");

    // Once they go, their room is free and the node serves others.
    drop(sockets);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = Client::connect(&addr, ClientConfig::default()).await.unwrap();
        assert!(client.send(MetadataRequest::default()).await.is_ok());
    });
}
