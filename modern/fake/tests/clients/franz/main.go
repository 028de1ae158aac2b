// franz-go (github.com/twmb/franz-go, a Kafka client written without our code) against a
// Kafka cluster: the same round against kwire-fake and against Apache Kafka, so that
// tests/franz_go.rs can compare the two summaries.
//
// Usage: franz-round round BOOTSTRAP TOPIC (this round), franz-round txn BOOTSTRAP TOPIC
// (transactions: see txn.go), or franz-round consumer-protocol BOOTSTRAP TOPIC (a KIP-848
// group: see consumer_protocol.go)
//
//   - kadm creates TOPIC (3 partitions, replication factor 1), then again: the second error;
//   - 10 records in each codec kgo has (none, gzip, snappy, lz4, zstd), each codec from its own
//     idempotent producer (kgo's default, acks all), a "codec" header on each record;
//   - a classic consumer group (TOPIC + "-group", kgo's default cooperative-sticky balancer)
//     reads them back: members a and b, then c joins, then b leaves; every record is committed
//     with CommitRecords right after it is processed, rebalances held off while processing
//     (BlockRebalanceOnPoll);
//   - kadm, while a and c are members: the group's committed offsets, the end offsets,
//     DescribeGroups, DeleteGroups (refused: NON_EMPTY_GROUP) and ListGroups;
//   - once every member has left: DeleteGroups, then DescribeGroups of it and of a group nobody
//     joined, and OffsetFetch of the latter.
//
// One JSON line on stdout: "compared" holds what must be the same on every broker,
// "informational" what depends on timing. Failures go to stderr with a non-zero exit.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) != 4 || (os.Args[1] != "round" && os.Args[1] != "txn" && os.Args[1] != "consumer-protocol") {
		fmt.Fprintln(os.Stderr, "usage: franz-round round|txn|consumer-protocol BOOTSTRAP TOPIC")
		os.Exit(2)
	}
	seeds := strings.Split(os.Args[2], ",")
	var r interface {
		run() error
		summary() (compared, info map[string]any)
	} = newRound(seeds, os.Args[3])
	if os.Args[1] == "txn" {
		r = newTxnRound(seeds, os.Args[3])
	}
	if os.Args[1] == "consumer-protocol" {
		r = newConsumerProtocolRound(seeds, os.Args[3])
	}
	// Every step has its own deadline; this one bounds the whole round (closing clients too).
	time.AfterFunc(4*time.Minute, func() {
		fmt.Fprintln(os.Stderr, "franz-round: FAILED: the round took over 4 minutes")
		os.Exit(1)
	})
	start := time.Now()
	err := r.run()
	compared, info := r.summary()
	info["elapsed_ms"] = time.Since(start).Milliseconds()
	out, jerr := json.Marshal(map[string]any{"compared": compared, "informational": info})
	if jerr != nil {
		fmt.Fprintln(os.Stderr, "franz-round: encoding the summary:", jerr)
		os.Exit(1)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "franz-round: partial summary:", string(out))
		fmt.Fprintln(os.Stderr, "franz-round: FAILED:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}

func (r *round) summary() (compared, info map[string]any) { return r.compared, r.info }

func (t *txnRound) summary() (compared, info map[string]any) { return t.compared, t.info }

// step runs fn under its own deadline, naming the step in its error.
func step(name string, timeout time.Duration, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := fn(ctx); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
