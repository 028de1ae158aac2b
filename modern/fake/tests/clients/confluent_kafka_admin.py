"""confluent-kafka's (librdkafka's) AdminClient against kwire-fake: every admin call whose
API the fake serves, refusals included, observed without ids, hosts, ports or node ids (the fake
has 3 nodes, the Kafka it is compared with 1).
Usage: python confluent_kafka_admin.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import time
import uuid

from confluent_kafka import (Consumer, ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException, Producer,
                             TopicCollection, TopicPartition)
from confluent_kafka.admin import (AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewPartitions,
                                   NewTopic, OffsetSpec)

bootstrap = sys.argv[1]
suffix = uuid.uuid4().hex[:8]
topic, other, missing = ("rd-admin-%s-%s" % (n, suffix) for n in ("main", "other", "missing"))
common = {"bootstrap.servers": bootstrap, "client.id": "rd-admin"}
admin = AdminClient(common)
summary = {}


def strip(name):
    return name.replace(suffix, "*")


def outcome(future):
    """What a future came to: "ok", or the error's name."""
    try:
        future.result(timeout=60)
        return "ok"
    except KafkaException as e:
        return e.args[0].name()


def outcomes(futures):
    return sorted((strip(str(k)), outcome(f)) for k, f in futures.items())


def ours():
    return sorted(strip(t) for t in admin.list_topics(timeout=30).topics if t.endswith(suffix))


# CreateTopics: validate_only creates nothing; configs checked; a topic that exists is refused.
main_topic = lambda: NewTopic(topic, 2, 1, config={"retention.ms": "3600000"})
summary["create_validate_only"] = outcomes(admin.create_topics([main_topic()], validate_only=True))
summary["listed_after_validate_only"] = ours()
summary["create"] = outcomes(admin.create_topics([main_topic(), NewTopic(other, 1, 1)], operation_timeout=30))
summary["create_refused"] = outcomes(admin.create_topics([
    NewTopic("rd-admin-bad-" + suffix, 1, 1, config={"retention.ms": "soon"}),
    NewTopic("rd-admin-unknown-" + suffix, 1, 1, config={"no.such.config": "1"}),
    NewTopic(topic, 1, 1),
    NewTopic("rd-admin-too-many-" + suffix, 1, 5),
]))
# Kafka's brokers learn of new topics a moment after the controller answers.
deadline = time.time() + 30
while ours() != sorted(map(strip, [topic, other])) and time.time() < deadline:
    time.sleep(0.1)
summary["listed"] = ours()

# DescribeTopics (Metadata): partitions (replica and ISR counts, a leader), the operations allowed.


def describe_topics(names):
    futures = admin.describe_topics(TopicCollection(names), include_authorized_operations=True)
    out = {}
    for name, future in futures.items():
        try:
            t = future.result(timeout=30)
        except KafkaException as e:
            out[strip(name)] = e.args[0].name()
            continue
        out[strip(name)] = {
            "internal": t.is_internal,
            "partitions": [(p.id, len(p.replicas), len(p.isr), p.leader is not None) for p in t.partitions],
            "operations": sorted(op.name for op in t.authorized_operations or []),
        }
    return out


summary["described"] = describe_topics([topic, other, missing])

# CreatePartitions: grow, validate only, shrink (refused), an unknown topic.
summary["create_partitions"] = outcomes(admin.create_partitions([NewPartitions(topic, 4)]))
summary["create_partitions_validate_only"] = outcomes(
    admin.create_partitions([NewPartitions(topic, 6)], validate_only=True))
summary["create_partitions_refused"] = outcomes(
    admin.create_partitions([NewPartitions(other, 1), NewPartitions(missing, 2)]))
# Kafka's brokers learn of new partitions a moment after the controller answers.
partition_count = lambda: len(admin.list_topics(topic, timeout=30).topics[topic].partitions)
deadline = time.time() + 30
while partition_count() != 4 and time.time() < deadline:
    time.sleep(0.1)
summary["partitions_after"] = partition_count()

# DescribeConfigs: the topic's (set ones, and every name with its source), a broker's.
resource = ConfigResource("topic", topic)


def configs(r=resource):
    entries = admin.describe_configs([r])[r].result(timeout=30)
    return {k: (e.value, e.source, e.is_read_only, e.is_default, e.is_sensitive) for k, e in sorted(entries.items())}


every = configs()
summary["configs_all"] = every
modified = lambda: {k: v[0] for k, v in configs().items() if v[1] == 1}  # 1: DYNAMIC_TOPIC_CONFIG
summary["configs_modified"] = modified()


def changed(before):
    """The topic's set configs once they differ from `before`: Kafka's broker answers
    DescribeConfigs from metadata that learns of an alter a moment after it is answered."""
    deadline = time.time() + 10
    while modified() == before and time.time() < deadline:
        time.sleep(0.1)
    return modified()


summary["configs_missing_topic"] = outcome(admin.describe_configs([ConfigResource("topic", missing)])[
    ConfigResource("topic", missing)])
cluster = admin.describe_cluster(include_authorized_operations=True).result(timeout=30)
broker = ConfigResource("broker", str(cluster.controller.id))
summary["broker_message_max_bytes"] = configs(broker)["message.max.bytes"][0]

# IncrementalAlterConfigs: SET, APPEND, SUBTRACT, DELETE; validate only; refusals.


def incremental(changes, name=topic, **kwargs):
    entries = [ConfigEntry(k, v, incremental_operation=op) for k, (op, v) in changes.items()]
    return outcomes(admin.incremental_alter_configs([ConfigResource("topic", name, incremental_configs=entries)],
                                                    **kwargs))


SET, APPEND, SUBTRACT, DELETE = (AlterConfigOpType.SET, AlterConfigOpType.APPEND, AlterConfigOpType.SUBTRACT,
                                 AlterConfigOpType.DELETE)
summary["incremental"] = incremental({"retention.ms": (SET, "7200000"), "cleanup.policy": (APPEND, "compact"),
                                      "segment.ms": (SET, "3600000")})
summary["after_incremental"] = changed(summary["configs_modified"])
summary["incremental_validate_only"] = incremental({"retention.ms": (SET, "1000")}, validate_only=True)
summary["incremental_bad_value"] = incremental({"retention.ms": (SET, "soon")})
summary["incremental_unknown_name"] = incremental({"no.such.config": (SET, "1")})
summary["incremental_append_to_scalar"] = incremental({"retention.ms": (APPEND, "1")})
summary["incremental_missing_topic"] = incremental({"retention.ms": (SET, "1")}, name=missing)
summary["incremental_subtract_delete"] = incremental({"cleanup.policy": (SUBTRACT, "delete"),
                                                      "segment.ms": (DELETE, None)})
summary["after_subtract_delete"] = changed(summary["after_incremental"])
# AlterConfigs: the whole set, what it does not name back to the default.
summary["alter"] = outcomes(admin.alter_configs([ConfigResource("topic", topic,
                                                                set_config={"retention.ms": "9000000"})]))
summary["after_alter"] = changed(summary["after_subtract_delete"])
summary["alter_validate_only"] = outcomes(admin.alter_configs(
    [ConfigResource("topic", topic, set_config={"retention.ms": "1"})], validate_only=True))
summary["alter_bad_value"] = outcomes(admin.alter_configs(
    [ConfigResource("topic", topic, set_config={"max.message.bytes": "big"})]))
summary["after_alter_refused"] = modified()

# Records with known timestamps: ListOffsets by spec, then DeleteRecords.
producer = Producer(dict(common, **{"acks": "all"}))
for i in range(6):
    producer.produce(topic, value=b"v%d" % i, partition=i % 2, timestamp=1_700_000_000_000 + i * 1000)
if producer.flush(30) != 0:
    sys.exit("produce did not finish")
tp = lambda p, offset=-1001: TopicPartition(topic, p, offset)


def offsets(spec):
    found = admin.list_offsets({tp(0): spec, tp(1): spec})
    out = []
    for key, future in sorted(found.items(), key=lambda kv: kv[0].partition):
        try:
            r = future.result(timeout=30)
            out.append([key.partition, r.offset, r.timestamp, r.leader_epoch])
        except KafkaException as e:
            out.append([key.partition, e.args[0].name()])
    return out


summary["offsets_earliest"] = offsets(OffsetSpec.earliest())
summary["offsets_latest"] = offsets(OffsetSpec.latest())
summary["offsets_max_timestamp"] = offsets(OffsetSpec.max_timestamp())
summary["offsets_by_time"] = offsets(OffsetSpec.for_timestamp(1_700_000_002_000))
summary["offsets_after_last_time"] = offsets(OffsetSpec.for_timestamp(1_700_000_009_000))
deleted = admin.delete_records([tp(0, 2), tp(1, -1)], operation_timeout=30)
summary["delete_records"] = sorted([k.partition, f.result(timeout=30).low_watermark] for k, f in deleted.items())
summary["delete_records_beyond_end"] = outcomes({0: admin.delete_records([tp(0, 100)])[tp(0, 100)]})
summary["offsets_earliest_after_delete"] = offsets(OffsetSpec.earliest())

# Groups: "left" committed and left (Empty), "held" keeps a member (Stable).
left, held, no_group = ("rd-admin-%s-%s" % (n, suffix) for n in ("left", "held", "no-group"))


def member(group):
    consumer = Consumer(dict(common, **{"group.id": group, "client.id": "rd-admin-member",
                                        "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    consumer.subscribe([topic])
    deadline = time.time() + 60
    while not consumer.assignment() and time.time() < deadline:
        consumer.poll(0.2)
    return consumer


consumer = member(left)
consumer.commit(offsets=[tp(0, 3), tp(1, 3)], asynchronous=False)
consumer.close()
holder = member(held)
holder.commit(offsets=[tp(0, 2)], asynchronous=False)


def listed(**kwargs):
    found = admin.list_consumer_groups(**kwargs).result(timeout=30)
    return sorted((strip(g.group_id), g.is_simple_consumer_group, g.state.name, g.type.name)
                  for g in found.valid if g.group_id.endswith(suffix))


summary["groups_listed"] = listed()
summary["groups_listed_empty"] = listed(states={ConsumerGroupState.EMPTY})


def describe_groups(ids):
    out = {}
    for group_id, future in admin.describe_consumer_groups(ids, include_authorized_operations=True).items():
        try:
            g = future.result(timeout=30)
        except KafkaException as e:
            out[strip(group_id)] = e.args[0].name()
            continue
        out[strip(group_id)] = {
            "simple": g.is_simple_consumer_group,
            "state": g.state.name,
            "type": g.type.name,
            "assignor": g.partition_assignor,
            "members": sorted((m.client_id, sorted((strip(p.topic), p.partition) for p in m.assignment.topic_partitions))
                              for m in g.members),
            "operations": sorted(op.name for op in g.authorized_operations or []),
        }
    return out


summary["groups_described"] = describe_groups([left, held, no_group])


def committed(group, partitions=None):
    request = ConsumerGroupTopicPartitions(group, partitions)
    try:
        found = admin.list_consumer_group_offsets([request])[group].result(timeout=30)
    except KafkaException as e:
        return e.args[0].name()
    return [[strip(p.topic), p.partition, p.offset, p.metadata, p.error.name() if p.error else None]
            for p in found.topic_partitions]


summary["group_offsets"] = {"left": committed(left), "held": committed(held), "asked": committed(left, [tp(1), tp(3)])}


def alter(group, partitions):
    future = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, partitions)])[group]
    try:
        return [[p.partition, p.offset, p.error.name() if p.error else None]
                for p in future.result(timeout=30).topic_partitions]
    except KafkaException as e:
        return e.args[0].name()


summary["alter_group_offsets"] = alter(left, [tp(0, 1)])
summary["alter_group_offsets_held"] = alter(held, [tp(0, 1)])
summary["group_offsets_after_alter"] = committed(left)
summary["delete_groups"] = outcomes(admin.delete_consumer_groups([left, held, no_group]))
summary["groups_after_delete"] = listed()
holder.close()

# The cluster: the controller among the nodes, and what the client may do on it.
summary["cluster"] = {
    "controller_listed": cluster.controller.id in [n.id for n in cluster.nodes],
    "cluster_id": bool(cluster.cluster_id),
    "operations": sorted(op.name for op in cluster.authorized_operations or []),
}

# DeleteTopics: two, and one that does not exist.
summary["delete_topics"] = outcomes(admin.delete_topics([topic, other, missing], operation_timeout=30))
deadline = time.time() + 30
while ours() and time.time() < deadline:
    time.sleep(0.1)
summary["listed_after_delete"] = ours()

print(json.dumps(summary, sort_keys=True))
