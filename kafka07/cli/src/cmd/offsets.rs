//! `kwire07 offsets`: a partition's offsets before a time (OFFSETS).

use std::io::Write;

use clap::Args;
use kwire07_client::BrokerConnection;

use crate::endpoints::{single_broker, CmdResult, Endpoints};
use crate::parse::{parse_partition, parse_time};

#[derive(Debug, Args)]
pub struct OffsetsArgs {
    #[arg(long)]
    pub topic: String,
    #[arg(long, default_value_t = 0, allow_hyphen_values = true, value_parser = parse_partition)]
    pub partition: i32,
    /// earliest (or -2), latest (or -1), or milliseconds since the epoch.
    #[arg(long, allow_hyphen_values = true, value_parser = parse_time, default_value = "latest")]
    pub time: i64,
    /// Most offsets to return.
    #[arg(long, default_value_t = 1)]
    pub max: i32,
}

pub async fn run(cluster: &Endpoints, a: OffsetsArgs) -> CmdResult {
    let (_, addr) = single_broker(cluster, &a.topic, a.partition).await?;
    let mut conn = BrokerConnection::connect(&addr).await?;
    let offsets = conn.offsets(&a.topic, a.partition, a.time, a.max).await?;
    let mut out = std::io::stdout().lock();
    for o in offsets {
        writeln!(out, "{o}")?;
    }
    Ok(())
}
