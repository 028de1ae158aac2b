//! `kwire perf requests`: round trips of modern Kafka requests, one at a time over one
//! connection, for measuring what a hop (such as `kwire tap`) adds against a direct connection.

use std::time::Instant;

use clap::{Args, ValueEnum};
use kafka_wire::messages::{ApiKey, ApiVersionsRequest, MetadataRequest, RequestFrame, RequestKind, ResponseFrame};
use kafka_wire::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::cluster::{Cluster, CmdResult};

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Probe {
    /// ApiVersions v3.
    ApiVersions,
    /// Metadata v12 for no topics (the cluster's brokers).
    Metadata,
}

#[derive(Debug, Args)]
pub struct PerfRequestsArgs {
    /// Requests to time (after 100 unmeasured warm-up ones).
    #[arg(long, default_value_t = 5000)]
    pub requests: usize,
    #[arg(long, value_enum, default_value_t = Probe::ApiVersions)]
    pub api: Probe,
}

pub async fn run(cluster: &Cluster, a: PerfRequestsArgs) -> CmdResult {
    let broker = cluster.broker.first().ok_or("perf requests needs --broker HOST:PORT")?;
    let mut stream = TcpStream::connect(broker).await.map_err(|e| format!("{broker}: {e}"))?;
    stream.set_nodelay(true)?;
    let (body, version): (RequestKind, i16) = match a.api {
        Probe::ApiVersions => (ApiVersionsRequest::default().into(), 3),
        Probe::Metadata => (MetadataRequest { topics: Some(Vec::new()), ..Default::default() }.into(), 12),
    };
    let api = body.api_key();
    let mut nanos = Vec::with_capacity(a.requests);
    let mut out = BytesMut::new();
    for i in 0..a.requests + 100 {
        out.clear();
        RequestFrame::new(body.clone(), version, i as i32, Some("kwire-perf")).encode(&mut out)?;
        let started = Instant::now();
        stream.write_all(&out).await?;
        let mut size = [0u8; 4];
        stream.read_exact(&mut size).await?;
        let mut frame = vec![0u8; i32::from_be_bytes(size).max(0) as usize];
        stream.read_exact(&mut frame).await?;
        let elapsed = started.elapsed();
        let response = ResponseFrame::decode(Bytes::from(frame), api, version)?;
        if response.header.correlation_id != i as i32 {
            return Err(format!("response {} answers request {i}", response.header.correlation_id).into());
        }
        if i >= 100 {
            nanos.push(elapsed.as_nanos() as u64);
        }
    }
    nanos.sort_unstable();
    let pct = |q: f64| nanos[((nanos.len() as f64 - 1.0) * q).round() as usize] as f64 / 1e3;
    outln!(
        "perf requests: {} {} v{version} round trips to {broker}: p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        nanos.len(),
        ApiKey::name(api),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    Ok(())
}
