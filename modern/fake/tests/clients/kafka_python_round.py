"""kafka-python against kafka-wire-fake: admin create_topics, an idempotent producer in every
codec kafka-python has (acks=all), then a consumer assigned to every partition reading from
the beginning (ListOffsets, Fetch), and the end offsets.
Usage: python kafka_python_round.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import time
import uuid

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import CommitFailedError, RebalanceInProgressError, TopicAlreadyExistsError

bootstrap = sys.argv[1].split(",")
suffix = uuid.uuid4().hex[:8]
topic = "python-round-" + suffix
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python-fake")
admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
try:
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    duplicate = "created twice"
except TopicAlreadyExistsError:
    duplicate = "TopicAlreadyExistsError"
admin.close()

codecs = [None, "gzip", "snappy", "lz4", "zstd"]
offsets = {}
for codec in codecs:
    producer = KafkaProducer(bootstrap_servers=bootstrap, compression_type=codec, acks="all",
                             enable_idempotence=True, linger_ms=5)
    futures = [producer.send(topic, key=b"k%d" % i, value=("%s-%d" % (codec, i)).encode(),
                             headers=[("codec", str(codec).encode())]) for i in range(10)]
    producer.flush(30)
    for f in futures:
        meta = f.get(timeout=30)
        offsets.setdefault(meta.partition, []).append(meta.offset)
    producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                         consumer_timeout_ms=1000)
partitions = [TopicPartition(topic, p) for p in range(3)]
consumer.assign(partitions)
consumer.seek_to_beginning()
values, deadline = [], time.time() + 60
while len(values) < 10 * len(codecs) and time.time() < deadline:
    for records in consumer.poll(timeout_ms=500).values():
        for r in records:
            assert r.headers == [("codec", r.value.split(b"-")[0])], r.headers
            values.append(r.value.decode())
ends = consumer.end_offsets(partitions)
consumer.close()

# A consumer group: one member, then a second joins (a rebalance splits the partitions), both
# read and commit, then the first leaves and the second takes every partition.
group = "python-group-" + suffix
def member():
    return KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                         enable_auto_commit=False, heartbeat_interval_ms=200, session_timeout_ms=6000,
                         max_poll_records=7)
seen = {}
def drain(consumer, name):
    for records in consumer.poll(timeout_ms=100).values():
        for r in records:
            seen.setdefault(r.value.decode(), []).append(name)
    try:
        consumer.commit()
    except (CommitFailedError, RebalanceInProgressError):
        # Between a round of joins and its assignments, as Kafka answers too: the records
        # since the last commit come again to whoever owns the partition next.
        pass
first = member()
deadline = time.time() + 60
while not first.assignment() and time.time() < deadline:
    drain(first, "first")
second = member()
split = None
while time.time() < deadline:
    drain(first, "first")
    drain(second, "second")
    sizes = sorted([len(first.assignment()), len(second.assignment())])
    if sizes == [1, 2] and split is None:
        split = sizes
    if split and len(seen) == 10 * len(codecs):
        break
first.close()
alone = None
while time.time() < deadline:
    drain(second, "second")
    if len(second.assignment()) == 3:
        alone = 3
        break
committed = {p.partition: second.committed(p) for p in partitions}
second.close()
admin = KafkaAdminClient(bootstrap_servers=bootstrap)
described = admin.describe_groups([group])
listed = admin.list_groups()
admin.close()

print(json.dumps({
    "group_split": split,
    "group_alone": alone,
    "group_consumed": len(seen),
    "committed": [committed[p] for p in sorted(committed)],
    "group_state": described[group]["group_state"],
    "group_protocol": described[group]["protocol_type"],
    "group_listed": group in [g["group_id"] for g in listed],
    "consumed": len(values),
    "distinct": len(set(values)),
    "end_offsets": sorted(ends.values()),
    "offsets_unique": all(len(v) == len(set(v)) for v in offsets.values()),
    "duplicate_create": duplicate,
}))
