package dev.kafkawire.oracle;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own Java producer and consumer, for kafka-wire's interoperability tests.
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
 * </pre>
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
}
