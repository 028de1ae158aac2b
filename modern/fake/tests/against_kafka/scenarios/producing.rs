//! The data plane's answers, request by request: an idempotent producer's sequences (a retry,
//! a gap, a new epoch), and the refusals a client meets (an unknown topic or partition, an
//! offset out of range, a topic created twice or with no partitions, records deleted past
//! the end).

use std::future::Future;
use std::pin::Pin;

use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::delete_records_request::{DeleteRecordsPartition, DeleteRecordsTopic};
use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::{CreateTopicsRequest, DeleteRecordsRequest, InitProducerIdRequest, MetadataRequest};
use kwire::{ProducerId, Records, StrBytes, TopicName};
use kwire_connection::requests;
use kwire_records::{BatchBuilder, BatchOptions, Compression};

use super::transactions::WAIT;
use super::{Script, To};

type Steps<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// An idempotent batch of `values` by `producer` (id, epoch) from `sequence`; `(-1, -1)` for
/// none.
fn batch(producer: (i64, i16), sequence: i32, values: &[&str]) -> Records {
    let options = BatchOptions {
        producer_id: producer.0,
        producer_epoch: producer.1,
        base_sequence: sequence,
        ..BatchOptions::new(2, Compression::None)
    };
    let mut builder = BatchBuilder::new(options).unwrap();
    for v in values {
        builder.append(super::now_ms(), None, Some(v.as_bytes()), &[]).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

async fn produce(s: &mut Script, step: &str, to: To<'_>, topic: &str, partition: i32, records: Records) {
    let request = requests::produce(topic, Default::default(), partition, records, -1, WAIT);
    s.send(step, to, request, 12).await;
}

/// An idempotent producer: its first batch, that batch again (a retry), a gap in the
/// sequence, the next batch, then a bumped epoch starting again at 0.
pub fn idempotence(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("out", 1).await;
        // No transactional id: null (Kafka's default for the field is "", which a
        // transaction coordinator refuses).
        let init = InitProducerIdRequest {
            transactional_id: None,
            transaction_timeout_ms: 60_000,
            producer_id: ProducerId(-1),
            producer_epoch: -1,
            ..Default::default()
        };
        let r = s.send("init", To::Any, init, 5).await;
        s.alias("producerId", r.producer_id.0, "producer");
        let producer = (r.producer_id.0, r.producer_epoch);
        let to = To::Leader(&topic, 0);
        produce(s, "first batch", to, &topic, 0, batch(producer, 0, &["a", "b"])).await;
        produce(s, "the same batch again", to, &topic, 0, batch(producer, 0, &["a", "b"])).await;
        produce(s, "a gap in the sequence", to, &topic, 0, batch(producer, 5, &["x"])).await;
        produce(s, "the next batch", to, &topic, 0, batch(producer, 2, &["c"])).await;
        produce(s, "an older batch", to, &topic, 0, batch(producer, 1, &["b"])).await;
        produce(s, "a new epoch from 0", to, &topic, 0, batch((producer.0, producer.1 + 1), 0, &["d"])).await;
        produce(s, "the old epoch", to, &topic, 0, batch(producer, 3, &["e"])).await;
        produce(s, "no producer", to, &topic, 0, batch((-1, -1), -1, &["f"])).await;
        let topic_id = s.cluster.topic_id(&topic).await.unwrap();
        let mut fetch = requests::fetch(&topic, topic_id, 0, 0);
        fetch.max_wait_ms = 0;
        s.send("one fetch from 0", to, fetch, 17).await;
    })
}

/// What a client is refused, and how.
pub fn refusals(s: &mut Script) -> Steps<'_> {
    Box::pin(async move {
        let topic = s.create_topic("out", 2).await;
        let create = |name: &str, partitions: i32| CreateTopicsRequest {
            topics: vec![CreatableTopic {
                name: TopicName(StrBytes::from(name.to_owned())),
                num_partitions: partitions,
                replication_factor: 1,
                ..Default::default()
            }],
            timeout_ms: 30_000,
            ..Default::default()
        };
        s.send("create it again", To::Any, create(&topic, 2), 7).await;
        let empty = s.name("empty");
        s.send("create with no partitions", To::Any, create(&empty, 0), 7).await;
        let mut unreplicated = create(&empty, 1);
        unreplicated.topics[0].replication_factor = 0;
        s.send("create with no replicas", To::Any, unreplicated, 7).await;
        let missing = s.name("missing");
        let metadata = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                name: Some(TopicName(StrBytes::from(missing.clone()))),
                ..Default::default()
            }]),
            // The test Kafka runs with `auto.create.topics.enable=false`, the fake with Kafka's
            // default (true): the request says which.
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        s.send("metadata of a missing topic", To::Any, metadata, 12).await;
        produce(s, "produce to a missing topic", To::Any, &missing, 0, batch((-1, -1), -1, &["a"])).await;
        produce(s, "produce to a missing partition", To::Leader(&topic, 0), &topic, 7, batch((-1, -1), -1, &["a"]))
            .await;
        produce(s, "produce", To::Leader(&topic, 0), &topic, 0, batch((-1, -1), -1, &["a", "b", "c"])).await;
        let topic_id = s.cluster.topic_id(&topic).await.unwrap();
        for (step, offset) in [("fetch past the end", 4), ("fetch at the end", 3), ("fetch before the start", -5)] {
            let mut fetch = requests::fetch(&topic, topic_id, 0, offset);
            fetch.max_wait_ms = 0;
            s.send(step, To::Leader(&topic, 0), fetch, 17).await;
        }
        let delete = |offset: i64| DeleteRecordsRequest {
            topics: vec![DeleteRecordsTopic {
                name: TopicName(StrBytes::from(topic.clone())),
                partitions: vec![DeleteRecordsPartition { partition_index: 0, offset, ..Default::default() }],
                ..Default::default()
            }],
            timeout_ms: 30_000,
            ..Default::default()
        };
        s.send("delete records past the end", To::Leader(&topic, 0), delete(9), 2).await;
        s.send("delete records to 2", To::Leader(&topic, 0), delete(2), 2).await;
        let mut fetch = requests::fetch(&topic, topic_id, 0, 1);
        fetch.max_wait_ms = 0;
        s.send("fetch below the new start", To::Leader(&topic, 0), fetch, 17).await;
    })
}
