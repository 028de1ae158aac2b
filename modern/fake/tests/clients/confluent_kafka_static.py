"""confluent-kafka (librdkafka) static group membership (KIP-345) against one cluster, for
modern/fake/tests/against_kafka/ to compare the fake with Apache Kafka 4.4:

- members a and b (group.instance.id "static-a", "static-b") share 4 partitions;
- b closes (a static member does not leave) and starts again with its instance id within the
  session timeout: it gets its partitions back and a is not rebalanced (no revocation);
- a third consumer with a's instance id takes its place: a is fenced.

Usage: confluent_kafka_static.py BOOTSTRAP   (one JSON summary line on stdout)
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

BOOTSTRAP = sys.argv[1]
TOPIC, GROUP, DEADLINE = "rdk-static", "rdk-static-group", 60


class Member:
    def __init__(self, instance):
        self.revoked = 0
        self.assigned = []
        self.error = None
        self.consumer = Consumer({"bootstrap.servers": BOOTSTRAP, "group.id": GROUP, "group.instance.id": instance,
                                  "session.timeout.ms": 30000, "partition.assignment.strategy": "range",
                                  "error_cb": self.on_error})
        self.consumer.subscribe([TOPIC], on_assign=self.on_assign, on_revoke=self.on_revoke)

    def on_assign(self, _, partitions):
        self.assigned = sorted(p.partition for p in partitions)

    def on_revoke(self, _, partitions):
        self.revoked += len(partitions)

    def on_error(self, err):
        if err.fatal():
            self.error = err.str()

    def poll(self):
        try:
            m = self.consumer.poll(0.2)
        except KafkaException as e:
            self.error = e.args[0].name()
            return
        # A fatal error comes back from poll as an error "message" with code _FATAL; its text
        # names the broker's error.
        if m is not None and m.error() and m.error().code() == KafkaError._FATAL:
            self.error = m.error().str()


def until(what, members, done, state=lambda: None):
    deadline = time.time() + DEADLINE
    while not done():
        if time.time() > deadline:
            raise SystemExit(f"timed out: {what} {state()}")
        for m in members:
            m.poll()


def main():
    admin = AdminClient({"bootstrap.servers": BOOTSTRAP})
    for f in admin.create_topics([NewTopic(TOPIC, 4, 1)]).values():
        f.result()
    summary = {}
    a, b = Member("static-a"), Member("static-b")
    until("a and b share the partitions", [a, b], lambda: sorted(a.assigned + b.assigned) == [0, 1, 2, 3]
          and a.assigned and b.assigned)
    summary["first"] = sorted([a.assigned, b.assigned])
    before = b.assigned
    # From here on a must see no rebalance (what it revoked as b joined does not count).
    a.revoked = 0
    b.consumer.close()
    b2 = Member("static-b")
    until("b is back", [a, b2], lambda: b2.assigned == before)
    # A few more rounds: a must see no rebalance.
    for _ in range(10):
        for m in (a, b2):
            m.poll()
    summary["b_back_with_its_partitions"] = b2.assigned == before
    summary["a_revoked_while_b_restarted"] = a.revoked
    group = admin.describe_consumer_groups([GROUP])[GROUP].result()
    summary["described"] = {"state": str(group.state).split(".")[-1], "instances": sorted(m.group_instance_id for m in group.members)}
    a2 = Member("static-a")
    until("the second a is in and the first fenced", [a, a2, b2], lambda: a.error is not None and a2.assigned, lambda: (a.error, a2.assigned, b2.assigned, a.assigned))
    summary["a_fenced"] = "fenced by other consumer with same group.instance.id" in a.error
    summary["a2_took"] = a2.assigned
    for m in (a2, b2):
        m.consumer.close()
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
