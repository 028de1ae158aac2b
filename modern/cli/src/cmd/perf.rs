//! `kwire perf`: round trips of Kafka requests, one at a time over one connection
//! (`kwire-connection`), for measuring what a hop (such as `kwire tap`) adds against a
//! direct connection.

use std::time::Instant;

use clap::{Args, ValueEnum};
use kwire::messages::{ApiKey, ApiVersionsRequest, MetadataRequest, RequestKind};
use kwire_connection::{Client, ClientConfig};

use crate::cmd::CmdResult;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Probe {
    /// ApiVersions v3.
    ApiVersions,
    /// Metadata v12 for no topics (the cluster's brokers).
    Metadata,
}

#[derive(Debug, Args)]
pub struct PerfArgs {
    /// The broker, HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub broker: String,
    /// Requests to time (after 100 unmeasured warm-up ones).
    #[arg(long, default_value_t = 5000)]
    pub requests: usize,
    #[arg(long, value_enum, default_value_t = Probe::ApiVersions)]
    pub api: Probe,
}

pub async fn run(a: PerfArgs) -> CmdResult {
    let broker = &a.broker;
    let client = Client::connect(broker.as_str(), ClientConfig::default().client_id("kwire-perf"))
        .await
        .map_err(|e| format!("{broker}: {e}"))?;
    let (body, version): (RequestKind, i16) = match a.api {
        Probe::ApiVersions => (ApiVersionsRequest::default().into(), 3),
        Probe::Metadata => (MetadataRequest { topics: Some(Vec::new()), ..Default::default() }.into(), 12),
    };
    let api = body.api_key();
    let mut nanos = Vec::with_capacity(a.requests);
    for i in 0..a.requests + 100 {
        let started = Instant::now();
        let response = client.send_kind(body.clone(), version).await?;
        let elapsed = started.elapsed();
        if response.map(|r| r.api) != Some(api) {
            return Err(format!("request {i} got no {} response", api.name()).into());
        }
        if i >= 100 {
            nanos.push(elapsed.as_nanos() as u64);
        }
    }
    nanos.sort_unstable();
    let pct = |q: f64| nanos[((nanos.len() as f64 - 1.0) * q).round() as usize] as f64 / 1e3;
    println!(
        "perf: {} {} v{version} round trips to {broker}: p50 {:.1} us, p99 {:.1} us, max {:.1} us",
        nanos.len(),
        ApiKey::name(api),
        pct(0.5),
        pct(0.99),
        pct(1.0)
    );
    Ok(())
}
