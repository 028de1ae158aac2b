"""confluent-kafka (librdkafka) round for the tap test: admin, idempotent produce in every
codec with headers, a consumer group, commit, committed offsets and watermarks.
Usage: python confluent_kafka_round.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import time
import uuid

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

bootstrap = sys.argv[1]
topic = "rdkafka-" + uuid.uuid4().hex[:8]
common = {"bootstrap.servers": bootstrap, "client.id": "confluent-kafka-tap"}

admin = AdminClient(common)
for future in admin.create_topics([NewTopic(topic, 1, 1)], operation_timeout=30).values():
    future.result()
# A broker that answered CreateTopics may not know the topic yet (Kafka's metadata reaches
# its brokers a moment later): ask again until it does, as an operator's tool would.
for attempt in range(50):
    try:
        configs = admin.describe_configs([ConfigResource("topic", topic)])
        cleanup = next(iter(configs.values())).result()["cleanup.policy"].value
        break
    except KafkaException as e:
        if e.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART or attempt == 49:
            raise
        time.sleep(0.2)

codecs = ["none", "gzip", "snappy", "lz4", "zstd"]
for codec in codecs:
    producer = Producer(dict(common, **{"compression.type": codec, "enable.idempotence": True, "acks": "all"}))
    for i in range(10):
        producer.produce(topic, key=b"k%d" % i, value=("%s-%d" % (codec, i)).encode(), headers=[("codec", codec.encode())])
    if producer.flush(60) != 0:
        sys.exit("produce with %s did not finish" % codec)

consumer = Consumer(dict(common, **{
    "group.id": "g-" + uuid.uuid4().hex[:8],
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
}))
consumer.subscribe([topic])
values, deadline = [], time.time() + 60
while len(values) < 10 * len(codecs) and time.time() < deadline:
    message = consumer.poll(1.0)
    if message is None:
        continue
    if message.error():
        sys.exit("consume: %s" % message.error())
    assert message.headers() == [("codec", message.value().split(b"-")[0])], message.headers()
    values.append(message.value().decode())
consumer.commit(asynchronous=False)
partition = TopicPartition(topic, 0)
committed = consumer.committed([partition], timeout=30)[0].offset
low, high = consumer.get_watermark_offsets(partition, timeout=30)
consumer.close()
print(json.dumps({"consumed": len(values), "committed": committed, "low": low, "high": high,
                  "cleanup.policy": cleanup, "first": values[:1]}))
