//! Arbitrary bytes from a broker into the sans-io connection, with requests of several APIs
//! and versions in flight: every outcome is a response or a typed error, never a panic, and
//! nothing is held beyond the frame limit.
#![no_main]

use kwire::messages::{ApiVersionsRequest, FetchRequest, MetadataRequest, ProduceRequest};
use kwire_connection::{Connection, Error};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut conn = Connection::new(Some("fuzz"), 64 * 1024);
    // Correlation ids 0..=4 are in flight; an acks=0 Produce expects nothing.
    conn.send(ApiVersionsRequest::default(), 3).unwrap();
    conn.send(MetadataRequest::default(), 12).unwrap();
    conn.send(FetchRequest::default(), 4).unwrap();
    conn.send(ProduceRequest { acks: -1, ..Default::default() }, 9).unwrap();
    conn.send(ApiVersionsRequest::default(), 0).unwrap();
    conn.send(ProduceRequest { acks: 0, ..Default::default() }, 9).unwrap();
    // In two pieces, as reads split them.
    let cut = data.first().map_or(0, |b| usize::from(*b) % (data.len() + 1));
    for piece in [&data[..cut], &data[cut..]] {
        conn.receive(piece);
        loop {
            match conn.next_response() {
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(Error::Decode { .. } | Error::UnknownCorrelationId(_)) => continue,
                Err(_) => return,
            }
        }
    }
});
