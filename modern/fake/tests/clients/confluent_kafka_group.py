"""confluent-kafka (librdkafka): a classic consumer group whose members join and leave. Member a
alone, then b joins (the partitions split between them), then a leaves (b takes them all); each
member polls in a thread of its own and sees its assignments through on_assign and on_revoke.
Usage: python confluent_kafka_group.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import threading
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
suffix = uuid.uuid4().hex[:8]
topic = "rdkafka-group-" + suffix
group = "rdkafka-g-" + suffix
common = {"bootstrap.servers": bootstrap, "client.id": "confluent-kafka-group"}

admin = AdminClient(common)
for future in admin.create_topics([NewTopic(topic, 3, 1)], operation_timeout=30).values():
    future.result()
producer = Producer(dict(common, **{"enable.idempotence": True, "acks": "all"}))


def produce(phase):
    for i in range(10):
        producer.produce(topic, key=b"k%d" % i, value=("%s-%d" % (phase, i)).encode())
    if producer.flush(60) != 0:
        sys.exit("produce for %s did not finish" % phase)


deliveries = []  # every record a member was handed, duplicates included
done = set()  # records whose offset commit returned
lock = threading.Lock()


class Member(threading.Thread):
    def __init__(self, name):
        super().__init__(daemon=True)
        self.name, self.stop, self.error = name, threading.Event(), None
        self.assigned = []  # partitions of its latest assignment, as the callbacks saw them

    def on_assign(self, _consumer, partitions):
        self.assigned = sorted(p.partition for p in partitions)

    def on_revoke(self, _consumer, _partitions):
        self.assigned = []

    def run(self):
        try:
            consumer = Consumer(dict(common, **{
                "group.id": group,
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
                "session.timeout.ms": 6000,
                "heartbeat.interval.ms": 500,
            }))
            consumer.subscribe([topic], on_assign=self.on_assign, on_revoke=self.on_revoke)
            while not self.stop.is_set():
                message = consumer.poll(0.1)
                if message is None:
                    continue
                if message.error():
                    raise KafkaException(message.error())
                value = message.value().decode()
                with lock:
                    deliveries.append(value)
                consumer.commit(message=message, asynchronous=False)
                with lock:
                    done.add(value)
            consumer.close()  # LeaveGroup
        except Exception as e:  # reported by the main thread
            self.error = e


members = {}


def wait_until(what, condition):
    # Observed state, not time: the fake delays a first join by 3 s, the test Kafka by 0.
    deadline = time.time() + 60
    while not condition():
        failed = [m for m in members.values() if m.error]
        if failed or time.time() > deadline:
            sys.exit("%s: %r" % (what, [(m.name, m.assigned, m.error) for m in members.values()] + [len(done)]))
        time.sleep(0.05)


def shape(lists):
    return sorted(lists, key=lambda p: p[:1])


phases = {}


def phase(name, names, expected):
    """Waits until the members `names` hold every partition between them, describes the group,
    then produces 10 records and waits until they are read and committed: no record is in
    flight during a rebalance, so each is read exactly once."""
    def covers():
        held = [members[n].assigned for n in names]
        return all(held) and sorted(p for h in held for p in h) == [0, 1, 2]

    wait_until(name + ": assignments", covers)
    described = admin.describe_consumer_groups([group])[group].result()
    produce(name)
    wait_until(name + ": records", lambda: len(done) == expected)
    phases[name] = {
        "assigned": shape([members[n].assigned for n in names]),
        "members": len(described.members),
        "described": shape([sorted(tp.partition for tp in m.assignment.topic_partitions) for m in described.members]),
        "state": described.state.name,
        "assignor": described.partition_assignor,
        "consumed": len(done),
    }


def start(name):
    members[name] = Member(name)
    members[name].start()


def leave(name):
    members[name].stop.set()
    members[name].join()
    if members[name].error:
        sys.exit("%s failed: %r" % (name, members[name].error))
    del members[name]


produce("before")
start("a")
phase("alone", ["a"], 20)
start("b")
phase("joined", ["a", "b"], 30)
leave("a")
phase("left", ["b"], 40)
leave("b")
producer.flush(30)

# What the group committed, the partitions' ends, and the group once every member left.
reader = Consumer(dict(common, **{"group.id": group, "enable.auto.commit": False}))
partitions = [TopicPartition(topic, p) for p in range(3)]
committed = [tp.offset for tp in reader.committed(partitions, timeout=30)]
high = [reader.get_watermark_offsets(tp, timeout=30)[1] for tp in partitions]
reader.close()
empty = admin.describe_consumer_groups([group])[group].result()
admin.delete_topics([topic], operation_timeout=30)[topic].result()

print(json.dumps({
    "consumed": len(done),
    "duplicates": len(deliveries) - len(set(deliveries)),
    "phases": phases,
    "final_state": empty.state.name,
    "final_members": len(empty.members),
    "committed": committed,
    "high": high,
}))
