//! What the broker tests share: topics, record batches, produce and fetch requests.
#![allow(dead_code)] // each test binary uses its own part

pub mod peer;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kwire::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic;
use kwire::messages::create_topics_request::CreatableTopic;
use kwire::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kwire::messages::metadata_request::MetadataRequestTopic;
use kwire::messages::{
    AddPartitionsToTxnRequest, ApiKey, CreateTopicsRequest, EndTxnRequest, FetchRequest, InitProducerIdRequest,
    InitProducerIdResponse, ListOffsetsRequest, MetadataRequest, ProduceRequest,
};
use kwire::{ErrorCode, ProducerId, Records, Uuid};
use kwire_connection::cluster::CoordinatorType;
use kwire_connection::{requests, Client, Cluster, Error};
use kwire_records::{BatchBuilder, BatchOptions, Compression, Header};

pub fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Creates `name` with `partitions` partitions (one replica) and returns its topic id.
pub async fn create_topic(client: &Client, name: &str, partitions: i32) -> Uuid {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let response = client.send(request).await.unwrap();
    let topic = &response.topics[0];
    assert_eq!(topic.error_code, ErrorCode::NONE, "{:?}", topic.error_message);
    wait_for_leaders(client, name).await;
    topic.topic_id
}

/// Waits until every partition of `topic` takes writes on the broker `client` is connected to
/// (a single-broker cluster): CreateTopics answers before the broker leads them, and a produce
/// in between gets NOT_LEADER_OR_FOLLOWER. Metadata names a leader first (the broker's metadata
/// cache learns of it before its replica manager does), so ListOffsets, which the replica
/// manager answers, must succeed too.
pub async fn wait_for_leaders(client: &Client, topic: &str) {
    let request = MetadataRequest {
        topics: Some(vec![MetadataRequestTopic { name: Some(topic.into()), ..Default::default() }]),
        ..Default::default()
    };
    for _ in 0..100 {
        let metadata = client.send(request.clone()).await.unwrap();
        let t = &metadata.topics[0];
        if t.error_code == ErrorCode::NONE
            && !t.partitions.is_empty()
            && t.partitions.iter().all(|p| p.error_code == ErrorCode::NONE && p.leader_id.get() >= 0)
        {
            let list = ListOffsetsRequest {
                replica_id: (-1).into(),
                topics: vec![ListOffsetsTopic {
                    name: topic.into(),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| ListOffsetsPartition {
                            partition_index: p.partition_index,
                            timestamp: -1,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }],
                ..Default::default()
            };
            let listed = client.send(list).await.unwrap();
            if listed.topics.iter().flat_map(|t| &t.partitions).all(|p| p.error_code == ErrorCode::NONE) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no leaders for {topic} after 10 s");
}

/// One batch of `n` records in `compression`: keys `{tag}-key-{i}`, values `{tag}-value-{i}…`,
/// a `codec` header holding `tag`; written by `options` (producer id, sequence, transaction).
pub fn batch_with(options: BatchOptions, n: usize, tag: &str) -> Records {
    let mut builder = BatchBuilder::new(options).unwrap();
    for i in 0..n {
        let key = format!("{tag}-key-{i}");
        let value = format!("{tag}-value-{i}-{}", "x".repeat(i % 97));
        let headers = [Header { key: "codec".into(), value: Some(tag.as_bytes().to_vec().into()) }];
        builder.append(now_ms(), Some(key.as_bytes()), Some(value.as_bytes()), &headers).unwrap();
    }
    Records::from_bytes(builder.build().unwrap())
}

/// [`batch_with`] by a plain producer.
pub fn batch(compression: Compression, n: usize, tag: &str) -> Records {
    batch_with(BatchOptions::new(2, compression), n, tag)
}

/// Produce `records` to `topic`'s `partition` (by name and id, so any version fits).
pub fn produce_request(topic: &str, topic_id: Uuid, partition: i32, records: Records, acks: i16) -> ProduceRequest {
    requests::produce(topic, topic_id, partition, records, acks, Duration::from_secs(30))
}

/// Fetch partition 0 of `topic` from `offset` (by name and id, so any version fits).
pub fn fetch_request(topic: &str, topic_id: Uuid, offset: i64, isolation_level: i8) -> FetchRequest {
    FetchRequest { max_wait_ms: 200, isolation_level, ..requests::fetch(topic, topic_id, 0, offset) }
}

/// Which transaction protocol a [`Transactional`] producer speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnProtocol {
    /// Transactions v1: AddPartitionsToTxn before the first batch to a partition, Produce up to
    /// v11, EndTxn v4, one epoch for the producer's life.
    V1,
    /// Transactions v2 (KIP-890): Produce v12 and later add the partition themselves, and EndTxn
    /// v5 bumps the epoch at the end of every transaction and returns it.
    V2,
}

/// A transactional producer on partition 0 of one topic: its coordinator, id and epoch, and
/// the sequence of its next batch.
pub struct Transactional {
    pub txn: String,
    pub coordinator: Client,
    pub producer: (ProducerId, i16),
    pub protocol: TxnProtocol,
    sequence: i32,
}

impl Transactional {
    /// InitProducerId for `txn` at its coordinator, for transactions v1.
    pub async fn init(cluster: &Cluster, txn: &str) -> Transactional {
        Transactional::init_with(cluster, txn, TxnProtocol::V1).await
    }

    /// InitProducerId for `txn` at its coordinator, for `protocol`'s transactions.
    pub async fn init_with(cluster: &Cluster, txn: &str, protocol: TxnProtocol) -> Transactional {
        let coordinator = cluster.coordinator(CoordinatorType::Transaction, txn).await.unwrap();
        let init = InitProducerIdRequest {
            transactional_id: Some(txn.into()),
            transaction_timeout_ms: 60_000,
            ..Default::default()
        };
        let init = init_producer_id(cluster, &coordinator, init).await;
        let producer = (init.producer_id, init.producer_epoch);
        Transactional { txn: txn.into(), coordinator, producer, protocol, sequence: 0 }
    }

    /// Starts a transaction on partition 0 of `topic`: AddPartitionsToTxn in v1; nothing in
    /// v2, where the first Produce adds the partition.
    pub async fn begin(&self, cluster: &Cluster, topic: &str) {
        if self.protocol == TxnProtocol::V1 {
            add_partition(cluster, &self.coordinator, &self.txn, self.producer, topic).await;
        }
    }

    /// The Produce version this producer's batches go at on `client`: the newest both sides
    /// know, kept below v12 (KIP-890's) in v1.
    pub fn produce_version(&self, client: &Client) -> i16 {
        let newest = client.version_of(ApiKey::Produce).expect("the broker offers Produce");
        match self.protocol {
            TxnProtocol::V1 => newest.min(11),
            TxnProtocol::V2 => {
                assert!(newest >= 12, "transactions v2 need Produce v12, the broker offers v{newest}");
                newest
            }
        }
    }

    /// The produce request of this producer's next batch to `topic` (whose id is `topic_id`):
    /// `n` records in `compression`.
    pub fn produce(
        &mut self,
        topic: &str,
        topic_id: Uuid,
        compression: Compression,
        n: usize,
        tag: &str,
    ) -> ProduceRequest {
        let options = BatchOptions {
            producer_id: self.producer.0.get(),
            producer_epoch: self.producer.1,
            base_sequence: self.sequence,
            transactional: true,
            ..BatchOptions::new(2, compression)
        };
        self.sequence += n as i32;
        let records = batch_with(options, n, tag);
        ProduceRequest {
            transactional_id: Some(self.txn.as_str().into()),
            ..produce_request(topic, topic_id, 0, records, -1)
        }
    }

    /// Commits or aborts the transaction. In v2 the coordinator answers with the producer's
    /// next epoch, and the sequence starts again from 0 under it.
    pub async fn end(&mut self, commit: bool) {
        let end = EndTxnRequest {
            transactional_id: self.txn.as_str().into(),
            producer_id: self.producer.0,
            producer_epoch: self.producer.1,
            committed: commit,
            ..Default::default()
        };
        let version = match self.protocol {
            TxnProtocol::V1 => 4,
            TxnProtocol::V2 => 5,
        };
        let ended = self.coordinator.send_at(end, version).await.unwrap();
        assert_eq!(ended.error_code, ErrorCode::NONE, "EndTxn v{version} committed={commit}");
        if self.protocol == TxnProtocol::V2 {
            assert_eq!(ended.producer_id, self.producer.0, "the producer id stays");
            self.producer.1 = ended.producer_epoch;
            self.sequence = 0;
        }
    }
}

/// InitProducerId, retried while the transaction coordinator loads (a fresh cluster creates
/// its state topic on first use).
pub async fn init_producer_id(
    cluster: &Cluster,
    client: &Client,
    request: InitProducerIdRequest,
) -> InitProducerIdResponse {
    cluster
        .retrying(|| async {
            let answer = client.send(request.clone()).await?;
            match answer.error_code {
                ErrorCode::NONE => Ok(answer),
                code => Err(Error::Broker { api: ApiKey::InitProducerId, code, message: None }),
            }
        })
        .await
        .unwrap()
}

/// AddPartitionsToTxn of partition 0 of `topic`, at version 3 (versions 4 and up are for
/// brokers); CONCURRENT_TRANSACTIONS, while the last transaction's markers are written, is
/// retried as Kafka's producer does.
pub async fn add_partition(
    cluster: &Cluster,
    coordinator: &Client,
    txn: &str,
    producer: (ProducerId, i16),
    topic: &str,
) {
    let add = AddPartitionsToTxnRequest {
        v3_and_below_transactional_id: txn.into(),
        v3_and_below_producer_id: producer.0,
        v3_and_below_producer_epoch: producer.1,
        v3_and_below_topics: vec![AddPartitionsToTxnTopic {
            name: topic.into(),
            partitions: vec![0].into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    cluster
        .retrying(|| async {
            let added = coordinator.send_at(add.clone(), 3).await?;
            match added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code {
                ErrorCode::NONE => Ok(()),
                code => Err(Error::Broker { api: ApiKey::AddPartitionsToTxn, code, message: Some(topic.to_string()) }),
            }
        })
        .await
        .unwrap();
}
