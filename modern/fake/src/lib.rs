//! An in-process Kafka cluster for tests, on kwire's generated messages.
//!
//! [`FakeCluster::start`] opens one listener per node on the loopback (port 0 picks free
//! ports) and serves Kafka's protocol from memory: every request is decoded and every response
//! encoded by the generated messages of Apache Kafka 4.4.0, so there is no hand-written wire
//! code here. It starts in milliseconds and runs inside `#[tokio::test]`:
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use kwire_fake::{FakeCluster, FakeConfig};
//!
//! let cluster = FakeCluster::start(FakeConfig::default().nodes(3)).await?;
//! cluster.create_topic("orders", 6).expect("a new topic");
//! println!("bootstrap.servers={}", cluster.bootstrap_servers());
//! cluster.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! What it serves, and how tests steer it ([`FakeCluster::intercept`], node kills, behaving
//! as an older release), is listed in the README's "Testing against an in-process Kafka".
//!
//! Layout, after franz-go's kfake (each module's own docs say more):
//!
//! | module | what |
//! |---|---|
//! | `cluster` | [`FakeCluster`]: starting the nodes, what a test asks of the cluster, the clock |
//! | `config` | [`FakeConfig`] |
//! | `control` | the hooks that see each request before it is handled ([`FakeCluster::intercept`]) |
//! | `shared` | what every node, connection and handler shares: the state's lock, wake-ups, hooks |
//! | `node` | a node's listener: a task per socket, a limit on how many |
//! | `connection` | one socket: frames in, each request answered in order, Kafka's reasons to close |
//! | `request_budget` | the cluster-wide byte budget for requests still arriving |
//! | `sasl` | SASL PLAIN and SCRAM on the listeners |
//! | `apis` | one file per API (its handler and its error response) and the table of them |
//! | `state` | the cluster's data behind one lock: nodes, topics, and the coordinators' state |
//! | `log` | one partition's log |
//! | `producers` | idempotent producers' sequences per partition |
//! | `topic_configs` | the topic configs Kafka knows, their defaults and checks |
//! | `groups` | the group coordinator: one map of classic, consumer and share groups, their offsets and configs, the assignors |
//! | `share_partitions` | what share groups are handed, record by record, and their share sessions |
//! | `transactions` | the transaction coordinator's records, and a partition's open and aborted transactions |
//! | `ids` | the ids the cluster hands out |

mod apis;
mod cluster;
mod config;
mod connection;
mod control;
mod groups;
mod ids;
mod log;
mod node;
mod producers;
mod request_budget;
mod sasl;
mod share_partitions;
mod shared;
mod state;
mod topic_configs;
mod transactions;

pub use cluster::{FakeCluster, StoredBatch};
pub use config::FakeConfig;
pub use control::{Action, HookId, Intercepted, Times};

/// This crate's README, whose samples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[cfg(test)]
mod tests {
    /// The module map above names every module of the crate, and only those.
    #[test]
    fn the_module_map_names_every_module() {
        let source = include_str!("lib.rs");
        let mut declared: Vec<&str> =
            source.lines().filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';')).collect();
        declared.sort_unstable();
        let mut mapped: Vec<&str> =
            source.lines().filter_map(|l| l.strip_prefix("//! | `")?.split('`').next()).collect();
        mapped.sort_unstable();
        assert!(declared.len() > 10, "{declared:?}");
        assert_eq!(declared, mapped, "lib.rs's module map and its `mod` lines differ");
    }
}
