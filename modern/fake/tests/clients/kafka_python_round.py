"""kafka-python against kwire-fake: admin create_topics, an idempotent producer in every
codec kafka-python has (acks=all), then a consumer assigned to every partition reading from
the beginning (ListOffsets, Fetch), and the end offsets.
Usage: python kafka_python_round.py <bootstrap>; prints a JSON summary on stdout."""
import json
import logging
import sys
import threading
import time
import uuid

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import CommitFailedError, RebalanceInProgressError, TopicAlreadyExistsError

# Warnings, and the group coordinator's joins and assignments, go to stderr: the harness shows
# them when the two clusters' summaries differ.
logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                    format="%(relativeCreated)6d %(threadName)s %(name)s %(levelname)s %(message)s")
logging.getLogger("kafka.coordinator").setLevel(logging.INFO)
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
# read and commit, then the first leaves and the second takes every partition. Each member
# polls in a thread of its own, as applications run them.
group = "python-group-" + suffix
seen = {}
seen_lock = threading.Lock()

class Member(threading.Thread):
    def __init__(self, name):
        super().__init__(daemon=True)
        self.name, self.stop, self.error = name, threading.Event(), None
        self.consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group,
                                      auto_offset_reset="earliest", enable_auto_commit=False,
                                      heartbeat_interval_ms=200, session_timeout_ms=6000,
                                      max_poll_records=7)
        self.owned = 0

    def run(self):
        try:
            while not self.stop.is_set():
                for records in self.consumer.poll(timeout_ms=100).values():
                    with seen_lock:
                        for r in records:
                            seen.setdefault(r.value.decode(), []).append(self.name)
                try:
                    self.consumer.commit()
                except (CommitFailedError, RebalanceInProgressError):
                    # Between a round of joins and its assignments, as Kafka answers too: the
                    # records since the last commit come again to whoever owns them next.
                    pass
                self.owned = len(self.consumer.assignment())
        except Exception as e:  # reported by the main thread
            self.error = e

def wait_until(condition):
    deadline = time.time() + 60
    while not condition() and time.time() < deadline:
        time.sleep(0.05)
    return condition()

first = Member("first")
first.start()
wait_until(lambda: first.owned == 3)
second = Member("second")
second.start()
split = [1, 2] if wait_until(lambda: sorted([first.owned, second.owned]) == [1, 2]) else None
wait_until(lambda: len(seen) == 10 * len(codecs))
first.stop.set()
first.join()
first.consumer.close()
alone = 3 if wait_until(lambda: second.owned == 3) else None
second.stop.set()
second.join()
if first.error or second.error:
    sys.exit("a member failed: %r %r" % (first.error, second.error))
second = second.consumer
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
