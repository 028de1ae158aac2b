// kafkajs against kafka-wire-fake and Apache Kafka: admin (create, describe and alter configs,
// add partitions), an idempotent producer (none, gzip) with headers, a consumer group of two
// members reading every record, committed offsets and end offsets.
// Usage: node kafkajs_round.js <bootstrap>; prints a JSON summary on stdout.
const { Kafka, CompressionTypes, ConfigResourceTypes, logLevel } = require('kafkajs');
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
  await producer.disconnect();

  const groupId = `g-${suffix}`;
  const seen = new Map();
  const members = [0, 1].map(() => kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 }));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed only ${seen.size}`)), 60000);
    members.forEach(async (consumer, m) => {
      try {
        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({
          autoCommit: false,
          eachMessage: async ({ message, partition }) => {
            if (message.headers.codec.toString() !== message.value.toString().split('-')[0]) {
              reject(new Error(`headers ${JSON.stringify(message.headers)}`));
            }
            seen.set(message.value.toString(), m);
            await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
            if (seen.size === 20) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      } catch (e) {
        reject(e);
      }
    });
  });
  const described = await admin.describeGroups([groupId]);
  await Promise.all(members.map((c) => c.disconnect()));
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
    consumed: seen.size,
    group_protocol_type: described.groups[0].protocolType,
    group_members: described.groups[0].members.length,
    committed: byPartition(committed[0].partitions, 'offset'),
    high: byPartition(ends, 'high'),
  }));
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
