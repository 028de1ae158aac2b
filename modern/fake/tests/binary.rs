//! The `kwire-fake-cluster` binary's contract: its first line names every node, `--advertise` is
//! what Metadata tells clients.

mod support;

#[test]
fn the_first_line_names_every_node_and_advertise_is_what_it_prints() {
    let fake = support::fake(&["--nodes", "3"]);
    let servers: Vec<&str> = fake.bootstrap.split(',').collect();
    assert_eq!(servers.len(), 3, "{}", fake.bootstrap);
    assert!(servers.iter().all(|s| s.starts_with("127.0.0.1:") && !s.ends_with(":0")), "{}", fake.bootstrap);
    let advertised = support::fake(&["--nodes", "2", "--advertise", "proxy.example:9092,proxy.example:9093"]);
    assert_eq!(advertised.bootstrap, "proxy.example:9092,proxy.example:9093");
}
