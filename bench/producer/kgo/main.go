// kgo's side of the producer bench (bench/producer/run.py): produces TOTAL_BYTES of RECORD_SIZE
// records to TOPIC with kgo's defaults for a producer (idempotent, acks all) and the codec
// asked for, RATE records/s (0: as fast as it goes); one JSON line, as producer-bench prints.
// Every record carries the same payload of random capital letters, as Kafka's
// ProducerPerformance sends; latency is from Produce to the promise, per record.
//
// Usage: kgo BOOTSTRAP TOPIC TOTAL_BYTES RECORD_SIZE CODEC RATE
package main

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 7 {
		fail("usage: kgo BOOTSTRAP TOPIC TOTAL_BYTES RECORD_SIZE CODEC RATE")
	}
	seeds := strings.Split(os.Args[1], ",")
	topic := os.Args[2]
	total, size, rate := atoi(os.Args[3]), atoi(os.Args[4]), atoi(os.Args[6])
	codec := map[string]kgo.CompressionCodec{
		"none": kgo.NoCompression(), "lz4": kgo.Lz4Compression(), "gzip": kgo.GzipCompression(),
		"snappy": kgo.SnappyCompression(), "zstd": kgo.ZstdCompression(),
	}[os.Args[5]]
	records := total / size
	client, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic), kgo.ProducerBatchCompression(codec))
	check("client", err)
	defer client.Close()
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte('A' + rand.Intn(26))
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	latencies := make([]int64, 0, func() int {
		if rate > 0 {
			return records
		}
		return 0
	}())
	errors := 0
	start := time.Now()
	for i := 0; i < records; i++ {
		if rate > 0 {
			due := start.Add(time.Duration(float64(i) / float64(rate) * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				time.Sleep(d)
			}
		}
		var sent time.Time
		if rate > 0 {
			sent = time.Now()
		}
		wg.Add(1)
		client.Produce(ctx, &kgo.Record{Value: payload}, func(_ *kgo.Record, err error) {
			mu.Lock()
			if err != nil {
				errors++
			} else if rate > 0 {
				latencies = append(latencies, time.Since(sent).Microseconds())
			}
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	seconds := time.Since(start).Seconds()
	sort.Slice(latencies, func(a, b int) bool { return latencies[a] < latencies[b] })
	pct := func(q float64) float64 {
		if len(latencies) == 0 {
			return -1
		}
		return float64(latencies[int(float64(len(latencies)-1)*q+0.5)]) / 1000
	}
	bytes := records * size
	fmt.Printf("{\"client\":\"kgo\",\"codec\":\"%s\",\"records\":%d,\"bytes\":%d,\"seconds\":%.3f,\"mb_per_s\":%.1f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"errors\":%d}\n",
		os.Args[5], records, bytes, seconds, float64(bytes)/1e6/seconds, pct(0.5), pct(0.99), errors)
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
	fmt.Fprintln(os.Stderr, "kgo:", why)
	os.Exit(1)
}
