// kafkajs transactions against kwire-fake and Apache Kafka: a transactional producer
// (idempotent, one request in flight) commits, aborts and commits; read_committed and
// read_uncommitted consumers; consume-transform-produce, each record copied to TOPIC-out with
// its group's offset in the same transaction (sendOffsets); an aborted sendOffsets; the last
// stable offset while a transaction is open; a producer fenced by a second one of the same
// transactional id.
// Usage: node kafkajs_txn.js <bootstrap>; prints a JSON summary on stdout.
const { Kafka, logLevel } = require('kafkajs');
const crypto = require('crypto');

const bootstrap = process.argv[2].split(',');
const suffix = crypto.randomBytes(4).toString('hex');
const topic = `kafkajs-txn-${suffix}`;
const outTopic = `${topic}-out`;
const kafka = new Kafka({ clientId: 'kafkajs-txn', brokers: bootstrap, logLevel: logLevel.NOTHING });
const N = 6;
const PARTITIONS = 3;

const records = (tag) => Array.from({ length: N }, (_, i) => ({ key: `k-${i}`, value: `${tag}-${i}`, partition: i % PARTITIONS }));
const transactional = (id) => kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1 });

// Observed state, not time: the fake delays a group's first join by 3 s, the test Kafka by 0.
const waitFor = async (what, condition) => {
  const deadline = Date.now() + 60000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not after 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

// A new group reading `from` from the start until `expected` records came, then a little longer
// for any record read twice; values sorted.
async function readAll(from, readUncommitted, expected) {
  const consumer = kafka.consumer({ groupId: `read-${crypto.randomBytes(4).toString('hex')}`, readUncommitted, maxWaitTimeInMs: 200 });
  const values = [];
  await consumer.connect();
  await consumer.subscribe({ topic: from, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => { values.push(message.value.toString()); } });
  await waitFor(`reading ${from} (${values.length} of ${expected})`, () => values.length >= expected);
  await new Promise((r) => setTimeout(r, 1000));
  await consumer.disconnect();
  return { records: values.length, distinct: new Set(values).size, values: values.sort() };
}

// Why `fn` failed: kafkajs' error name and Kafka's error type, or "none".
async function failure(fn) {
  try {
    await fn();
    return 'none';
  } catch (e) {
    const cause = e.originalError || e.cause || e;
    return `${e.name} ${cause.type || cause.name}`;
  }
}

const byPartition = (list, field) => list.slice().sort((a, b) => a.partition - b.partition).map((p) => Number(p[field]));

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [topic, outTopic].map((t) => ({ topic: t, numPartitions: PARTITIONS, replicationFactor: 1 })),
    waitForLeaders: true,
  });
  const summary = {};

  // Commit, abort, commit: the base offset each partition answered per transaction.
  const producer = transactional(`kafkajs-txn-${suffix}`);
  await producer.connect();
  summary.base_offsets = {};
  for (const [tag, commit] of [['committed1', true], ['aborted', false], ['committed2', true]]) {
    const txn = await producer.transaction();
    const sent = await txn.send({ topic, acks: -1, messages: records(tag) });
    await (commit ? txn.commit() : txn.abort());
    summary.base_offsets[tag] = byPartition(sent, 'baseOffset');
  }
  summary.read_committed = await readAll(topic, false, 2 * N);
  summary.read_uncommitted = await readAll(topic, true, 3 * N);

  // Consume-transform-produce: one transaction per record, its copy and its group offset.
  const groupId = `kafkajs-txn-group-${suffix}`;
  const copier = kafka.consumer({ groupId, readUncommitted: false, maxWaitTimeInMs: 200 });
  let copied = 0;
  const sentOffsets = [-1, -1, -1]; // the last offset each partition's transactions committed
  let failed = null;
  copier.on(copier.events.CRASH, ({ payload }) => { failed = failed || payload.error; });
  await copier.connect();
  await copier.subscribe({ topic, fromBeginning: true });
  await copier.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      const txn = await producer.transaction();
      await txn.send({ topic: outTopic, acks: -1, messages: [{ key: message.key, value: message.value, partition }] });
      const offset = (BigInt(message.offset) + 1n).toString();
      await txn.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition, offset }] }] });
      await txn.commit();
      copied++;
      sentOffsets[partition] = Number(offset);
    },
  });
  await waitFor('consume-transform-produce', () => { if (failed) throw failed; return copied >= 2 * N; });
  await new Promise((r) => setTimeout(r, 1000));
  await copier.disconnect();
  // Kafka answers EndTxn before writing the markers which make the offsets visible.
  const fetchCommitted = async () => byPartition((await admin.fetchOffsets({ groupId, topics: [topic] }))[0].partitions, 'offset');
  let committed = await fetchCommitted();
  for (let tries = 0; tries < 100 && committed.join() !== sentOffsets.join(); tries++) {
    await new Promise((r) => setTimeout(r, 100));
    committed = await fetchCommitted();
  }
  const ends = await admin.fetchTopicOffsets(topic);
  summary.consume_transform_produce = {
    copied,
    committed,
    high: byPartition(ends, 'high'),
    out_read_committed: await readAll(outTopic, false, 2 * N),
  };

  // Offsets sent in an aborted transaction are dropped.
  const aborted = await producer.transaction();
  await aborted.sendOffsets({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: '1' }] }] });
  await aborted.abort();
  summary.committed_after_aborted_offsets = await fetchCommitted();

  // A second producer of the same transactional id fences the first: kafkajs asks for its
  // producer id at its first transaction, which aborts the first's open one.
  const second = transactional(`kafkajs-txn-${suffix}`);
  await second.connect();
  const fencedTxn = await producer.transaction();
  await fencedTxn.send({ topic, acks: -1, messages: [{ value: 'fenced', partition: 0 }] });
  // kafkajs' ListOffsets asks for read_committed: the open transaction holds partition 0 at 9.
  summary.high_while_open = byPartition(await admin.fetchTopicOffsets(topic), 'high');
  const secondTxn = await second.transaction();
  summary.fenced_commit = await failure(() => fencedTxn.commit());
  await secondTxn.send({ topic, acks: -1, messages: [{ value: 'second', partition: 0 }] });
  await secondTxn.commit();
  const after = await readAll(topic, false, 2 * N + 1);
  summary.read_committed_after_fencing = after.values.filter((v) => !v.startsWith('committed'));
  // Only now: fetchTopicOffsets reads the last stable offset, which passes 'second' once Kafka
  // has written the markers (after answering EndTxn).
  summary.high_after_fencing = byPartition(await admin.fetchTopicOffsets(topic), 'high');
  await second.disconnect();
  await producer.disconnect().catch(() => {});
  await admin.deleteTopics({ topics: [topic, outTopic] });
  await admin.disconnect();
  console.log(JSON.stringify(summary));
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
