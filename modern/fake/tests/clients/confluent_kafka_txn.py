"""confluent-kafka (librdkafka) transactions against one cluster, for
modern/fake/tests/against_kafka/ to compare the fake with Apache Kafka 4.4:

- a transactional producer commits, aborts and commits 6 records each over 3 partitions;
  read_committed readers see the 12 committed, read_uncommitted ones all 18;
- consume-transform-produce: a read_committed consumer in a group reads them and a second
  transactional producer copies each to an output topic, its offsets sent in each transaction;
  the output holds the committed records once and the group's offsets reach the input's end;
- a third producer with the second's transactional id fences it: its next commit fails.

Usage: confluent_kafka_txn.py BOOTSTRAP   (one JSON summary line on stdout)
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

BOOTSTRAP = sys.argv[1]
TOPIC, OUT, GROUP = "rdk-txn-in", "rdk-txn-out", "rdk-txn-group"
PARTITIONS, PER_TXN = 3, 6
DEADLINE = 60


def producer(transactional_id):
    p = Producer({"bootstrap.servers": BOOTSTRAP, "transactional.id": transactional_id})
    p.init_transactions(30)
    return p


def read_all(topic, isolation):
    """Every record of `topic` from the start up to its end offsets: sorted keys, ends."""
    c = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": "rdk-txn-reader", "isolation.level": isolation,
                  "enable.auto.commit": False, "enable.partition.eof": True})
    parts = [TopicPartition(topic, p, 0) for p in range(len(c.list_topics(topic).topics[topic].partitions))]
    c.assign(parts)
    keys, at_end, deadline = [], set(), time.time() + DEADLINE
    while len(at_end) < len(parts) and time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == -191:  # _PARTITION_EOF
                at_end.add(m.partition())
            continue
        keys.append(m.key().decode())
    ends = [c.get_watermark_offsets(TopicPartition(topic, p.partition), timeout=10)[1] for p in parts]
    c.close()
    return sorted(keys), ends


def main():
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    for f in admin.create_topics([NewTopic(TOPIC, PARTITIONS, 1), NewTopic(OUT, 1, 1)]).values():
        f.result()
    summary = {}

    a = producer("rdk-txn-a")
    for tag, commit in [("first", True), ("aborted", False), ("second", True)]:
        a.begin_transaction()
        for i in range(PER_TXN):
            a.produce(TOPIC, key=f"{tag}-{i}", value=tag, partition=i % PARTITIONS)
        a.flush(30)
        a.commit_transaction(30) if commit else a.abort_transaction(30)
    committed_keys, ends = read_all(TOPIC, "read_committed")
    summary["read_committed"] = committed_keys
    summary["read_uncommitted"] = read_all(TOPIC, "read_uncommitted")[0]
    # Per partition 2 records a transaction, and 3 markers.
    summary["input_ends"] = ends

    # Consume-transform-produce, the offsets committed in each transaction.
    b = producer("rdk-txn-b")
    consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": GROUP, "isolation.level": "read_committed",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([TOPIC])
    copied, deadline = 0, time.time() + DEADLINE
    while copied < len(committed_keys) and time.time() < deadline:
        batch = [m for m in consumer.consume(10, 1.0) if not m.error()]
        if not batch:
            continue
        b.begin_transaction()
        for m in batch:
            b.produce(OUT, key=m.key(), value=m.value(), partition=0)
        b.send_offsets_to_transaction(consumer.position(consumer.assignment()), consumer.consumer_group_metadata(), 30)
        b.commit_transaction(30)
        copied += len(batch)
    summary["copied"] = copied
    summary["output"] = read_all(OUT, "read_committed")[0]
    group_offsets = admin.list_consumer_group_offsets([_request(GROUP)])[GROUP].result()
    summary["group_offsets"] = sorted(tp.offset for tp in group_offsets.topic_partitions)
    consumer.close()

    # Fencing: a new producer with b's transactional id; b's next transaction fails.
    producer("rdk-txn-b")
    try:
        b.begin_transaction()
        b.produce(OUT, key="late", value="late", partition=0)
        b.flush(30)
        b.commit_transaction(30)
        summary["fenced"] = None
    except KafkaException as e:
        summary["fenced"] = {"fatal": e.args[0].fatal(), "code": e.args[0].name()}
    summary["output_after_fencing"] = read_all(OUT, "read_committed")[0] == summary["output"]
    print(json.dumps(summary))


def _request(group):
    from confluent_kafka import ConsumerGroupTopicPartitions
    return ConsumerGroupTopicPartitions(group)


if __name__ == "__main__":
    main()
