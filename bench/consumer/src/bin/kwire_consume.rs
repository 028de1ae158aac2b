//! kwire-client's consumer in a one-member group: reads RECORDS records of TOPIC from the
//! beginning and prints what it read and how long it took from the first record to the last.
//!
//! `kwire_consume BOOTSTRAP TOPIC GROUP RECORDS`

use std::time::{Duration, Instant};

use kwire_client::consumer::{Consumer, ConsumerConfig};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, bootstrap, topic, group, records] = &args[..] else {
        return Err("usage: kwire_consume BOOTSTRAP TOPIC GROUP RECORDS".into());
    };
    let wanted: u64 = records.parse()?;
    let config = ConsumerConfig::new(bootstrap).group_id(group.clone()).set("auto.offset.reset", "earliest")?;
    let consumer = Consumer::new(config).await?;
    consumer.subscribe([topic.clone()]).await?;
    let (mut count, mut bytes, mut first, mut last) = (0u64, 0u64, None, Instant::now());
    while count < wanted {
        let polled = consumer.poll(Duration::from_secs(1)).await?;
        if polled.is_empty() {
            continue;
        }
        first.get_or_insert_with(Instant::now);
        for record in polled.iter() {
            bytes += record.value.as_ref().map_or(0, |v| v.len()) as u64;
        }
        count += polled.len() as u64;
        last = Instant::now();
    }
    let seconds = last.duration_since(first.unwrap_or(last)).as_secs_f64();
    println!("{}", serde_json::json!({ "records": count, "bytes": bytes, "seconds": seconds }));
    consumer.close().await?;
    Ok(())
}
