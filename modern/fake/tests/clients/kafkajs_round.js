// kafkajs against kwire-fake and Apache Kafka: admin (create, describe and alter configs,
// add partitions), an idempotent producer (none, gzip) with headers, a consumer group whose
// members join and leave (assignments observed), committed offsets and end offsets.
// Usage: node kafkajs_round.js <bootstrap>; prints a JSON summary on stdout.
const { AssignerProtocol, Kafka, CompressionTypes, ConfigResourceTypes, logLevel } = require('kafkajs');
const crypto = require('crypto');

const bootstrap = process.argv[2].split(',');
const suffix = crypto.randomBytes(4).toString('hex');
const topic = `kafkajs-${suffix}`;
const kafka = new Kafka({ clientId: 'kafkajs-fake', brokers: bootstrap, logLevel: logLevel.NOTHING });

const records = (prefix, n) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${prefix}-${i}`, headers: { codec: prefix } }));

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
  const again = await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] });
  await admin.alterConfigs({
    validateOnly: false,
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
  });
  const configs = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    includeSynonyms: false,
  });
  const entry = (name) => configs.resources[0].configEntries.find((e) => e.configName === name).configValue;
  await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (const [name, compression] of [['none', CompressionTypes.None], ['gzip', CompressionTypes.GZIP]]) {
    await producer.send({ topic, acks: -1, compression, messages: records(name, 10) });
  }

  // A consumer group whose members join and leave: a alone, then b joins (the partitions
  // split between them), then a leaves (b takes them all). Each phase waits for the
  // assignments it expects, then produces records of its own, so that no record is in flight
  // during a rebalance: every record is read exactly once across the members.
  const groupId = `g-${suffix}`;
  const deliveries = []; // every record a member was handed, duplicates included
  const done = new Set(); // records whose offset commit returned
  const assigned = {}; // member -> partitions of its latest assignment (GROUP_JOIN)
  let failure = null;
  const member = async (name) => {
    const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500, maxWaitTimeInMs: 500 });
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
      assigned[name] = (payload.memberAssignment[topic] || []).slice().sort((x, y) => x - y);
    });
    // A retriable error (COORDINATOR_LOAD_IN_PROGRESS in recovery.rs) restarts the consumer.
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) failure = failure || payload.error;
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        const value = message.value.toString();
        if (message.headers.codec.toString() !== value.split('-')[0]) {
          failure = failure || new Error(`headers ${JSON.stringify(message.headers)}`);
        }
        deliveries.push(value);
        await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
        done.add(value);
      },
    });
    return consumer;
  };
  // Observed state, not time: the fake delays a first join by 3 s, the test Kafka by 0.
  const waitFor = async (what, condition) => {
    const deadline = Date.now() + 60000;
    while (!condition()) {
      if (failure) throw failure;
      if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify({ assigned, done: done.size })}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const shape = (lists) => lists.map((l) => l.slice().sort((x, y) => x - y)).sort((x, y) => x[0] - y[0]);
  const covers = (names) =>
    shape(names.map((n) => assigned[n] || [])).flat().sort().join() === '0,1,2' && names.every((n) => assigned[n]?.length);
  // What DescribeGroups says each member was assigned (the leader's SyncGroup, as stored).
  const describedShape = (group) =>
    shape(group.members.map((m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment).assignment[topic] || []));
  const phases = {};
  const phase = async (name, names, expected) => {
    await waitFor(`${name}: assignments`, () => covers(names));
    const group = (await admin.describeGroups([groupId])).groups[0];
    await producer.send({ topic, acks: -1, messages: records(name, 10) });
    await waitFor(`${name}: records`, () => done.size === expected);
    phases[name] = {
      assigned: shape(names.map((n) => assigned[n])),
      described: describedShape(group),
      members: group.members.length,
      state: group.state,
      consumed: done.size,
    };
  };
  const a = await member('a');
  await phase('alone', ['a'], 30);
  const b = await member('b');
  await phase('joined', ['a', 'b'], 40);
  await a.disconnect(); // LeaveGroup
  delete assigned.a;
  await phase('left', ['b'], 50);
  const described = await admin.describeGroups([groupId]);
  await b.disconnect();
  await producer.disconnect();
  const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.deleteTopics({ topics: [topic] });
  await admin.disconnect();
  const byPartition = (list, field) =>
    list.slice().sort((a, b) => a.partition - b.partition).map((p) => Number(p[field]));
  console.log(JSON.stringify({
    created_again: again,
    'retention.ms': entry('retention.ms'),
    'cleanup.policy': entry('cleanup.policy'),
    partitions: metadata.topics[0].partitions.length,
    consumed: done.size,
    duplicates: deliveries.length - new Set(deliveries).size,
    phases,
    group_protocol_type: described.groups[0].protocolType,
    group_protocol: described.groups[0].protocol,
    committed: byPartition(committed[0].partitions, 'offset'),
    high: byPartition(ends, 'high'),
  }));
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
