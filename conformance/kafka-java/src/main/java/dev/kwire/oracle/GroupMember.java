package dev.kwire.oracle;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One member of a consumer group, run beside kwire's consumers in the same group: Kafka's own
 * Java consumer, committing after every poll and before partitions are revoked.
 *
 * <pre>
 * GroupMember BOOTSTRAP GROUP TOPIC PROTOCOL ASSIGNOR NAME [INSTANCE_ID]
 *   PROTOCOL  classic | consumer (KIP-848)
 *   ASSIGNOR  range | roundrobin | cooperative-sticky (classic), or the server-side assignor
 *             (consumer: uniform | range)
 * </pre>
 *
 * One JSON line per event on stdout, each with the wall-clock time in milliseconds:
 * {"t":..,"event":"assigned"|"revoked"|"lost","partitions":[p,..]} (the partitions the
 * callback names), {"t":..,"p":..,"o":..} per record, {"t":..,"event":"error","message":..},
 * and {"t":..,"event":"closed"}. The member runs until its stdin closes, then closes (leaving
 * the group); killing it leaves nothing.
 */
public final class GroupMember {
    private GroupMember() {}

    private static synchronized void emit(String json) {
        System.out.println(json);
        System.out.flush();
    }

    private static String partitions(Collection<TopicPartition> partitions) {
        List<String> out = new ArrayList<>();
        for (TopicPartition tp : partitions) {
            out.add(Integer.toString(tp.partition()));
        }
        return "[" + String.join(",", out) + "]";
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ") + "\"";
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 6) {
            System.err.println("usage: GroupMember BOOTSTRAP GROUP TOPIC PROTOCOL ASSIGNOR NAME [INSTANCE_ID]");
            System.exit(2);
        }
        String bootstrap = args[0], group = args[1], topic = args[2], protocol = args[3], assignor = args[4], name = args[5];
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        props.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "200");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        if (protocol.equals("classic")) {
            String assignorClass;
            switch (assignor) {
                case "range":
                    assignorClass = "org.apache.kafka.clients.consumer.RangeAssignor";
                    break;
                case "roundrobin":
                    assignorClass = "org.apache.kafka.clients.consumer.RoundRobinAssignor";
                    break;
                case "cooperative-sticky":
                    assignorClass = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";
                    break;
                default:
                    assignorClass = assignor;
            }
            props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignorClass);
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "500");
        } else {
            props.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, assignor);
        }
        if (args.length > 6) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, args[6]);
        }

        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        AtomicBoolean stopping = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            InputStream in = System.in;
            try {
                while (in.read() >= 0) {
                    // Anything written is ignored; only the end counts.
                }
            } catch (IOException e) {
                // Treated as the end.
            }
            stopping.set(true);
            consumer.wakeup();
        });
        stdin.setDaemon(true);
        stdin.start();

        consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> revoked) {
                try {
                    consumer.commitSync();
                } catch (RuntimeException e) {
                    emit("{\"t\":" + System.currentTimeMillis() + ",\"event\":\"error\",\"message\":" + quote("commit on revoke: " + e) + "}");
                }
                emit("{\"t\":" + System.currentTimeMillis() + ",\"event\":\"revoked\",\"partitions\":" + partitions(revoked) + "}");
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> assigned) {
                emit("{\"t\":" + System.currentTimeMillis() + ",\"event\":\"assigned\",\"partitions\":" + partitions(assigned) + "}");
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> lost) {
                emit("{\"t\":" + System.currentTimeMillis() + ",\"event\":\"lost\",\"partitions\":" + partitions(lost) + "}");
            }
        });
        try {
            while (!stopping.get()) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<byte[], byte[]> record : records) {
                    emit("{\"t\":" + System.currentTimeMillis() + ",\"p\":" + record.partition() + ",\"o\":" + record.offset() + "}");
                }
                if (!records.isEmpty()) {
                    try {
                        consumer.commitSync();
                    } catch (WakeupException e) {
                        throw e;
                    } catch (RuntimeException e) {
                        emit("{\"t\":" + System.currentTimeMillis() + ",\"event\":\"error\",\"message\":" + quote("commit: " + e) + "}");
                    }
                }
            }
        } catch (WakeupException e) {
            // Closing.
        }
        consumer.close();
        emit("{\"t\":" + System.currentTimeMillis() + ",\"event\":\"closed\"}");
    }
}
