//! ZooKeeper node data of every kind Kafka writes: the first byte chooses the path, the rest is
//! the node's data. Parsing never panics, and a parsed value re-encodes to data that parses to
//! the same value.
#![no_main]

use kwire07_zk::parse;
use libfuzzer_sys::fuzz_target;

const PATHS: &[&str] = &[
    "/brokers/ids/1",
    "/brokers/topics/t",
    "/brokers/topics/t/1",
    "/brokers/topics/t/partitions/0/state",
    "/controller",
    "/controller_epoch",
    "/consumers/g/ids/g_host-1",
    "/consumers/g/owners/t/1-0",
    "/consumers/g/offsets/t/1-0",
    "/admin/reassign_partitions",
    "/admin/preferred_replica_election",
    "/admin/delete_topics/t",
    "/config/topics/t",
    "/config/changes/config_change_0000000001",
];

fuzz_target!(|data: &[u8]| {
    let Some((&choice, value)) = data.split_first() else { return };
    let path = PATHS[usize::from(choice) % PATHS.len()];
    let Ok(parsed) = parse(path, value) else { return };
    let again = parse(path, &parsed.to_bytes()).expect("re-encoded node data parses");
    assert_eq!(again, parsed);
});
