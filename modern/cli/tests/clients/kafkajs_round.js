// kafkajs round for the tap test: admin, idempotent produce (none, gzip) with headers, a
// committed and an aborted transaction, a consumer group reading committed records, offsets.
// Usage: node kafkajs_round.js <bootstrap>; prints a JSON summary on stdout.
const { Kafka, CompressionTypes, ConfigResourceTypes, logLevel } = require('kafkajs');
const crypto = require('crypto');

const bootstrap = process.argv[2];
const suffix = crypto.randomBytes(4).toString('hex');
const topic = `kafkajs-${suffix}`;
const kafka = new Kafka({ clientId: 'kafkajs-tap', brokers: [bootstrap], logLevel: logLevel.WARN });

const records = (prefix, n) =>
  Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${prefix}-${i}`, headers: { codec: prefix } }));

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  const configs = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }],
    includeSynonyms: false,
  });
  const cleanup = configs.resources[0].configEntries.find((e) => e.configName === 'cleanup.policy').configValue;

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (const [name, compression] of [['none', CompressionTypes.None], ['gzip', CompressionTypes.GZIP]]) {
    await producer.send({ topic, acks: -1, compression, messages: records(name, 10) });
  }
  await producer.disconnect();

  const transactional = kafka.producer({ transactionalId: `kafkajs-tx-${suffix}`, idempotent: true, maxInFlightRequests: 1 });
  await transactional.connect();
  for (const [name, commit] of [['committed', true], ['aborted', false]]) {
    const transaction = await transactional.transaction();
    await transaction.send({ topic, messages: records(name, 5) });
    await (commit ? transaction.commit() : transaction.abort());
  }
  await transactional.disconnect();

  const groupId = `g-${suffix}`;
  const consumer = kafka.consumer({ groupId, readUncommitted: false, sessionTimeout: 10000, heartbeatInterval: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed only ${values.length}`)), 60000);
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ message, partition }) => {
        if (message.headers.codec.toString() !== message.value.toString().split('-')[0]) {
          reject(new Error(`headers ${JSON.stringify(message.headers)}`));
        }
        values.push(message.value.toString());
        await consumer.commitOffsets([{ topic, partition, offset: (BigInt(message.offset) + 1n).toString() }]);
        if (values.length === 25) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  const committed = await admin.fetchOffsets({ groupId, topics: [topic] });
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  console.log(JSON.stringify({
    consumed: values.length,
    aborted_seen: values.filter((v) => v.startsWith('aborted')).length,
    committed: Number(committed[0].partitions[0].offset),
    high: Number(ends[0].high),
    'cleanup.policy': cleanup,
  }));
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
