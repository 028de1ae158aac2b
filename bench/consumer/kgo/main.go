// franz-go's kgo in a one-member group: reads RECORDS records of TOPIC from the beginning
// with PollFetches, and prints what it read and how long it took from the first record to
// the last.
//
//	kgo BOOTSTRAP TOPIC GROUP RECORDS
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: kgo BOOTSTRAP TOPIC GROUP RECORDS")
		os.Exit(2)
	}
	wanted, err := strconv.ParseInt(os.Args[4], 10, 64)
	if err != nil {
		panic(err)
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(os.Args[1]),
		kgo.ConsumeTopics(os.Args[2]),
		kgo.ConsumerGroup(os.Args[3]),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
	)
	if err != nil {
		panic(err)
	}
	var count, bytes int64
	var first, last time.Time
	for count < wanted {
		fetches := client.PollFetches(context.Background())
		if errs := fetches.Errors(); len(errs) > 0 {
			panic(fmt.Sprint(errs))
		}
		if fetches.NumRecords() == 0 {
			continue
		}
		if first.IsZero() {
			first = time.Now()
		}
		fetches.EachRecord(func(r *kgo.Record) {
			bytes += int64(len(r.Value))
			count++
		})
		last = time.Now()
	}
	out, _ := json.Marshal(map[string]any{"records": count, "bytes": bytes, "seconds": last.Sub(first).Seconds()})
	fmt.Println(string(out))
	client.Close()
}
