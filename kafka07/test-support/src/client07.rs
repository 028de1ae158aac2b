//! A blocking 0.7 client whose requests and messages are encoded here by hand from the spec's
//! byte layouts (not with kwire's own encoder), so that tests of the broker check it against
//! an independent reading of the format.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// A magic-0 message: `i32 len | 0 | crc32(payload) | payload`.
pub fn msg_v0(payload: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(9 + payload.len());
    m.extend_from_slice(&((5 + payload.len()) as i32).to_be_bytes());
    m.push(0);
    m.extend_from_slice(&crc32fast::hash(payload).to_be_bytes());
    m.extend_from_slice(payload);
    m
}

/// A magic-1 message with `attributes`.
pub fn msg_v1(attributes: u8, payload: &[u8]) -> Vec<u8> {
    let mut m = Vec::with_capacity(10 + payload.len());
    m.extend_from_slice(&((6 + payload.len()) as i32).to_be_bytes());
    m.push(1);
    m.push(attributes);
    m.extend_from_slice(&crc32fast::hash(payload).to_be_bytes());
    m.extend_from_slice(payload);
    m
}

pub fn set_v0<P: AsRef<[u8]>>(payloads: &[P]) -> Vec<u8> {
    payloads.iter().flat_map(|p| msg_v0(p.as_ref())).collect()
}

fn topic_partition(out: &mut Vec<u8>, topic: &[u8], partition: i32) {
    out.extend_from_slice(&(topic.len() as i16).to_be_bytes());
    out.extend_from_slice(topic);
    out.extend_from_slice(&partition.to_be_bytes());
}

fn frame(kind: i16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(6 + body.len());
    f.extend_from_slice(&((2 + body.len()) as i32).to_be_bytes());
    f.extend_from_slice(&kind.to_be_bytes());
    f.extend_from_slice(body);
    f
}

pub fn produce_frame(topic: &[u8], partition: i32, set: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    topic_partition(&mut b, topic, partition);
    b.extend_from_slice(&(set.len() as i32).to_be_bytes());
    b.extend_from_slice(set);
    frame(0, &b)
}

pub fn multiproduce_frame(entries: &[(&[u8], i32, Vec<u8>)]) -> Vec<u8> {
    let mut b = (entries.len() as i16).to_be_bytes().to_vec();
    for (topic, partition, set) in entries {
        topic_partition(&mut b, topic, *partition);
        b.extend_from_slice(&(set.len() as i32).to_be_bytes());
        b.extend_from_slice(set);
    }
    frame(3, &b)
}

pub fn fetch_frame(topic: &[u8], partition: i32, offset: i64, max: i32) -> Vec<u8> {
    let mut b = Vec::new();
    topic_partition(&mut b, topic, partition);
    b.extend_from_slice(&offset.to_be_bytes());
    b.extend_from_slice(&max.to_be_bytes());
    frame(1, &b)
}

pub fn multifetch_frame(entries: &[(&[u8], i32, i64, i32)]) -> Vec<u8> {
    let mut b = (entries.len() as i16).to_be_bytes().to_vec();
    for (topic, partition, offset, max) in entries {
        topic_partition(&mut b, topic, *partition);
        b.extend_from_slice(&offset.to_be_bytes());
        b.extend_from_slice(&max.to_be_bytes());
    }
    frame(2, &b)
}

pub fn offsets_frame(topic: &[u8], partition: i32, time: i64, max: i32) -> Vec<u8> {
    let mut b = Vec::new();
    topic_partition(&mut b, topic, partition);
    b.extend_from_slice(&time.to_be_bytes());
    b.extend_from_slice(&max.to_be_bytes());
    frame(4, &b)
}

fn be_i16(b: &[u8]) -> i16 {
    i16::from_be_bytes([b[0], b[1]])
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// A blocking connection with a 10 s read timeout.
pub struct Conn {
    pub stream: TcpStream,
}

impl Conn {
    pub fn connect(addr: SocketAddr) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Conn { stream }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write request");
    }

    /// `i32 size | i16 error | body`.
    pub fn response(&mut self) -> (i16, Vec<u8>) {
        let mut size = [0u8; 4];
        self.stream.read_exact(&mut size).expect("response size");
        let size = be_i32(&size);
        assert!(size >= 2, "response size {size}");
        let mut body = vec![0u8; size as usize];
        self.stream.read_exact(&mut body).expect("response body");
        (be_i16(&body), body[2..].to_vec())
    }

    /// Whether the broker closed the connection (EOF) within the read timeout.
    pub fn is_closed_by_peer(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.stream.read(&mut b) {
            Ok(0) => true,
            Ok(_) => false,
            Err(e) => matches!(e.kind(), std::io::ErrorKind::ConnectionReset),
        }
    }

    pub fn produce(&mut self, topic: &str, partition: i32, set: &[u8]) {
        self.send(&produce_frame(topic.as_bytes(), partition, set));
    }

    pub fn fetch(&mut self, topic: &str, partition: i32, offset: i64, max: i32) -> (i16, Vec<u8>) {
        self.send(&fetch_frame(topic.as_bytes(), partition, offset, max));
        self.response()
    }

    pub fn multifetch(&mut self, entries: &[(&str, i32, i64, i32)]) -> Vec<(i16, Vec<u8>)> {
        let e: Vec<(&[u8], i32, i64, i32)> = entries.iter().map(|(t, p, o, m)| (t.as_bytes(), *p, *o, *m)).collect();
        self.send(&multifetch_frame(&e));
        let (top, body) = self.response();
        assert_eq!(top, 0, "multifetch top-level error");
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < body.len() {
            let len = be_i32(&body[pos..]) as usize;
            let err = be_i16(&body[pos + 4..]);
            out.push((err, body[pos + 6..pos + 4 + len].to_vec()));
            pos += 4 + len;
        }
        assert_eq!(out.len(), entries.len(), "one entry per request entry");
        out
    }

    pub fn offsets(&mut self, topic: &str, partition: i32, time: i64, max: i32) -> (i16, Vec<i64>) {
        self.send(&offsets_frame(topic.as_bytes(), partition, time, max));
        let (err, body) = self.response();
        if body.is_empty() {
            return (err, Vec::new());
        }
        let n = be_i32(&body) as usize;
        assert_eq!(body.len(), 4 + 8 * n, "offsets body length");
        let offsets = (0..n).map(|i| i64::from_be_bytes(body[4 + 8 * i..12 + 8 * i].try_into().unwrap())).collect();
        (err, offsets)
    }

    /// Fetches from `offset` until the end of the log, following segment boundaries.
    pub fn fetch_all(&mut self, topic: &str, partition: i32, mut offset: i64) -> Vec<(i64, Vec<u8>)> {
        let mut out = Vec::new();
        loop {
            let (err, data) = self.fetch(topic, partition, offset, 64 * 1024);
            assert_eq!(err, 0, "fetch {topic}-{partition} at {offset}");
            let msgs = parse_set(&data, offset);
            if msgs.is_empty() {
                let (_, latest) = self.offsets(topic, partition, -1, 1);
                if latest.first().is_none_or(|&end| end <= offset) {
                    return out;
                }
                panic!("no complete message at {offset} before the end {latest:?}");
            }
            for (o, next, payload) in msgs {
                out.push((o, payload));
                offset = next;
            }
        }
    }
}

/// Complete messages of a fetched set: (offset, next offset, payload). Checks every CRC.
pub fn parse_set(data: &[u8], base: i64) -> Vec<(i64, i64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while data.len() - pos >= 4 {
        let len = be_i32(&data[pos..]);
        assert!(len >= 5, "message length {len} at {}", base + pos as i64);
        let len = len as usize;
        if data.len() - pos - 4 < len {
            break;
        }
        let m = &data[pos + 4..pos + 4 + len];
        let header = match m[0] {
            0 => 5,
            1 => 6,
            other => panic!("magic {other} at {}", base + pos as i64),
        };
        let crc = u32::from_be_bytes(m[header - 4..header].try_into().unwrap());
        let payload = &m[header..];
        assert_eq!(crc, crc32fast::hash(payload), "CRC of the message at {}", base + pos as i64);
        out.push((base + pos as i64, base + (pos + 4 + len) as i64, payload.to_vec()));
        pos += 4 + len;
    }
    out
}
