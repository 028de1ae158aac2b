"""kafka-python against kafka-wire-fake: admin create_topics, an idempotent producer in every
codec kafka-python has (acks=all), then a consumer assigned to every partition reading from
the beginning (ListOffsets, Fetch), and the end offsets.
Usage: python kafka_python_round.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError

bootstrap = sys.argv[1].split(",")
topic = "python-round"
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python-fake")
admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=2)])
try:
    admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=2)])
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
print(json.dumps({
    "consumed": len(values),
    "distinct": len(set(values)),
    "end_offsets": sorted(ends.values()),
    "offsets_unique": all(len(v) == len(set(v)) for v in offsets.values()),
    "duplicate_create": duplicate,
}))
