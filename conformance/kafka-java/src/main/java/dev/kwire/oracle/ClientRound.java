package dev.kwire.oracle;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.ListTransactionsOptions;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own Java producer and consumer, for kwire's interoperability tests.
 *
 * <pre>
 * produce BOOTSTRAP TOPIC N         N records in each codec (none, gzip, snappy, lz4, zstd), with
 *                                   a header naming the codec; then, with a transactional
 *                                   producer, N committed and N aborted records
 * consume BOOTSTRAP TOPIC N ISOLATION   partition 0 from the start until N records (or 60 s);
 *                                   one JSON line per record: offset, key, value, headers
 * admin BOOTSTRAP TOPIC N           the admin client: create TOPIC with N partitions, describe
 *                                   it and the cluster, alter and describe its configuration,
 *                                   add a partition, list offsets, delete it; one JSON summary
 * idempotent BOOTSTRAP TOPIC N      creates TOPIC (3 partitions); an idempotent producer (acks=all,
 *                                   no transactions) writes N records in each codec with a codec
 *                                   header, record i to partition i % 3; reads them back; one JSON
 *                                   summary: offsets received per partition, whether unique, ends
 * group BOOTSTRAP TOPIC N           creates TOPIC (4 partitions); classic consumers of one new
 *                                   group: 2 members until they own every partition, a third
 *                                   joins, the first leaves (close), until the N records of each
 *                                   codec (produced between the steps) are consumed, each batch
 *                                   committed (commitSync); then the admin client: committed
 *                                   offsets, the group described, end offsets, the group listed,
 *                                   described once empty, deleted; one JSON summary (what depends
 *                                   on timing under "informational")
 * transactional BOOTSTRAP TOPIC N   creates TOPIC and TOPIC-out (3 partitions each); a transactional
 *                                   producer commits N records, aborts N, commits N (record i to
 *                                   partition i % 3); read_committed and read_uncommitted readers;
 *                                   a second producer of the same transactional.id fences the
 *                                   first and leaves a transaction open for the admin client to
 *                                   describe and list; then consume-transform-produce: a
 *                                   read_committed classic group member reads TOPIC and a third
 *                                   transactional producer copies each record to TOPIC-out with
 *                                   the member's offsets (sendOffsetsToTransaction); offsets of
 *                                   an aborted transaction; a transaction left to time out; two
 *                                   transactions interleaved on one partition, one aborted; one
 *                                   JSON summary of what does not depend on timing
 * consumer-protocol BOOTSTRAP TOPIC N   creates TOPIC (7 partitions); a KIP-848 group
 *                                   (group.protocol=consumer, the broker's assignor): one member,
 *                                   a second joins, a third joins, the first leaves; each step
 *                                   waits until the members own every partition once and the
 *                                   group is described Stable, then N records of one codec are
 *                                   produced and consumed, each batch committed; then committed
 *                                   and end offsets, the group listed, described once empty,
 *                                   deleted; one JSON summary (timing under "informational")
 * share BOOTSTRAP TOPIC N           the share.version feature (describeFeatures); creates TOPIC
 *                                   (3 partitions) and sets a new share group's
 *                                   share.auto.offset.reset=earliest (incrementalAlterConfigs on
 *                                   its GROUP resource); N records; two share consumers of the
 *                                   group (explicit acknowledgement) poll in turn: record i with
 *                                   i % 10 == 7 rejected, i % 10 == 3 released on its first
 *                                   delivery, everything else accepted; then the group described,
 *                                   listed, its share-partition start offsets; its offsets altered
 *                                   (refused while it has members), deleted; the group deleted;
 *                                   one JSON summary of what does not depend on timing
 * </pre>
 *
 * <p>The idempotent and group modes bound every wait to 60 s, give up after a few minutes in all,
 * and exit non-zero (an exception) on any failure.
 */
public final class ClientRound {
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String bootstrap = args[1];
        String topic = args[2];
        int n = Integer.parseInt(args[3]);
        if (mode.equals("produce")) {
            produce(bootstrap, topic, n);
        } else if (mode.equals("consume")) {
            consume(bootstrap, topic, n, args[4]);
        } else if (mode.equals("admin")) {
            admin(bootstrap, topic, n);
        } else if (mode.equals("idempotent")) {
            idempotent(bootstrap, topic, n);
        } else if (mode.equals("group")) {
            group(bootstrap, topic, n);
        } else if (mode.equals("transactional")) {
            transactional(bootstrap, topic, n);
        } else if (mode.equals("consumer-protocol")) {
            consumerProtocol(bootstrap, topic, n);
        } else if (mode.equals("share")) {
            share(bootstrap, topic, n);
        } else {
            throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    static Properties producerProperties(String bootstrap, String codec) {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        return p;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static void produce(String bootstrap, String topic, int n) throws Exception {
        for (String codec : CODECS) {
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProperties(bootstrap, codec))) {
                for (int i = 0; i < n; i++) {
                    ProducerRecord<byte[], byte[]> record =
                            new ProducerRecord<>(topic, 0, utf8("java-" + codec + "-key-" + i), utf8("java-" + codec + "-value-" + i));
                    record.headers().add("codec", utf8(codec));
                    producer.send(record);
                }
                producer.flush();
            }
        }
        Properties p = producerProperties(bootstrap, "lz4");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "java-client-round");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            for (boolean commit : new boolean[] {true, false}) {
                producer.beginTransaction();
                String tag = commit ? "committed" : "aborted";
                for (int i = 0; i < n; i++) {
                    producer.send(new ProducerRecord<>(topic, 0, null, utf8("java-txn-" + tag + "-" + i)));
                }
                producer.flush();
                if (commit) {
                    producer.commitTransaction();
                } else {
                    producer.abortTransaction();
                }
            }
        }
        System.out.println("produced");
    }

    static void consume(String bootstrap, String topic, int n, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        ObjectMapper mapper = new ObjectMapper();
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            int seen = 0;
            long deadline = System.currentTimeMillis() + 60_000;
            while (seen < n && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    ObjectNode line = mapper.createObjectNode();
                    line.put("offset", r.offset());
                    line.put("key", r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8));
                    line.put("value", r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    ArrayNode headers = line.putArray("headers");
                    for (Header h : r.headers()) {
                        headers.addArray().add(h.key()).add(h.value() == null ? null : new String(h.value(), StandardCharsets.UTF_8));
                    }
                    System.out.println(line);
                    seen++;
                }
            }
        }
    }

    static void admin(String bootstrap, String topic, int partitions) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        try (Admin admin = Admin.create(p)) {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all().get();
            out.put("cluster_nodes", admin.describeCluster().nodes().get().size());
            out.put("listed", admin.listTopics().names().get().contains(topic));
            ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            AlterConfigOp retention = new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(retention))).all().get();
            out.put("retention.ms", admin.describeConfigs(List.of(resource)).all().get().get(resource).get("retention.ms").value());
            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions + 1))).all().get();
            // Metadata catches up with the new partition shortly after CreatePartitions answers.
            int described = 0;
            for (int attempt = 0; attempt < 50 && described != partitions + 1; attempt++) {
                TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
                described = d.partitions().size();
                if (described != partitions + 1) {
                    Thread.sleep(100);
                }
            }
            out.put("partitions", described);
            TopicPartition first = new TopicPartition(topic, 0);
            out.put("latest", admin.listOffsets(Map.of(first, OffsetSpec.latest())).all().get().get(first).offset());
            admin.deleteTopics(List.of(topic)).all().get();
            out.put("deleted", !admin.listTopics().names().get().contains(topic));
        }
        System.out.println(out);
    }

    // ---- idempotent and group: every wait bounded, any failure an exception (exit non-zero) ----

    static final long WAIT_SECONDS = 60;
    static final Duration WAIT = Duration.ofSeconds(WAIT_SECONDS);
    static final int IDEMPOTENT_PARTITIONS = 3;
    static final int GROUP_PARTITIONS = 4;

    /** Ends the JVM (exit 3) if the mode has not finished after `seconds`. */
    static void watchdog(String mode, int seconds) {
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(seconds * 1000L);
            } catch (InterruptedException e) {
                return;
            }
            System.err.println(mode + ": not finished after " + seconds + " s, giving up");
            System.err.flush();
            Runtime.getRuntime().halt(3);
        }, "watchdog");
        t.setDaemon(true);
        t.start();
    }

    static <T> T await(KafkaFuture<T> future) throws Exception {
        return future.get(WAIT_SECONDS, TimeUnit.SECONDS);
    }

    static void check(boolean condition, String what) {
        if (!condition) {
            throw new IllegalStateException(what);
        }
    }

    static Admin boundedAdmin(String bootstrap) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        return Admin.create(p);
    }

    /** Creates `topic` (replication factor 1) and waits until every partition has a leader. */
    static void createTopic(Admin admin, String topic, int partitions) throws Exception {
        await(admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1))).all());
        long deadline = System.currentTimeMillis() + WAIT.toMillis();
        while (true) {
            TopicDescription d = null;
            try {
                d = await(admin.describeTopics(List.of(topic)).allTopicNames()).get(topic);
            } catch (ExecutionException e) {
                // Kafka's metadata may not know a topic its controller just created.
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) {
                    throw e;
                }
            }
            if (d != null && d.partitions().size() == partitions && d.partitions().stream().allMatch(p -> p.leader() != null)) {
                return;
            }
            check(System.currentTimeMillis() < deadline, "topic " + topic + " without leaders after 60 s: " + d);
            Thread.sleep(100);
        }
    }

    static Properties idempotentProducer(String bootstrap, String codec) {
        Properties p = producerProperties(bootstrap, codec);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        return p;
    }

    /**
     * N records in each of `codecs`, record i to partition i % partitions, value
     * PREFIX-CODEC-value-i with a header naming the codec; the offsets each partition answered.
     */
    static Map<Integer, List<Long>> produceCodecs(String bootstrap, String topic, int n, int partitions, String prefix, String... codecs)
            throws Exception {
        Map<Integer, List<Long>> offsets = new TreeMap<>();
        for (String codec : codecs) {
            KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(idempotentProducer(bootstrap, codec));
            try {
                List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, i % partitions,
                            utf8(prefix + "-" + codec + "-key-" + i), utf8(prefix + "-" + codec + "-value-" + i));
                    record.headers().add("codec", utf8(codec));
                    sent.add(producer.send(record));
                }
                producer.flush();
                for (Future<RecordMetadata> f : sent) {
                    RecordMetadata m = f.get(WAIT_SECONDS, TimeUnit.SECONDS);
                    offsets.computeIfAbsent(m.partition(), k -> new ArrayList<>()).add(m.offset());
                }
            } finally {
                producer.close(WAIT);
            }
        }
        return offsets;
    }

    /** Whether a record's key and codec header agree with its value (PREFIX-CODEC-value-I). */
    static boolean recordMatches(ConsumerRecord<byte[], byte[]> r) {
        String value = r.value() == null ? "" : new String(r.value(), StandardCharsets.UTF_8);
        String[] parts = value.split("-");
        Header codec = r.headers().lastHeader("codec");
        return parts.length == 4
                && codec != null
                && parts[1].equals(new String(codec.value(), StandardCharsets.UTF_8))
                && r.key() != null
                && value.replace("-value-", "-key-").equals(new String(r.key(), StandardCharsets.UTF_8));
    }

    static List<TopicPartition> partitionsOf(String topic, int partitions) {
        List<TopicPartition> all = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            all.add(new TopicPartition(topic, p));
        }
        return all;
    }

    static void idempotent(String bootstrap, String topic, int n) throws Exception {
        watchdog("idempotent", 240);
        int partitions = IDEMPOTENT_PARTITIONS;
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        out.put("partitions", partitions);
        Admin creator = boundedAdmin(bootstrap);
        try {
            createTopic(creator, topic, partitions);
        } finally {
            creator.close(WAIT);
        }
        Map<Integer, List<Long>> offsets = produceCodecs(bootstrap, topic, n, partitions, "idem", CODECS);
        ObjectNode perPartition = out.putObject("offsets");
        boolean unique = true;
        int acknowledged = 0;
        for (Map.Entry<Integer, List<Long>> e : offsets.entrySet()) {
            ArrayNode list = perPartition.putArray(e.getKey().toString());
            e.getValue().forEach(list::add);
            unique &= new HashSet<>(e.getValue()).size() == e.getValue().size();
            acknowledged += e.getValue().size();
        }
        out.put("acknowledged", acknowledged);
        out.put("offsets_unique", unique);

        // Read back from the start of every partition.
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        List<TopicPartition> all = partitionsOf(topic, partitions);
        int total = n * CODECS.length;
        List<String> values = new ArrayList<>();
        boolean matches = true;
        Map<Integer, Integer> readPerPartition = new TreeMap<>();
        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p);
        try {
            consumer.assign(all);
            consumer.seekToBeginning(all);
            long deadline = System.currentTimeMillis() + WAIT.toMillis();
            while (values.size() < total && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    matches &= recordMatches(r);
                    readPerPartition.merge(r.partition(), 1, Integer::sum);
                }
            }
            // A little longer, for any record read twice.
            for (int i = 0; i < 3; i++) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    values.add(r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                    readPerPartition.merge(r.partition(), 1, Integer::sum);
                }
            }
            ObjectNode ends = out.putObject("end_offsets");
            for (Map.Entry<TopicPartition, Long> e : byPartition(consumer.endOffsets(all, WAIT)).entrySet()) {
                ends.put(Integer.toString(e.getKey().partition()), e.getValue());
            }
        } finally {
            consumer.close(WAIT);
        }
        out.put("read_back", values.size());
        out.put("read_back_distinct", new HashSet<>(values).size());
        ObjectNode read = out.putObject("read_per_partition");
        readPerPartition.forEach((k, v) -> read.put(k.toString(), v));
        out.put("keys_and_headers_match", matches);
        System.out.println(out);
        check(values.size() == total, "read back " + values.size() + " of " + total + " records within 60 s");
    }

    /** `map` in the order of its partitions. */
    static Map<TopicPartition, Long> byPartition(Map<TopicPartition, Long> map) {
        Map<TopicPartition, Long> sorted = new TreeMap<>((a, b) -> Integer.compare(a.partition(), b.partition()));
        sorted.putAll(map);
        return sorted;
    }

    /** One classic member of a group, polled by the main thread; its listener logs every change. */
    static final class Member implements ConsumerRebalanceListener {
        final String name;
        final KafkaConsumer<byte[], byte[]> consumer;
        int assignedCalls;
        int revokedCalls;
        int lostCalls;
        int consumed;
        int commitFailures;
        final ArrayNode events;

        Member(String name, String bootstrap, String groupId, String topic, ArrayNode events) {
            this(name, bootstrap, groupId, topic, events, "classic");
        }

        /** `protocol` "classic" or "consumer" (KIP-848). */
        Member(String name, String bootstrap, String groupId, String topic, ArrayNode events, String protocol) {
            this.name = name;
            this.events = events;
            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
            p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
            p.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "10");
            if (protocol.equals("classic")) {
                // With the consumer protocol the broker owns these (the client refuses them).
                p.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
                p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
            }
            p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
            p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
            consumer = new KafkaConsumer<>(p);
            consumer.subscribe(List.of(topic), this);
        }

        void event(String what, Collection<TopicPartition> partitions) {
            ArrayNode e = events.addArray().add(name).add(what);
            partitions.stream().mapToInt(TopicPartition::partition).sorted().forEach(e::add);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            assignedCalls++;
            event("assigned", partitions);
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            revokedCalls++;
            event("revoked", partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            lostCalls++;
            event("lost", partitions);
        }

        int owned() {
            return consumer.assignment().size();
        }

        boolean closed;

        void close() {
            if (!closed) {
                closed = true;
                consumer.close(WAIT);
            }
        }
    }

    /** What the members consumed, across all of them. */
    static final class Consumed {
        final List<String> values = new ArrayList<>();
        boolean matches = true;

        /** One poll of `m`; the batch's offsets committed (commitSync) before the next poll. */
        void poll(Member m) {
            ConsumerRecords<byte[], byte[]> records = m.consumer.poll(Duration.ofMillis(100));
            if (records.isEmpty()) {
                return;
            }
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            for (ConsumerRecord<byte[], byte[]> r : records) {
                values.add(r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8));
                matches &= recordMatches(r);
                m.consumed++;
                commit.put(new TopicPartition(r.topic(), r.partition()), new OffsetAndMetadata(r.offset() + 1));
            }
            try {
                m.consumer.commitSync(commit, WAIT);
            } catch (CommitFailedException | RebalanceInProgressException e) {
                // Its records go to the partition's next owner again: counted as duplicates.
                m.commitFailures++;
            }
        }
    }

    /** Polls `members` in turn until each owns a partition, together all of them, and `more` holds. */
    static void pollUntil(String step, List<Member> members, int partitions, Consumed consumed, java.util.function.BooleanSupplier more) {
        long deadline = System.currentTimeMillis() + WAIT.toMillis();
        while (true) {
            for (Member m : members) {
                consumed.poll(m);
            }
            Set<TopicPartition> union = new HashSet<>();
            int sum = 0;
            boolean each = true;
            for (Member m : members) {
                union.addAll(m.consumer.assignment());
                sum += m.owned();
                each &= m.owned() > 0;
            }
            if (each && union.size() == partitions && sum == partitions && more.getAsBoolean()) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                StringBuilder owned = new StringBuilder();
                for (Member m : members) {
                    owned.append(' ').append(m.name).append('=').append(m.consumer.assignment());
                }
                throw new IllegalStateException(step + ": not done after 60 s; consumed " + consumed.values.size() + ";" + owned);
            }
        }
    }

    static ArrayNode sortedCounts(ObjectNode parent, String field, List<Integer> counts) {
        ArrayNode a = parent.putArray(field);
        counts.stream().sorted().forEach(a::add);
        return a;
    }

    static List<Integer> ownedCounts(List<Member> members) {
        List<Integer> counts = new ArrayList<>();
        for (Member m : members) {
            counts.add(m.owned());
        }
        return counts;
    }

    static ObjectNode describeGroup(Admin admin, String groupId, ObjectNode into) throws Exception {
        ConsumerGroupDescription d = await(admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId));
        into.put("state", String.valueOf(d.groupState()));
        into.put("members", d.members().size());
        List<Integer> counts = new ArrayList<>();
        for (MemberDescription m : d.members()) {
            counts.add(m.assignment().topicPartitions().size());
        }
        sortedCounts(into, "member_partitions", counts);
        into.put("assignor", d.partitionAssignor());
        into.put("type", String.valueOf(d.type()));
        into.put("simple", d.isSimpleConsumerGroup());
        return into;
    }

    static void group(String bootstrap, String topic, int n) throws Exception {
        watchdog("group", 420);
        int partitions = GROUP_PARTITIONS;
        int total = n * CODECS.length;
        String groupId = "java-group-" + UUID.randomUUID();
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        ObjectNode info = mapper.createObjectNode();
        info.put("group_id", groupId);
        ArrayNode events = info.putArray("rebalance_events");
        out.put("partitions", partitions);
        out.put("produced", total);
        List<TopicPartition> all = partitionsOf(topic, partitions);
        Consumed consumed = new Consumed();
        long started = System.currentTimeMillis();
        Admin admin = boundedAdmin(bootstrap);
        try {
            createTopic(admin, topic, partitions);
            produceCodecs(bootstrap, topic, n, partitions, "group", "none", "gzip");

            // Two members, until they own every partition between them.
            Member first = new Member("member-1", bootstrap, groupId, topic, events);
            Member second = new Member("member-2", bootstrap, groupId, topic, events);
            List<Member> members = new ArrayList<>(List.of(first, second));
            List<Member> everyone = new ArrayList<>(members);
            try {
                pollUntil("two members", members, partitions, consumed, () -> true);
                sortedCounts(out, "two_members_own", ownedCounts(members));
                info.put("two_members_ms", System.currentTimeMillis() - started);

                // A third joins.
                produceCodecs(bootstrap, topic, n, partitions, "group", "snappy", "lz4");
                Member third = new Member("member-3", bootstrap, groupId, topic, events);
                members.add(third);
                everyone.add(third);
                pollUntil("three members", members, partitions, consumed, () -> true);
                sortedCounts(out, "three_members_own", ownedCounts(members));
                info.put("three_members_ms", System.currentTimeMillis() - started);

                // The first leaves.
                produceCodecs(bootstrap, topic, n, partitions, "group", "zstd");
                first.close();
                members.remove(first);
                pollUntil("after one left", members, partitions, consumed, () -> consumed.values.size() >= total);
                info.put("all_consumed_ms", System.currentTimeMillis() - started);
                // A little longer, for any record consumed twice.
                for (int i = 0; i < 5; i++) {
                    for (Member m : members) {
                        consumed.poll(m);
                    }
                }
                sortedCounts(out, "final_members_own", ownedCounts(members));
                out.put("consumed", consumed.values.size());
                out.put("distinct", new HashSet<>(consumed.values).size());
                out.put("keys_and_headers_match", consumed.matches);

                // The admin client's view, with the two members still in the group.
                committedOffsets(admin, groupId, all, out.putObject("committed"));
                describeGroup(admin, groupId, out.putObject("described"));
                endOffsets(admin, all, out.putObject("end_offsets"));
                listGroup(admin, groupId, out.putObject("listed"));
            } finally {
                closeMembers(everyone, info.putObject("members"));
            }

            // Every member gone: the group is empty, its offsets kept; then deleted.
            describeThenDelete(admin, groupId, out);
        } finally {
            admin.close(WAIT);
            info.put("total_ms", System.currentTimeMillis() - started);
            out.set("informational", info);
            System.out.println(out);
        }
        check(consumed.values.size() == total && new HashSet<>(consumed.values).size() == total,
                "consumed " + consumed.values.size() + " records (" + new HashSet<>(consumed.values).size() + " distinct) of " + total);
    }

    // ---- consumer-protocol: a KIP-848 group ----

    /** 7: not a multiple of 2 or 3 members, so that the assignor's balance rule shows. */
    static final int CONSUMER_PROTOCOL_PARTITIONS = 7;

    /**
     * Polls `members` until they own every partition between them, none twice, each some, and
     * the group is described Stable with as many members; then records what each owns and the
     * group's description under `into`.
     */
    static void settle(String step, Admin admin, String groupId, List<Member> members, Consumed consumed, ObjectNode into)
            throws Exception {
        java.util.function.BooleanSupplier stable = () -> {
            try {
                ConsumerGroupDescription d = await(admin.describeConsumerGroups(List.of(groupId)).describedGroups().get(groupId));
                return String.valueOf(d.groupState()).equals("Stable") && d.members().size() == members.size();
            } catch (Exception e) {
                throw new IllegalStateException(step + ": describing the group", e);
            }
        };
        pollUntil(step, members, CONSUMER_PROTOCOL_PARTITIONS, consumed, stable);
        sortedCounts(into, "own", ownedCounts(members));
        describeGroup(admin, groupId, into.putObject("described"));
    }

    /** Polls `members` until `total` records were consumed (each batch committed). */
    static void consumeUntil(String step, List<Member> members, Consumed consumed, int total) {
        pollUntil(step, members, CONSUMER_PROTOCOL_PARTITIONS, consumed, () -> consumed.values.size() >= total);
    }

    static void consumerProtocol(String bootstrap, String topic, int n) throws Exception {
        watchdog("consumer-protocol", 240);
        int partitions = CONSUMER_PROTOCOL_PARTITIONS;
        int total = n * CODECS.length;
        String groupId = "java-cg-" + UUID.randomUUID();
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        ObjectNode info = mapper.createObjectNode();
        info.put("group_id", groupId);
        ArrayNode events = info.putArray("rebalance_events");
        out.put("partitions", partitions);
        out.put("produced", total);
        ObjectNode steps = out.putObject("steps");
        List<TopicPartition> all = partitionsOf(topic, partitions);
        Consumed consumed = new Consumed();
        long started = System.currentTimeMillis();
        Admin admin = boundedAdmin(bootstrap);
        try {
            createTopic(admin, topic, partitions);
            produceCodecs(bootstrap, topic, n, partitions, "kip848", "none");
            // Each step: the group settles, N records are produced and consumed before the next
            // change, so none is in flight during a rebalance.
            Member first = new Member("member-1", bootstrap, groupId, topic, events, "consumer");
            List<Member> members = new ArrayList<>(List.of(first));
            List<Member> everyone = new ArrayList<>(members);
            try {
                settle("alone", admin, groupId, members, consumed, steps.putObject("alone"));
                produceCodecs(bootstrap, topic, n, partitions, "kip848", "gzip");
                consumeUntil("alone", members, consumed, 2 * n);
                info.put("alone_ms", System.currentTimeMillis() - started);

                Member second = new Member("member-2", bootstrap, groupId, topic, events, "consumer");
                members.add(second);
                everyone.add(second);
                settle("second joined", admin, groupId, members, consumed, steps.putObject("second_joined"));
                produceCodecs(bootstrap, topic, n, partitions, "kip848", "snappy");
                consumeUntil("second joined", members, consumed, 3 * n);
                info.put("second_joined_ms", System.currentTimeMillis() - started);

                Member third = new Member("member-3", bootstrap, groupId, topic, events, "consumer");
                members.add(third);
                everyone.add(third);
                settle("third joined", admin, groupId, members, consumed, steps.putObject("third_joined"));
                produceCodecs(bootstrap, topic, n, partitions, "kip848", "lz4");
                consumeUntil("third joined", members, consumed, 4 * n);
                info.put("third_joined_ms", System.currentTimeMillis() - started);

                first.close(); // a heartbeat with member epoch -1
                members.remove(first);
                settle("first left", admin, groupId, members, consumed, steps.putObject("first_left"));
                produceCodecs(bootstrap, topic, n, partitions, "kip848", "zstd");
                consumeUntil("first left", members, consumed, total);
                info.put("first_left_ms", System.currentTimeMillis() - started);
                // A little longer, for any record consumed twice.
                for (int i = 0; i < 5; i++) {
                    for (Member m : members) {
                        consumed.poll(m);
                    }
                }
                out.put("consumed", consumed.values.size());
                out.put("distinct", new HashSet<>(consumed.values).size());
                out.put("keys_and_headers_match", consumed.matches);

                committedOffsets(admin, groupId, all, out.putObject("committed"));
                endOffsets(admin, all, out.putObject("end_offsets"));
                listGroup(admin, groupId, out.putObject("listed"));
            } finally {
                closeMembers(everyone, info.putObject("members"));
            }

            // Every member gone: an empty consumer group, its offsets kept; then deleted.
            describeThenDelete(admin, groupId, out);
        } finally {
            admin.close(WAIT);
            info.put("total_ms", System.currentTimeMillis() - started);
            out.set("informational", info);
            System.out.println(out);
        }
        check(consumed.values.size() == total && new HashSet<>(consumed.values).size() == total,
                "consumed " + consumed.values.size() + " records (" + new HashSet<>(consumed.values).size() + " distinct) of " + total);
    }

    // ---- what the group modes report alike ----

    /** The group's committed offset of each of `all` (-1 for none), by partition. */
    static void committedOffsets(Admin admin, String groupId, List<TopicPartition> all, ObjectNode out) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> committed =
                await(admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata());
        for (TopicPartition tp : all) {
            OffsetAndMetadata o = committed.get(tp);
            out.put(Integer.toString(tp.partition()), o == null ? -1 : o.offset());
        }
    }

    /** Each partition's end offset. */
    static void endOffsets(Admin admin, List<TopicPartition> all, ObjectNode out) throws Exception {
        Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
        all.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
        Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = await(admin.listOffsets(latest).all());
        for (TopicPartition tp : all) {
            out.put(Integer.toString(tp.partition()), ends.get(tp).offset());
        }
    }

    /** The group as ListGroups shows it: type, protocol, state. */
    static void listGroup(Admin admin, String groupId, ObjectNode out) throws Exception {
        for (GroupListing g : await(admin.listGroups().all())) {
            if (g.groupId().equals(groupId)) {
                out.put("type", String.valueOf(g.type().orElse(null)));
                out.put("protocol", g.protocol());
                out.put("state", String.valueOf(g.groupState().orElse(null)));
            }
        }
    }

    /** What each member saw (informational, timing-dependent), then every member closed. */
    static void closeMembers(List<Member> everyone, ObjectNode info) {
        for (Member m : everyone) {
            ObjectNode e = info.putObject(m.name);
            e.put("consumed", m.consumed);
            e.put("assigned_calls", m.assignedCalls);
            e.put("revoked_calls", m.revokedCalls);
            e.put("lost_calls", m.lostCalls);
            e.put("commit_failures", m.commitFailures);
        }
        for (Member m : everyone) {
            m.close();
        }
    }

    /** The emptied group described, deleted, and whether it is still listed. */
    static void describeThenDelete(Admin admin, String groupId, ObjectNode out) throws Exception {
        describeGroup(admin, groupId, out.putObject("described_after_close"));
        await(admin.deleteConsumerGroups(List.of(groupId)).all());
        boolean stillListed = false;
        for (GroupListing g : await(admin.listGroups().all())) {
            stillListed |= g.groupId().equals(groupId);
        }
        out.put("listed_after_delete", stillListed);
    }

    // ---- transactional ----

    static final int TXN_PARTITIONS = 3;

    static Properties transactionalProducer(String bootstrap, String transactionalId) {
        Properties p = idempotentProducer(bootstrap, "none");
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
        return p;
    }

    /** One transaction of N records (record i to partition i % 3, key k-i, value TAG-i), committed or aborted. */
    static void transaction(KafkaProducer<byte[], byte[]> producer, String topic, int n, String tag, boolean commit) {
        producer.beginTransaction();
        for (int i = 0; i < n; i++) {
            producer.send(new ProducerRecord<>(topic, i % TXN_PARTITIONS, utf8("k-" + i), utf8(tag + "-" + i)));
        }
        producer.flush();
        if (commit) {
            producer.commitTransaction();
        } else {
            producer.abortTransaction();
        }
    }

    static Properties consumerProperties(String bootstrap, String isolation) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        p.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "30000");
        return p;
    }

    static String value(ConsumerRecord<byte[], byte[]> r) {
        return r.value() == null ? null : new String(r.value(), StandardCharsets.UTF_8);
    }

    /**
     * Every partition of `topic` read from the start with `isolation` until the position reaches
     * the end (read_committed: the last stable offset) and at least `expected` records came;
     * then a few more polls for any record read twice. Values sorted, offsets per partition,
     * the end offsets.
     */
    static ObjectNode readAll(String bootstrap, String topic, String isolation, int expected, ObjectMapper mapper) {
        List<TopicPartition> all = partitionsOf(topic, TXN_PARTITIONS);
        List<String> values = new ArrayList<>();
        Map<Integer, List<Long>> offsets = new TreeMap<>();
        ObjectNode out = mapper.createObjectNode();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProperties(bootstrap, isolation))) {
            consumer.assign(all);
            consumer.seekToBeginning(all);
            long deadline = System.currentTimeMillis() + WAIT.toMillis();
            Map<TopicPartition, Long> ends = Map.of();
            while (true) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    values.add(value(r));
                    offsets.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
                }
                ends = consumer.endOffsets(all, WAIT);
                boolean atEnd = true;
                for (TopicPartition tp : all) {
                    atEnd &= consumer.position(tp, WAIT) == ends.get(tp);
                }
                if (atEnd && values.size() >= expected) {
                    break;
                }
                check(System.currentTimeMillis() < deadline,
                        isolation + " read of " + topic + ": " + values.size() + " of " + expected + " records after 60 s");
            }
            for (int i = 0; i < 3; i++) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    values.add(value(r));
                    offsets.computeIfAbsent(r.partition(), k -> new ArrayList<>()).add(r.offset());
                }
            }
            ObjectNode endsNode = out.putObject("end_offsets");
            for (TopicPartition tp : all) {
                endsNode.put(Integer.toString(tp.partition()), ends.get(tp));
            }
        }
        out.put("records", values.size());
        out.put("distinct", new HashSet<>(values).size());
        ArrayNode sorted = out.putArray("values");
        values.stream().sorted().forEach(sorted::add);
        ObjectNode perPartition = out.putObject("offsets");
        offsets.forEach((partition, list) -> {
            ArrayNode a = perPartition.putArray(partition.toString());
            list.forEach(a::add);
        });
        return out;
    }

    /** The simple name of what `action` threw (the cause of an ExecutionException), or "none". */
    static String thrown(Runnable action) {
        try {
            action.run();
            return "none";
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName();
        }
    }

    static String failure(Future<RecordMetadata> sent) throws InterruptedException {
        try {
            sent.get(WAIT_SECONDS, TimeUnit.SECONDS);
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (java.util.concurrent.TimeoutException e) {
            return "timeout";
        }
    }

    /**
     * DescribeTransactions of `id`, once it is in no Prepare* state (Kafka answers EndTxn
     * before writing its markers): state, producer epoch, timeout, partitions sorted (`topic`
     * named TOPIC, the same on every cluster).
     */
    static ObjectNode describeTransaction(Admin admin, String id, String topic, ObjectNode into) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT.toMillis();
        TransactionDescription d;
        while (true) {
            d = await(admin.describeTransactions(List.of(id)).description(id));
            if (!d.state().toString().startsWith("Prepare") || System.currentTimeMillis() > deadline) {
                break;
            }
            Thread.sleep(50);
        }
        into.put("state", d.state().toString());
        into.put("producer_epoch", d.producerEpoch());
        into.put("timeout_ms", d.transactionTimeoutMs());
        into.put("started", d.transactionStartTimeMs().isPresent());
        ArrayNode partitions = into.putArray("partitions");
        d.topicPartitions().stream().map(tp -> tp.toString().replace(topic, "TOPIC")).sorted().forEach(partitions::add);
        return into;
    }

    /** ListTransactions (optionally filtered by state), only `ids`: [id suffix, state] sorted. */
    static ArrayNode listTransactions(Admin admin, List<String> ids, String prefix, ListTransactionsOptions options, ArrayNode into)
            throws Exception {
        List<String> rows = new ArrayList<>();
        for (TransactionListing l : await(admin.listTransactions(options).all())) {
            if (ids.contains(l.transactionalId())) {
                rows.add(l.transactionalId().substring(prefix.length()) + " " + l.state());
            }
        }
        rows.stream().sorted().forEach(into::add);
        return into;
    }

    static void transactional(String bootstrap, String topic, int n) throws Exception {
        watchdog("transactional", 300);
        String outTopic = topic + "-out";
        String prefix = "java-txn-" + UUID.randomUUID();
        String id = prefix + "-main";
        String copier = prefix + "-copier";
        String groupId = prefix + "-group";
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        Admin admin = boundedAdmin(bootstrap);
        try {
            createTopic(admin, topic, TXN_PARTITIONS);
            createTopic(admin, outTopic, TXN_PARTITIONS);

            // Commit, abort, commit.
            KafkaProducer<byte[], byte[]> first = new KafkaProducer<>(transactionalProducer(bootstrap, id));
            try {
                first.initTransactions();
                transaction(first, topic, n, "committed1", true);
                transaction(first, topic, n, "aborted", false);
                transaction(first, topic, n, "committed2", true);
                out.set("read_committed", readAll(bootstrap, topic, "read_committed", 2 * n, mapper));
                out.set("read_uncommitted", readAll(bootstrap, topic, "read_uncommitted", 3 * n, mapper));
                describeTransaction(admin, id, topic, out.putObject("described_after_commits"));

                // The same transactional.id again: the first producer is fenced.
                KafkaProducer<byte[], byte[]> second = new KafkaProducer<>(transactionalProducer(bootstrap, id));
                try {
                    second.initTransactions();
                    describeTransaction(admin, id, topic, out.putObject("described_after_second_init"));
                    ObjectNode fenced = out.putObject("fenced");
                    first.beginTransaction();
                    Future<RecordMetadata> sent = first.send(new ProducerRecord<>(topic, 0, utf8("k"), utf8("fenced")));
                    fenced.put("send", failure(sent));
                    fenced.put("commit", thrown(first::commitTransaction));

                    // An open transaction of one record on partition 0, as the admin client sees it.
                    second.beginTransaction();
                    second.send(new ProducerRecord<>(topic, 0, utf8("k"), utf8("open"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
                    describeTransaction(admin, id, topic, out.putObject("described_open"));
                    // The open transaction holds partition 0's last stable offset at its record.
                    TopicPartition first0 = new TopicPartition(topic, 0);
                    ObjectNode latest = out.putObject("latest_while_open");
                    for (IsolationLevel level : IsolationLevel.values()) {
                        ListOffsetsOptions options = new ListOffsetsOptions(level);
                        latest.put(level.toString(), await(admin.listOffsets(Map.of(first0, OffsetSpec.latest()), options).all()).get(first0).offset());
                    }
                    listTransactions(admin, List.of(id), prefix, new ListTransactionsOptions(), out.putArray("listed_open"));
                    listTransactions(admin, List.of(id), prefix,
                            new ListTransactionsOptions().filterStates(List.of(org.apache.kafka.clients.admin.TransactionState.COMPLETE_COMMIT)),
                            out.putArray("listed_complete_commit_while_open"));
                    second.abortTransaction();
                    describeTransaction(admin, id, topic, out.putObject("described_after_abort"));
                } finally {
                    second.close(WAIT);
                }
            } finally {
                first.close(WAIT);
            }

            // Consume-transform-produce: TOPIC copied to TOPIC-out, the group's offsets in the same transactions.
            ObjectNode ctp = out.putObject("consume_transform_produce");
            Properties cp = consumerProperties(bootstrap, "read_committed");
            cp.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
            cp.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
            cp.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5");
            List<TopicPartition> all = partitionsOf(topic, TXN_PARTITIONS);
            int copied = 0;
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(cp);
                    KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(transactionalProducer(bootstrap, copier))) {
                producer.initTransactions();
                consumer.subscribe(List.of(topic));
                Map<TopicPartition, Long> ends = consumer.endOffsets(all, WAIT);
                Map<TopicPartition, OffsetAndMetadata> sentOffsets = new HashMap<>();
                long deadline = System.currentTimeMillis() + WAIT.toMillis();
                while (true) {
                    ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    // The positions pass the markers too, so that the last commit reaches the end offsets.
                    Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                    for (TopicPartition tp : consumer.assignment()) {
                        positions.put(tp, new OffsetAndMetadata(consumer.position(tp, WAIT)));
                    }
                    if (!records.isEmpty() || !positions.equals(sentOffsets)) {
                        producer.beginTransaction();
                        for (ConsumerRecord<byte[], byte[]> r : records) {
                            producer.send(new ProducerRecord<>(outTopic, r.partition(), r.key(), r.value()));
                            copied++;
                        }
                        ConsumerGroupMetadata group = consumer.groupMetadata();
                        producer.sendOffsetsToTransaction(positions, group);
                        producer.commitTransaction();
                        sentOffsets = positions;
                    }
                    boolean done = consumer.assignment().size() == TXN_PARTITIONS;
                    for (TopicPartition tp : all) {
                        OffsetAndMetadata o = sentOffsets.get(tp);
                        done &= o != null && o.offset() == ends.get(tp);
                    }
                    if (done) {
                        break;
                    }
                    check(System.currentTimeMillis() < deadline, "consume-transform-produce: copied " + copied + " after 60 s, offsets " + sentOffsets);
                }
                // Offsets in an open transaction are not the group's yet; aborted, they never are.
                Map<TopicPartition, OffsetAndMetadata> rewind = new HashMap<>();
                all.forEach(tp -> rewind.put(tp, new OffsetAndMetadata(0)));
                producer.beginTransaction();
                producer.sendOffsetsToTransaction(rewind, consumer.groupMetadata());
                committedOffsets(admin, groupId, all, ctp.putObject("committed_while_rewind_open"));
                // Asked for stable offsets, Kafka answers UNSTABLE_OFFSET_COMMIT meanwhile: the
                // admin client leaves those partitions out, a read_committed consumer asks again.
                ListConsumerGroupOffsetsOptions stable = new ListConsumerGroupOffsetsOptions().requireStable(true);
                ctp.put("stable_partitions_while_rewind_open",
                        await(admin.listConsumerGroupOffsets(groupId, stable).partitionsToOffsetAndMetadata()).size());
                ctp.put("consumer_committed_while_rewind_open", thrown(() -> consumer.committed(new HashSet<>(all), Duration.ofSeconds(2))));
                producer.abortTransaction();
            }
            ctp.put("copied", copied);
            // Described once out of Prepare*: Kafka answers EndTxn before writing the markers which
            // make the last offsets visible to OffsetFetch. Its epoch counts its transactions
            // (KIP-890 bumps it at each end): timing, not compared.
            describeTransaction(admin, copier, topic, ctp.putObject("described")).remove("producer_epoch");
            Map<TopicPartition, OffsetAndMetadata> committed =
                    await(admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata());
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            all.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = await(admin.listOffsets(latest).all());
            ObjectNode committedNode = ctp.putObject("committed");
            ObjectNode endsNode = ctp.putObject("end_offsets");
            for (TopicPartition tp : all) {
                OffsetAndMetadata o = committed.get(tp);
                committedNode.put(Integer.toString(tp.partition()), o == null ? -1 : o.offset());
                endsNode.put(Integer.toString(tp.partition()), ends.get(tp).offset());
            }
            ObjectNode copiedOut = readAll(bootstrap, outTopic, "read_committed", copied, mapper);
            copiedOut.remove("offsets");
            copiedOut.remove("end_offsets");
            ctp.set("out_read_committed", copiedOut);
            committedOffsets(admin, groupId, all, ctp.putObject("committed_after_rewind_aborted"));

            // A transaction left open past its timeout is aborted by the coordinator (Kafka looks
            // every 10 s), which fences its producer.
            ObjectNode expired = out.putObject("timed_out");
            String idle = prefix + "-idle";
            Properties ip = transactionalProducer(bootstrap, idle);
            ip.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "2000");
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(ip)) {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(topic, 1, utf8("k"), utf8("timed-out"))).get(WAIT_SECONDS, TimeUnit.SECONDS);
                long deadline = System.currentTimeMillis() + WAIT.toMillis();
                String state;
                do {
                    Thread.sleep(200);
                    state = await(admin.describeTransactions(List.of(idle)).description(idle)).state().toString();
                } while (state.equals("Ongoing") && System.currentTimeMillis() < deadline);
                describeTransaction(admin, idle, topic, expired.putObject("described"));
                expired.put("commit", thrown(producer::commitTransaction));
            }
            ObjectNode afterExpiry = readAll(bootstrap, topic, "read_committed", 2 * n, mapper);
            expired.set("read_committed_end_offsets", afterExpiry.get("end_offsets"));
            expired.put("read_committed_records", afterExpiry.get("records").asInt());

            // Two transactions interleaved on partition 2, x aborted and y committed: read_committed
            // drops x's records by the aborted transactions Fetch lists.
            try (KafkaProducer<byte[], byte[]> x = new KafkaProducer<>(transactionalProducer(bootstrap, prefix + "-x"));
                    KafkaProducer<byte[], byte[]> y = new KafkaProducer<>(transactionalProducer(bootstrap, prefix + "-y"))) {
                x.initTransactions();
                y.initTransactions();
                x.beginTransaction();
                y.beginTransaction();
                for (int i = 0; i < 2; i++) {
                    x.send(new ProducerRecord<>(topic, 2, utf8("k"), utf8("x-" + i))).get(WAIT_SECONDS, TimeUnit.SECONDS);
                    y.send(new ProducerRecord<>(topic, 2, utf8("k"), utf8("y-" + i))).get(WAIT_SECONDS, TimeUnit.SECONDS);
                }
                y.commitTransaction();
                x.abortTransaction();
            }
            ObjectNode interleaved = out.putObject("interleaved");
            for (String isolation : new String[] {"read_committed", "read_uncommitted"}) {
                // Uncommitted: also the open, the timed-out and x's records.
                int expected = isolation.equals("read_committed") ? 2 * n + 2 : 3 * n + 6;
                ObjectNode read = readAll(bootstrap, topic, isolation, expected, mapper);
                ObjectNode summary = interleaved.putObject(isolation);
                summary.set("partition_2_offsets", read.get("offsets").get("2"));
                ArrayNode values = summary.putArray("values");
                read.get("values").forEach(v -> {
                    if (v.asText().startsWith("x-") || v.asText().startsWith("y-")) {
                        values.add(v);
                    }
                });
            }
            listTransactions(admin, List.of(id, copier, idle), prefix, new ListTransactionsOptions(), out.putArray("listed_at_the_end"));
        } finally {
            admin.close(WAIT);
            System.out.println(out);
        }
    }

    // ---- share (KIP-932) ----

    static final int SHARE_PARTITIONS = 3;

    /** What share.auto.offset.reset the group's GROUP resource describes. */
    static String groupConfig(Admin admin, String groupId, String name) throws Exception {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, groupId);
        ConfigEntry entry = await(admin.describeConfigs(List.of(resource)).all()).get(resource).get(name);
        return entry == null ? null : entry.value();
    }

    /** "none", or the simple name of the exception the future failed with. */
    static String errorName(KafkaFuture<?> future) throws Exception {
        try {
            await(future);
            return "none";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        }
    }

    /** listShareGroupOffsets' start offset per partition ("absent" when it names none). */
    static ObjectNode shareStartOffsets(Admin admin, String groupId, List<TopicPartition> all, ObjectMapper mapper) throws Exception {
        Map<TopicPartition, SharePartitionOffsetInfo> offsets = await(admin.listShareGroupOffsets(
                Map.of(groupId, new ListShareGroupOffsetsSpec().topicPartitions(all))).partitionsToOffsetInfo(groupId));
        ObjectNode out = mapper.createObjectNode();
        for (TopicPartition tp : all) {
            SharePartitionOffsetInfo o = offsets.get(tp);
            out.put(String.valueOf(tp.partition()), o == null ? "absent" : String.valueOf(o.startOffset()));
        }
        return out;
    }

    static int valueIndex(ConsumerRecord<byte[], byte[]> r) {
        String v = new String(r.value(), StandardCharsets.UTF_8);
        return Integer.parseInt(v.substring(v.lastIndexOf('-') + 1));
    }

    static void share(String bootstrap, String topic, int n) throws Exception {
        watchdog("share", 240);
        ObjectMapper mapper = new ObjectMapper();
        ObjectNode out = mapper.createObjectNode();
        ObjectNode info = mapper.createObjectNode();
        String groupId = "share-" + topic + "-" + UUID.randomUUID();
        try (Admin admin = boundedAdmin(bootstrap)) {
            // The share.version feature the cluster supports and has finalized.
            org.apache.kafka.clients.admin.FeatureMetadata features = await(admin.describeFeatures().featureMetadata());
            ObjectNode shareVersion = out.putObject("share_version");
            org.apache.kafka.clients.admin.SupportedVersionRange supported = features.supportedFeatures().get("share.version");
            org.apache.kafka.clients.admin.FinalizedVersionRange finalized = features.finalizedFeatures().get("share.version");
            shareVersion.put("supported", supported == null ? null : supported.minVersion() + "-" + supported.maxVersion());
            shareVersion.put("finalized", finalized == null ? null : finalized.minVersionLevel() + "-" + finalized.maxVersionLevel());
            createTopic(admin, topic, SHARE_PARTITIONS);
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, groupId);
            AlterConfigOp set = new AlterConfigOp(new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET);
            await(admin.incrementalAlterConfigs(Map.of(resource, List.of(set))).all());
            // Kafka's brokers learn a group config from the controller's metadata a little later:
            // until then a share-partition would start at the latest offset.
            long configured = System.currentTimeMillis() + WAIT.toMillis();
            String reset = groupConfig(admin, groupId, "share.auto.offset.reset");
            while (!"earliest".equals(reset) && System.currentTimeMillis() < configured) {
                Thread.sleep(100);
                reset = groupConfig(admin, groupId, "share.auto.offset.reset");
            }
            out.put("share_auto_offset_reset", reset);
            produceCodecs(bootstrap, topic, n, SHARE_PARTITIONS, "share", "none");

            Properties p = new Properties();
            p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
            p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
            p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
            List<KafkaShareConsumer<byte[], byte[]>> consumers = new ArrayList<>();
            for (int c = 0; c < 2; c++) {
                p.put(ConsumerConfig.CLIENT_ID_CONFIG, groupId + "-" + c);
                KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(p);
                consumer.subscribe(List.of(topic));
                consumers.add(consumer);
            }
            Map<Integer, Integer> accepted = new TreeMap<>();
            Map<Integer, Integer> rejected = new TreeMap<>();
            Map<Integer, List<Integer>> releasedCounts = new TreeMap<>();
            Set<Integer> redeliveryCounts = new java.util.TreeSet<>();
            boolean keysMatch = true;
            int expectedRejects = 0;
            for (int i = 0; i < n; i++) {
                expectedRejects += i % 10 == 7 ? 1 : 0;
            }
            int[] perConsumer = new int[consumers.size()];
            long deadline = System.currentTimeMillis() + 120_000;
            while (accepted.size() + expectedRejects < n || rejected.size() < expectedRejects) {
                check(System.currentTimeMillis() < deadline, "share: not every record settled after 120 s: accepted "
                        + accepted.keySet() + ", rejected " + rejected.keySet());
                for (int c = 0; c < consumers.size(); c++) {
                    KafkaShareConsumer<byte[], byte[]> consumer = consumers.get(c);
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(300))) {
                        perConsumer[c]++;
                        keysMatch &= recordMatches(r);
                        int i = valueIndex(r);
                        int count = r.deliveryCount().map(Short::intValue).orElse(-1);
                        AcknowledgeType type;
                        if (i % 10 == 7) {
                            type = AcknowledgeType.REJECT;
                            rejected.merge(i, 1, Integer::sum);
                        } else if (i % 10 == 3 && count == 1) {
                            type = AcknowledgeType.RELEASE;
                            releasedCounts.computeIfAbsent(i, k -> new ArrayList<>()).add(count);
                        } else {
                            type = AcknowledgeType.ACCEPT;
                            accepted.merge(i, 1, Integer::sum);
                            if (i % 10 == 3) {
                                redeliveryCounts.add(count);
                            }
                        }
                        consumer.acknowledge(r, type);
                    }
                    consumer.commitSync(WAIT);
                }
            }
            out.put("produced", n);
            out.put("accepted", accepted.size());
            out.put("accepted_exactly_once", accepted.values().stream().allMatch(v -> v == 1));
            out.put("rejected", rejected.size());
            out.put("rejected_redelivered", rejected.values().stream().anyMatch(v -> v > 1));
            out.put("released", releasedCounts.size());
            out.put("released_once_each", releasedCounts.values().stream().allMatch(v -> v.size() == 1));
            ArrayNode again = out.putArray("released_redelivery_counts");
            redeliveryCounts.forEach(again::add);
            out.put("keys_and_headers_match", keysMatch);

            ShareGroupDescription running = await(admin.describeShareGroups(List.of(groupId)).all()).get(groupId);
            ObjectNode described = out.putObject("described_running");
            described.put("state", String.valueOf(running.groupState()));
            described.put("members", running.members().size());
            ObjectNode listed = out.putObject("listed");
            for (GroupListing g : await(admin.listGroups(ListGroupsOptions.forShareGroups()).all())) {
                if (g.groupId().equals(groupId)) {
                    listed.put("type", String.valueOf(g.type().orElse(null)));
                    listed.put("protocol", g.protocol());
                    listed.put("state", String.valueOf(g.groupState().orElse(null)));
                }
            }
            info.put("consumed_per_member", java.util.Arrays.toString(perConsumer));
            TopicPartition first = new TopicPartition(topic, 0);
            out.put("alter_while_running", errorName(admin.alterShareGroupOffsets(groupId, Map.of(first, 0L)).all()));
            for (KafkaShareConsumer<byte[], byte[]> consumer : consumers) {
                consumer.close(WAIT);
            }

            ShareGroupDescription closed = await(admin.describeShareGroups(List.of(groupId)).all()).get(groupId);
            ObjectNode after = out.putObject("described_after_close");
            after.put("state", String.valueOf(closed.groupState()));
            after.put("members", closed.members().size());
            List<TopicPartition> all = partitionsOf(topic, SHARE_PARTITIONS);
            Map<TopicPartition, SharePartitionOffsetInfo> offsets = await(admin.listShareGroupOffsets(
                    Map.of(groupId, new ListShareGroupOffsetsSpec().topicPartitions(all))).partitionsToOffsetInfo(groupId));
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = await(admin.listOffsets(
                    all.stream().collect(java.util.stream.Collectors.toMap(tp -> tp, tp -> OffsetSpec.latest()))).all());
            ObjectNode starts = out.putObject("start_offsets");
            ObjectNode endOffsets = out.putObject("end_offsets");
            ObjectNode lags = out.putObject("lags");
            for (TopicPartition tp : all) {
                SharePartitionOffsetInfo o = offsets.get(tp);
                starts.put(String.valueOf(tp.partition()), o == null ? -1 : o.startOffset());
                endOffsets.put(String.valueOf(tp.partition()), ends.get(tp).offset());
                lags.put(String.valueOf(tp.partition()), o == null ? null : o.lag().orElse(null));
            }
            // Offsets of the empty group: altered, then deleted; and of a group nobody joined.
            ObjectNode altered = out.putObject("altered");
            altered.put("error", errorName(admin.alterShareGroupOffsets(groupId, Map.of(first, 0L)).all()));
            altered.set("start_offsets", shareStartOffsets(admin, groupId, all, mapper));
            ObjectNode deleted = out.putObject("offsets_deleted");
            deleted.put("error", errorName(admin.deleteShareGroupOffsets(groupId, Set.of(topic)).all()));
            deleted.set("start_offsets", shareStartOffsets(admin, groupId, all, mapper));
            String never = groupId + "-never-joined";
            ObjectNode neverJoined = out.putObject("never_joined");
            neverJoined.put("delete_offsets", errorName(admin.deleteShareGroupOffsets(never, Set.of(topic)).all()));
            neverJoined.put("alter", errorName(admin.alterShareGroupOffsets(never, Map.of(first, 0L)).all()));
            neverJoined.set("start_offsets", shareStartOffsets(admin, never, all, mapper));
            boolean neverListed = false;
            for (GroupListing g : await(admin.listGroups(ListGroupsOptions.forShareGroups()).all())) {
                neverListed |= g.groupId().equals(never);
            }
            neverJoined.put("listed", neverListed);
            neverJoined.put("deleted", errorName(admin.deleteShareGroups(List.of(never)).all()));
            await(admin.deleteShareGroups(List.of(groupId)).all());
            boolean stillListed = false;
            for (GroupListing g : await(admin.listGroups(ListGroupsOptions.forShareGroups()).all())) {
                stillListed |= g.groupId().equals(groupId);
            }
            out.put("listed_after_delete", stillListed);
        }
        out.set("informational", info);
        System.out.println(out);
    }
}
