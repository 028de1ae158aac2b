package dev.kwire.oracle;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's own Java clients as the oracle of kwire's producer tests.
 *
 * <pre>
 * read BOOTSTRAP TOPIC ISOLATION    every partition of TOPIC from its start to its end offset (the
 *                                   last stable offset in read_committed) as the consumer at
 *                                   ISOLATION sees them; one JSON line per record: partition,
 *                                   offset, timestamp, timestampType, key, value (base64, null for
 *                                   null), headers ([key, base64 value]); then {"end": total}
 * values BOOTSTRAP TOPIC [ISOLATION] the same read (read_uncommitted unless ISOLATION says
 *                                   read_committed), one line per record: "partition offset
 *                                   value" (the value as UTF-8): for long runs
 * partitions BOOTSTRAP TOPIC N      Kafka's producer sends N records keyed "key-i" (no partition
 *                                   given) and prints "key-i partition" per record, the partition
 *                                   its RecordMetadata names
 * </pre>
 *
 * <p>Waits are bounded (120 s in all); a failure is an exception and a non-zero exit.
 */
public final class ProducerCheck {
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        String bootstrap = args[1];
        String topic = args[2];
        if (mode.equals("read")) {
            read(bootstrap, topic, args[3], false);
        } else if (mode.equals("values")) {
            read(bootstrap, topic, args.length > 3 ? args[3] : "read_uncommitted", true);
        } else if (mode.equals("partitions")) {
            partitions(bootstrap, topic, Integer.parseInt(args[3]));
        } else {
            throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    static String b64(byte[] bytes) {
        return bytes == null ? null : Base64.getEncoder().encodeToString(bytes);
    }

    static void read(String bootstrap, String topic, String isolation, boolean compact) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.CHECK_CRCS_CONFIG, "true");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        ObjectMapper mapper = new ObjectMapper();
        StringBuilder out = new StringBuilder();
        long total = 0;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(60))) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            Map<TopicPartition, Long> ends = consumer.endOffsets(partitions, Duration.ofSeconds(60));
            long deadline = System.currentTimeMillis() + 120_000;
            while (!reached(consumer, ends)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("not at the end offsets " + ends + " after 120 s");
                }
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    total++;
                    if (compact) {
                        out.append(r.partition()).append(' ').append(r.offset()).append(' ')
                                .append(r.value() == null ? "" : new String(r.value(), java.nio.charset.StandardCharsets.UTF_8))
                                .append('\n');
                        continue;
                    }
                    ObjectNode line = mapper.createObjectNode();
                    line.put("partition", r.partition());
                    line.put("offset", r.offset());
                    line.put("timestamp", r.timestamp());
                    line.put("timestampType", r.timestampType().toString());
                    line.put("key", b64(r.key()));
                    line.put("value", b64(r.value()));
                    ArrayNode headers = line.putArray("headers");
                    for (Header h : r.headers()) {
                        headers.addArray().add(h.key()).add(b64(h.value()));
                    }
                    out.append(line).append('\n');
                }
                if (out.length() > (1 << 20)) {
                    System.out.print(out);
                    out.setLength(0);
                }
            }
        }
        System.out.print(out);
        System.out.println(compact ? "end " + total : "{\"end\":" + total + "}");
    }

    static boolean reached(KafkaConsumer<byte[], byte[]> consumer, Map<TopicPartition, Long> ends) {
        for (Map.Entry<TopicPartition, Long> e : ends.entrySet()) {
            if (consumer.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    static void partitions(String bootstrap, String topic, int n) throws Exception {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        StringBuilder out = new StringBuilder();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                byte[] key = ("key-" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                sent.add(producer.send(new ProducerRecord<>(topic, key, new byte[] {1})));
            }
            for (int i = 0; i < n; i++) {
                out.append("key-").append(i).append(' ').append(sent.get(i).get().partition()).append('\n');
            }
        }
        System.out.print(out);
    }
}
