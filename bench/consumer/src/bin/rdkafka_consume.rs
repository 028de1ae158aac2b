//! rust-rdkafka's consumer (librdkafka) in a one-member group: reads RECORDS records of TOPIC
//! from the beginning with `BaseConsumer::poll`, and prints what it read and how long it took
//! from the first record to the last.
//!
//! `rdkafka_consume BOOTSTRAP TOPIC GROUP RECORDS`

use std::time::{Duration, Instant};

use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, bootstrap, topic, group, records] = &args[..] else {
        return Err("usage: rdkafka_consume BOOTSTRAP TOPIC GROUP RECORDS".into());
    };
    let wanted: u64 = records.parse()?;
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("auto.offset.reset", "earliest")
        .create()?;
    consumer.subscribe(&[topic])?;
    let (mut count, mut bytes, mut first, mut last) = (0u64, 0u64, None, Instant::now());
    while count < wanted {
        match consumer.poll(Duration::from_secs(1)) {
            None => continue,
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(message)) => {
                first.get_or_insert_with(Instant::now);
                bytes += message.payload().map_or(0, |p| p.len()) as u64;
                count += 1;
                last = Instant::now();
            }
        }
    }
    let seconds = last.duration_since(first.unwrap_or(last)).as_secs_f64();
    println!("{}", serde_json::json!({ "records": count, "bytes": bytes, "seconds": seconds }));
    Ok(())
}
