// One kgo program for every cluster bench/fake_vs_kfake.sh compares: it creates TOPIC, produces
// TOTAL bytes of SIZE-byte records into it with kgo's defaults for a producer (idempotent,
// acks all) but no compression, so that the cluster, not a codec, is measured; then reads every
// record back from the start of each partition, without a group, checking count and order.
//
// Usage: load BOOTSTRAP TOPIC PARTITIONS TOTAL_BYTES RECORD_SIZE
//
// One JSON line on stdout: records, bytes, produce_s and consume_s.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 6 {
		fail("usage: load BOOTSTRAP TOPIC PARTITIONS TOTAL_BYTES RECORD_SIZE")
	}
	seeds := strings.Split(os.Args[1], ",")
	topic := os.Args[2]
	partitions := atoi(os.Args[3])
	total := atoi(os.Args[4])
	size := atoi(os.Args[5])
	records := total / size
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	admin, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	check("admin client", err)
	created, err := kadm.NewClient(admin).CreateTopic(ctx, int32(partitions), 1, nil, topic)
	check("creating "+topic, err)
	check("creating "+topic, created.Err)
	admin.Close()

	produceS := produce(ctx, seeds, topic, records, size)
	consumeS := consume(ctx, seeds, topic, records, size)
	out, _ := json.Marshal(map[string]any{
		"records": records, "bytes": records * size, "produce_s": produceS, "consume_s": consumeS,
	})
	fmt.Println(string(out))
}

// produce sends `records` records round-robin over the partitions and waits for every ack.
func produce(ctx context.Context, seeds []string, topic string, records, size int) float64 {
	client, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()),
	)
	check("producer", err)
	defer client.Close()
	value := make([]byte, size)
	for i := range value {
		value[i] = byte(i * 31)
	}
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	start := time.Now()
	for i := 0; i < records; i++ {
		v := make([]byte, size)
		copy(v, value)
		binary.BigEndian.PutUint64(v, uint64(i))
		wg.Add(1)
		client.Produce(ctx, &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				once.Do(func() { firstErr = err })
			}
			wg.Done()
		})
	}
	wg.Wait()
	check("producing", firstErr)
	return time.Since(start).Seconds()
}

// consume reads every partition from its start until `records` records have come back, each
// partition's sequence numbers increasing.
func consume(ctx context.Context, seeds []string, topic string, records, size int) float64 {
	client, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	check("consumer", err)
	defer client.Close()
	last := map[int32]int64{}
	seen := 0
	start := time.Now()
	for seen < records {
		fetches := client.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			check("fetching", fmt.Errorf("%s[%d]: %w", errs[0].Topic, errs[0].Partition, errs[0].Err))
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if len(r.Value) != size {
				fail(fmt.Sprintf("record of %d bytes at %d/%d", len(r.Value), r.Partition, r.Offset))
			}
			n := int64(binary.BigEndian.Uint64(r.Value))
			if prev, ok := last[r.Partition]; ok && n <= prev {
				fail(fmt.Sprintf("partition %d: record %d after %d", r.Partition, n, prev))
			}
			last[r.Partition] = n
			seen++
		})
	}
	return time.Since(start).Seconds()
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	check("argument "+s, err)
	return n
}

func check(what string, err error) {
	if err != nil {
		fail(what + ": " + err.Error())
	}
}

func fail(why string) {
	fmt.Fprintln(os.Stderr, "load:", why)
	os.Exit(1)
}
