"""kafka-python's KafkaAdminClient against kwire-fake: every admin call whose API the fake
serves, refusals included, observed without ids, hosts, ports or node ids (the fake has 3 nodes,
the Kafka it is compared with 1).
Usage: python kafka_python_admin.py <bootstrap>; prints a JSON summary on stdout."""
import json
import sys
import time
import uuid

import kafka.errors as Errors
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, MemberToRemove, OffsetSpec, OffsetTimestamp
from kafka.structs import OffsetAndMetadata

bootstrap = sys.argv[1].split(",")
suffix = uuid.uuid4().hex[:8]
topic, other, by_id = ("py-admin-%s-%s" % (n, suffix) for n in ("main", "other", "by-id"))
admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafka-python-admin")
summary = {}


def name(code):
    return Errors.for_code(code).__name__


def refusal(call):
    """The error class a call raises, or "ok"."""
    try:
        call()
        return "ok"
    except Errors.KafkaError as e:
        return type(e).__name__


def ours(names):
    """Names of this run, without its suffix."""
    return sorted(n.replace(suffix, "*") for n in names if n.endswith(suffix))


def topics_result(r):
    return sorted((t["name"].replace(suffix, "*"), name(t["error_code"])) for t in r["topics"])


# CreateTopics: validate_only creates nothing; configs checked (a bad value, an unknown name);
# a topic that exists is refused.
spec = {"num_partitions": 2, "replication_factor": 1, "configs": {"retention.ms": "3600000"}}
validated = admin.create_topics({topic: spec}, validate_only=True)
summary["create_validate_only"] = sorted((t["name"].replace(suffix, "*"), name(t["error_code"]), t["num_partitions"],
                                          (t.get("configs") or {}).get("retention.ms", {}).get("value"))
                                         for t in validated["topics"])
summary["listed_after_validate_only"] = ours(admin.list_topics())
# Waiting until every broker knows the topics, as Kafka's learn of them a moment after.
created = admin.create_topics({topic: spec, other: {"num_partitions": 1}, by_id: {}}, wait_for_metadata=True)
summary["created"] = sorted((t["name"].replace(suffix, "*"), name(t["error_code"]), t["num_partitions"], t["replication_factor"],
                             (t.get("configs") or {}).get("retention.ms", {}).get("value"))
                            for t in created["topics"])
bad = admin.create_topics({"py-admin-bad-" + suffix: {"configs": {"retention.ms": "soon"}},
                           "py-admin-unknown-" + suffix: {"configs": {"no.such.config": "1"}},
                           topic: {}, "bad/name": {}}, raise_errors=False)
summary["create_refused"] = sorted((t["name"].replace(suffix, "*"), name(t["error_code"])) for t in bad["topics"])
summary["create_raises"] = refusal(lambda: admin.create_topics({topic: {}}))

# Metadata: the topics, their partitions (replica and ISR counts, a leader) and the operations
# the client may run on each.
summary["listed"] = ours(admin.list_topics())


def described(names):
    return sorted(({
        "name": t["name"].replace(suffix, "*"),
        "error": name(t["error_code"]),
        "internal": t.get("is_internal"),
        "partitions": [(p["partition_index"], name(p["error_code"]), len(p["replica_nodes"]), len(p["isr_nodes"]),
                        p["leader_id"] >= 0) for p in sorted(t["partitions"], key=lambda p: p["partition_index"])],
        "operations": sorted(t.get("authorized_operations") or []),
    } for t in admin.describe_topics(names)), key=lambda t: t["name"])


summary["described"] = described([topic, other, "py-admin-missing-" + suffix])
partitions = admin.describe_topic_partitions([topic, other])
summary["describe_topic_partitions"] = sorted((t["name"].replace(suffix, "*"), len(t["partitions"]),
                                               t["topic_authorized_operations"]) for t in partitions["topics"])

# CreatePartitions: grow, validate only, shrink (refused), an unknown topic.
grown = admin.create_partitions({topic: 4})
summary["create_partitions"] = [name(r.error_code) for r in grown.results]
only = admin.create_partitions({topic: 6}, validate_only=True)
refused = admin.create_partitions({topic: 3, "py-admin-missing-" + suffix: 2}, raise_errors=False)
summary["create_partitions_refused"] = sorted((r.name.replace(suffix, "*"), name(r.error_code))
                                              for r in refused.results)
summary["create_partitions_validate_only"] = [name(r.error_code) for r in only.results]
# Kafka's brokers learn of new partitions a moment after the controller answers.
partition_count = lambda: len(admin.describe_topics([topic])[0]["partitions"])
deadline = time.time() + 30
while partition_count() != 4 and time.time() < deadline:
    time.sleep(0.1)
summary["partitions_after"] = partition_count()

# Configs: the topic's modified ones, every name and where its value comes from, a broker's.
topic_resource = lambda configs=None: ConfigResource("TOPIC", topic, configs)


def modified():
    configs = admin.describe_configs([topic_resource()])["topic"][topic]
    return {k: (v["value"], v["config_source"]) for k, v in sorted(configs.items())}


summary["configs_modified"] = modified()


def changed(before):
    """The topic's set configs once they differ from `before`: Kafka's broker answers
    DescribeConfigs from metadata that learns of an alter a moment after it is answered."""
    deadline = time.time() + 10
    while modified() == before and time.time() < deadline:
        time.sleep(0.1)
    return modified()


every = admin.describe_configs([topic_resource()], config_filter="all")["topic"][topic]
summary["configs_all"] = {k: (v["value"], v["config_source"], v["read_only"], v["is_sensitive"], v.get("config_type"))
                          for k, v in sorted(every.items())}
summary["configs_keys"] = sorted(admin.describe_configs([topic_resource(["segment.ms", "retention.ms"])],
                                                        config_filter="all")["topic"][topic])
# An unknown topic's error is not raised: what comes back is observed.
missing = admin.describe_configs([ConfigResource("TOPIC", "py-admin-missing-" + suffix)])
summary["configs_missing_topic"] = {k: {n.replace(suffix, "*"): c for n, c in m.items()} for k, m in missing.items()}
broker = admin.describe_cluster()["controller_id"]
broker_configs = admin.describe_configs([ConfigResource("BROKER", str(broker), ["message.max.bytes"])],
                                        config_filter="all")["broker"][str(broker)]
summary["broker_message_max_bytes"] = broker_configs["message.max.bytes"]["value"]

# IncrementalAlterConfigs (the client's default): SET, APPEND, DELETE; validate only; a bad value.
result = lambda r: {k: {n.replace(suffix, "*"): v.split(":")[0] for n, v in m.items()} for k, m in r.items()}
summary["alter_incremental"] = result(admin.alter_configs([topic_resource(
    {"retention.ms": "7200000", "cleanup.policy": ("APPEND", "compact"), "segment.ms": "3600000"})]))
summary["after_incremental"] = changed(summary["configs_modified"])
summary["alter_incremental_validate_only"] = result(admin.alter_configs(
    [topic_resource({"retention.ms": "1000"})], validate_only=True))
summary["alter_incremental_bad"] = result(admin.alter_configs(
    [topic_resource({"retention.ms": "soon"})], raise_on_unknown=False))
summary["alter_incremental_missing"] = result(admin.alter_configs(
    [ConfigResource("TOPIC", "py-admin-missing-" + suffix, {"retention.ms": "1"})], raise_on_unknown=False))
summary["alter_delete"] = result(admin.alter_configs([topic_resource({"segment.ms": ("DELETE", None)})]))
summary["after_delete"] = changed(summary["after_incremental"])
# AlterConfigs (the whole set; the client adds back the modified ones it does not name).
summary["alter_whole"] = result(admin.alter_configs([topic_resource({"retention.ms": "9000000"})],
                                                    incremental=False))
summary["after_whole"] = changed(summary["after_delete"])
summary["reset"] = result(admin.reset_configs([topic_resource(["cleanup.policy"])]))
summary["after_reset"] = changed(summary["after_whole"])

# Records with known timestamps: ListOffsets by spec, then DeleteRecords.
producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
for i in range(6):
    producer.send(topic, value=b"v%d" % i, partition=i % 2, timestamp_ms=1_700_000_000_000 + i * 1000)
producer.flush(30)
producer.close()
tp0, tp1 = TopicPartition(topic, 0), TopicPartition(topic, 1)


def offsets(specs):
    found = admin.list_partition_offsets(specs)
    return [[tp.partition, found[tp].offset, found[tp].timestamp] for tp in sorted(found)]


summary["offsets_latest"] = offsets({tp0: OffsetSpec.LATEST, tp1: OffsetSpec.LATEST})
summary["offsets_earliest"] = offsets({tp0: OffsetSpec.EARLIEST, tp1: OffsetSpec.EARLIEST})
summary["offsets_max_timestamp"] = offsets({tp0: OffsetSpec.MAX_TIMESTAMP, tp1: OffsetSpec.MAX_TIMESTAMP})
summary["offsets_by_time"] = offsets({tp0: OffsetTimestamp(1_700_000_002_000),
                                      tp1: OffsetTimestamp(1_700_000_009_000)})
deleted = admin.delete_records({tp0: 2, tp1: -1})
summary["delete_records"] = sorted([tp.partition, r["low_watermark"], name(r["error_code"])]
                                   for tp, r in deleted.items())
summary["delete_records_beyond_end"] = refusal(lambda: admin.delete_records({tp0: 100}))
summary["offsets_earliest_after_delete"] = offsets({tp0: OffsetSpec.EARLIEST, tp1: OffsetSpec.EARLIEST})

# Groups: "left" committed and left (Empty), "held" keeps a member (Stable).
left, held = "py-admin-left-" + suffix, "py-admin-held-" + suffix


def member(group):
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, client_id="py-admin-member",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    deadline = time.time() + 60
    while not consumer.assignment() and time.time() < deadline:
        consumer.poll(timeout_ms=200)
    return consumer


def commit(consumer, offsets):
    # Kafka may still be settling the group after the first assignment (a second rebalance):
    # poll through it and commit again, as an application would.
    for _ in range(50):
        try:
            return consumer.commit(offsets)
        except Errors.RebalanceInProgressError:
            consumer.poll(timeout_ms=200)
    return consumer.commit(offsets)


consumer = member(left)
commit(consumer, {tp0: OffsetAndMetadata(3, "m", -1), tp1: OffsetAndMetadata(3, "", -1)})
consumer.close()
holder = member(held)
commit(holder, {tp0: OffsetAndMetadata(2, "", -1)})

summary["groups_listed"] = sorted((g["group_id"].replace(suffix, "*"), g.get("group_state"), g["protocol_type"],
                                   g.get("group_type")) for g in admin.list_groups() if g["group_id"].endswith(suffix))
summary["groups_listed_empty"] = ours(g["group_id"] for g in admin.list_groups(states_filter=["Empty"]))


def groups_described(ids):
    out = {}
    for group_id, g in admin.describe_groups(ids).items():
        out[group_id.replace(suffix, "*")] = {
            "error": (g["error"] or "").split(":")[0] or None,
            "state": g["group_state"],
            "protocol_type": g["protocol_type"],
            "protocol": g["protocol_data"],
            "members": sorted((m["client_id"], sorted(
                (t["topic"].replace(suffix, "*"), sorted(t["partitions"]))
                for t in m["member_assignment"]["assigned_partitions"])
                if m["member_assignment"] else None) for m in g["members"]),
            "operations": sorted(g.get("authorized_operations") or []),
        }
    return out


summary["groups_described"] = groups_described([left, held, "py-admin-missing-" + suffix])


def committed(group):
    found = admin.list_group_offsets(group)[group]
    return [[tp.topic.replace(suffix, "*"), tp.partition, o.offset, o.metadata] for tp, o in sorted(found.items())]


summary["group_offsets"] = {"left": committed(left), "held": committed(held)}
altered = admin.alter_group_offsets(left, {tp0: OffsetAndMetadata(1, "altered", -1)})
summary["alter_group_offsets"] = sorted([tp.partition, e.__name__] for tp, e in altered.items())
refused = admin.alter_group_offsets(held, {tp0: OffsetAndMetadata(1, "", -1)})
summary["alter_group_offsets_held"] = sorted([tp.partition, e.__name__] for tp, e in refused.items())
reset = admin.reset_group_offsets(left, {tp1: OffsetSpec.EARLIEST})
summary["reset_group_offsets"] = sorted([tp.partition, r["offset"], r["error"].__name__] for tp, r in reset.items())
gone = admin.delete_group_offsets(left, [tp1])
summary["delete_group_offsets"] = sorted([tp.partition, e.__name__] for tp, e in gone.items())
kept = admin.delete_group_offsets(held, [tp0])
summary["delete_group_offsets_held"] = sorted([tp.partition, e.__name__] for tp, e in kept.items())
summary["group_offsets_after"] = {"left": committed(left), "held": committed(held)}
removed = admin.remove_group_members(held, [MemberToRemove(member_id="nobody")])
summary["remove_unknown_member"] = sorted((m, e.__name__) for m, e in removed.items())
deleted = admin.delete_groups([left, held, "py-admin-missing-" + suffix])
summary["delete_groups"] = sorted((g.replace(suffix, "*"), r) for g, r in deleted.items())
summary["groups_after_delete"] = ours(g["group_id"] for g in admin.list_groups())
holder.close()

# The cluster: the controller among the brokers, and what the client may do on it.
cluster = admin.describe_cluster()
summary["cluster"] = {
    "controller_listed": cluster["controller_id"] in [b["broker_id"] for b in cluster["brokers"]],
    "cluster_id": bool(cluster["cluster_id"]),
    "operations": sorted(cluster.get("authorized_operations") or []),
}

# DeleteTopics: by name, by id, and one that does not exist.
topic_id = next(t["topic_id"] for t in admin.describe_topics([by_id]))
summary["delete_topics"] = topics_result(admin.delete_topics([topic, other]))
summary["delete_by_id"] = [name(t["error_code"]) for t in admin.delete_topics([uuid.UUID(str(topic_id))])["topics"]]
summary["delete_missing"] = refusal(lambda: admin.delete_topics(["py-admin-missing-" + suffix]))
deadline = time.time() + 30
while ours(admin.list_topics()) and time.time() < deadline:
    time.sleep(0.1)
summary["listed_after_delete"] = ours(admin.list_topics())
admin.close()

print(json.dumps(summary, sort_keys=True))
