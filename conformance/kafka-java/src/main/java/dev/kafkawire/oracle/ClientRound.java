package dev.kafkawire.oracle;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
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
}
