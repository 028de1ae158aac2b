"""confluent-kafka (librdkafka): a KIP-848 consumer group (group.protocol=consumer) whose members
join and leave over a 6-partition topic. Member a alone, then b joins, then c joins (with a
regular expression, which the broker resolves; a and b subscribe by name), then a leaves; the
broker's assignor splits the partitions and each member sees its (incremental) assignments
through on_assign, on_revoke and on_lost, polling in a thread of its own. Then the group is
listed, refused deletion while it has members, and deleted once empty. Last, in a group of
its own, a static member steps out and comes back to its partitions.
Usage: python confluent_kafka_consumer_protocol.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import threading
import time
import uuid

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 6
bootstrap = sys.argv[1]
suffix = uuid.uuid4().hex[:8]
topic = "rdkafka-cg-" + suffix
group = "rdkafka-cg-" + suffix
common = {"bootstrap.servers": bootstrap, "client.id": "confluent-kafka-consumer-protocol"}

admin = AdminClient(common)
for future in admin.create_topics([NewTopic(topic, PARTITIONS, 1)], operation_timeout=30).values():
    future.result()
producer = Producer(dict(common, **{"enable.idempotence": True, "acks": "all"}))


def produce(phase):
    # Record i to partition i % 6: every member holds some.
    for i in range(10):
        producer.produce(topic, partition=i % PARTITIONS, value=("%s-%d" % (phase, i)).encode())
    if producer.flush(60) != 0:
        sys.exit("produce for %s did not finish" % phase)


deliveries = []  # every record a member was handed, duplicates included
done = set()  # records whose offset commit returned
overlaps = []  # a partition assigned to a member while another still held it
lock = threading.Lock()
members = {}


class Member(threading.Thread):
    def __init__(self, name, subscription, group_id, instance):
        super().__init__(daemon=True)
        self.name, self.subscription, self.stop, self.error = name, subscription, threading.Event(), None
        self.group_id, self.instance = group_id, instance
        self.held = set()  # what the callbacks gave and did not take back (incremental)

    def on_assign(self, _consumer, partitions):
        with lock:
            added = {p.partition for p in partitions}
            for other in list(members.values()):
                if other is not self and other.held & added:
                    overlaps.append([self.name, other.name, sorted(other.held & added)])
            self.held |= added

    def on_revoke(self, _consumer, partitions):
        with lock:
            self.held -= {p.partition for p in partitions}

    def on_lost(self, _consumer, partitions):
        with lock:
            self.held -= {p.partition for p in partitions}

    def run(self):
        try:
            # With the consumer protocol the broker owns the timeouts: no session.timeout.ms,
            # heartbeat.interval.ms or partition.assignment.strategy here.
            config = dict(common, **{
                "group.id": self.group_id,
                "group.protocol": "consumer",
                "auto.offset.reset": "earliest",
                "enable.auto.commit": False,
            })
            if self.instance:
                config["group.instance.id"] = self.instance
            consumer = Consumer(config)
            consumer.subscribe([self.subscription], on_assign=self.on_assign, on_revoke=self.on_revoke, on_lost=self.on_lost)
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
            consumer.close()  # a heartbeat with member epoch -1, or -2 for a static member
        except Exception as e:  # reported by the main thread
            self.error = e


def wait_until(what, condition, seconds=60):
    # Observed state, not time: heartbeats come every 5 s, so each step takes a few.
    deadline = time.time() + seconds
    while not condition():
        failed = [m for m in members.values() if m.error]
        if failed or time.time() > deadline:
            sys.exit("%s: %r" % (what, [(m.name, sorted(m.held), m.error) for m in members.values()] + [len(done)]))
        time.sleep(0.05)


def holdings(names):
    with lock:
        return [sorted(members[n].held) for n in names]


def settled(names):
    """Each member holds something, and together every partition, none twice."""
    held = holdings(names)
    return all(held) and sorted(p for h in held for p in h) == list(range(PARTITIONS))


def describe():
    return admin.describe_consumer_groups([group])[group].result()


def sizes(lists):
    return sorted(len(x) for x in lists)


phases = {}


def phase(name, names, expected):
    """Waits until the members `names` hold every partition between them and the group is
    Stable, then produces 10 records and waits until they are read and committed: no record is
    in flight during a rebalance, so each is read exactly once."""
    started = time.time()
    wait_until(name + ": assignments", lambda: settled(names))
    stable = [None]

    def is_stable():
        stable[0] = describe()
        return stable[0].state.name == "STABLE"

    wait_until(name + ": a Stable group", is_stable)
    described = stable[0]
    held = holdings(names)
    produce(name)
    wait_until(name + ": records", lambda: len(done) == expected)
    flat = [p for h in held for p in h]
    current = [sorted(tp.partition for tp in m.assignment.topic_partitions) for m in described.members]
    target = [m.target_assignment.topic_partitions if m.target_assignment else [] for m in described.members]
    phases[name] = {
        "sizes": sizes(held),
        "disjoint": len(flat) == len(set(flat)),
        "complete": sorted(set(flat)) == list(range(PARTITIONS)),
        "state": described.state.name,
        "members": len(described.members),
        "type": described.type.name,
        "assignor": described.partition_assignor,
        "described_sizes": sizes(current),
        "target_sizes": sizes(target),
        "described_matches": sorted(held) == sorted(current),
        "consumed": len(done),
    }
    print("%s: %.1f s" % (name, time.time() - started), file=sys.stderr)


def start(name, subscription=topic, group_id=group, instance=None):
    members[name] = Member(name, subscription, group_id, instance)
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
phase("b_joined", ["a", "b"], 30)
start("c", "^%s$" % topic)  # a regular expression: the broker resolves it (KIP-848)
phase("c_joined", ["a", "b", "c"], 40)
leave("a")
phase("a_left", ["b", "c"], 50)


def outcome(future, ok=lambda _: "ok"):
    """What a future of the admin client came to: its error's name, or ok(its result)."""
    try:
        return ok(future.result())
    except KafkaException as e:
        return e.args[0].name()


def listed():
    """The group as ListGroups shows it: [state, type], or None."""
    groups = admin.list_consumer_groups(request_timeout=30).result().valid
    return next(([g.state.name, g.type.name] for g in groups if g.group_id == group), None)


# With members: listed as they left it, and not deleted.
listed_with_members = listed()
delete_with_members = outcome(admin.delete_consumer_groups([group], request_timeout=30)[group])
leave("b")
leave("c")

# What the group committed, the partitions' ends, and the group once every member left.
reader = Consumer(dict(common, **{"group.id": group, "enable.auto.commit": False}))
partitions = [TopicPartition(topic, p) for p in range(PARTITIONS)]
committed = [tp.offset for tp in reader.committed(partitions, timeout=30)]
high = [reader.get_watermark_offsets(tp, timeout=30)[1] for tp in partitions]
reader.close()
empty = describe()
listed_empty = listed()
# Without members: deleted, offsets and all.
delete_empty = outcome(admin.delete_consumer_groups([group], request_timeout=30)[group])
after_delete = outcome(admin.describe_consumer_groups([group])[group], lambda d: [d.state.name, d.type.name])
listed_after_delete = listed()
admin.delete_topics([topic], operation_timeout=30)[topic].result()


def static_round():
    """A static member (group.instance.id) that closes only steps out (member epoch -2): its
    group keeps it and its partitions, and back under its instance id it has them again. Its
    own group over a topic without records: x static, y not."""
    static_topic, static_group = topic + "-static", group + "-static"
    admin.create_topics([NewTopic(static_topic, 4, 1)], operation_timeout=30)[static_topic].result()

    def described():
        d = admin.describe_consumer_groups([static_group])[static_group].result()
        return {"members": len(d.members), "sizes": sizes([m.assignment.topic_partitions for m in d.members]),
                "static": sorted(bool(m.group_instance_id) for m in d.members)}

    start("x", static_topic, static_group, "x-" + suffix)
    start("y", static_topic, static_group)
    wait_until("static: assignments", lambda: [len(h) for h in holdings(["x", "y"])] == [2, 2])
    x_held, y_held = holdings(["x", "y"])
    leave("x")
    # Nothing to wait on: y would get x's partitions at one of its heartbeats (every 5 s) if
    # x had left for good.
    time.sleep(7)
    out = {"stepped_out": dict(described(), y_kept_its_own=holdings(["y"]) == [y_held])}
    start("x", static_topic, static_group, "x-" + suffix)
    wait_until("static: back", lambda: holdings(["x"]) == [x_held])
    out["back"] = dict(described(), y_kept_its_own=holdings(["y"]) == [y_held])
    leave("x")
    leave("y")
    admin.delete_topics([static_topic], operation_timeout=30)[static_topic].result()
    return out


static = static_round()

print(json.dumps({
    "static": static,
    "consumed": len(done),
    "duplicates": len(deliveries) - len(set(deliveries)),
    "overlaps": overlaps,
    "phases": phases,
    "final": {"state": empty.state.name, "members": len(empty.members), "type": empty.type.name},
    "listed": {"with_members": listed_with_members, "empty": listed_empty, "after_delete": listed_after_delete},
    "delete": {"with_members": delete_with_members, "empty": delete_empty, "described_after": after_delete},
    "committed": committed,
    "high": high,
    "committed_is_high": committed == high,
}))
