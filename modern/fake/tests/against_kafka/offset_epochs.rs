//! OffsetCommit and OffsetFetch v9+ against member ids and epochs, driven by our own client on
//! the fake and on Apache Kafka 4.4 (`tests/offset_epochs/scenario.rs`): a KIP-848 group's
//! members at their epoch, older (KIP-1251) and newer ones, unknown members, admins; a group
//! that does not exist; a classic group. Every case's errors must be the same on both.

#[path = "../offset_epochs/scenario.rs"]
mod scenario;

use super::support;

#[test]
fn offset_epochs_are_checked_the_same_on_the_fake_and_on_kafka() {
    let _alone = support::one_at_a_time();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let fake = support::fake(&["--nodes", "3"]);
    let on_fake = runtime.block_on(scenario::run(&fake.bootstrap));
    println!("fake:  {on_fake:?}");
    let Some(kafka) = support::kafka() else { return };
    let on_kafka = runtime.block_on(scenario::run(&kafka.bootstrap()));
    println!("kafka: {on_kafka:?}");
    for (f, k) in on_fake.iter().zip(&on_kafka) {
        assert_eq!(f, k, "the first case that differs");
    }
    assert_eq!(on_fake, on_kafka, "every case must be answered the same on both");
    // What the in-process test (tests/offset_epochs/main.rs) expects is what Kafka answers.
    assert_eq!(on_kafka, scenario::expected(), "Kafka 4.4 must answer as scenario::expected says");
}
