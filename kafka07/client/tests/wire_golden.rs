//! The producer's bytes on the wire against the spec's hand-written examples (spec §1.4, §2.1),
//! captured by a plain TCP listener standing in for the broker.

use std::io::Read;
use std::net::TcpListener;

use kwire07_client::producer::{Discovery, Producer, ProducerConfig, Record};
use kwire07_client::Magic;

fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

async fn captured(magic: Magic, n: usize) -> Vec<u8> {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let reader = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("accept");
        let mut buf = vec![0u8; n];
        s.read_exact(&mut buf).expect("read the request");
        buf
    });
    let mut config = ProducerConfig::new(Discovery::Static(vec![addr]));
    config.magic = magic;
    let mut producer = Producer::new(config).await.expect("producer");
    producer.send(Record::new("t1", &b"hello"[..]).with_partition(0)).await.expect("send");
    producer.flush().await.expect("flush");
    tokio::task::spawn_blocking(move || reader.join().expect("reader")).await.expect("join")
}

#[tokio::test]
async fn produce_request_matches_the_spec_example() {
    // Spec §1.4: topic "t1", partition 0, one v0 message "hello".
    let want = unhex("0000001c 0000 0002 7431 00000000 0000000e 0000000a 00 3610a686 68656c6c6f");
    assert_eq!(captured(Magic::V0, want.len()).await, want);
    // The same with the v1 message of spec §2.1 (one byte longer).
    let want = unhex("0000001d 0000 0002 7431 00000000 0000000f 0000000b 01 00 3610a686 68656c6c6f");
    assert_eq!(captured(Magic::V1, want.len()).await, want);
}
