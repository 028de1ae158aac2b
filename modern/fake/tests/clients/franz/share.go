// franz-round share BOOTSTRAP TOPIC: kgo's share consumer (KIP-932, kgo.ShareGroup) against a
// Kafka cluster, the same round as ClientRound's "share" mode of Kafka's Java client:
//
//   - kadm creates TOPIC (3 partitions); the group's share.auto.offset.reset is set to earliest
//     on its GROUP config resource (IncrementalAlterConfigs), and read back until it shows;
//   - 30 records, record i to partition i % 3, value share-value-i;
//   - two share consumers of the group poll in turn, each record acknowledged explicitly:
//     i % 10 == 7 rejected, i % 10 == 3 released on its first delivery, the rest accepted,
//     the acknowledgements flushed after each poll;
//   - kadm: the group described and listed while both are members, described once both left,
//     its share-partition start offsets and lags, deleted.
//
// The mode is chosen here, before main runs, so that main.go (another round's) stays as it is.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const shareRecords = 30

func init() {
	if len(os.Args) == 4 && os.Args[1] == "share" {
		os.Exit(runShare(strings.Split(os.Args[2], ","), os.Args[3]))
	}
}

type shareRound struct {
	seeds    []string
	topic    string
	group    string
	compared map[string]any
	info     map[string]any
}

func runShare(seeds []string, topic string) int {
	time.AfterFunc(4*time.Minute, func() {
		fmt.Fprintln(os.Stderr, "franz-round share: FAILED: the round took over 4 minutes")
		os.Exit(1)
	})
	r := &shareRound{seeds: seeds, topic: topic, group: topic + "-share", compared: map[string]any{}, info: map[string]any{}}
	err := r.run()
	out, _ := json.Marshal(map[string]any{"compared": r.compared, "informational": r.info})
	if err != nil {
		fmt.Fprintln(os.Stderr, "franz-round share: partial summary:", string(out))
		fmt.Fprintln(os.Stderr, "franz-round share: FAILED:", err)
		return 1
	}
	fmt.Println(string(out))
	return 0
}

func (r *shareRound) run() error {
	raw, err := kgo.NewClient(kgo.SeedBrokers(r.seeds...), kgo.ClientID("franz-share-admin"))
	if err != nil {
		return err
	}
	defer raw.Close()
	admin := kadm.NewClient(raw)
	if err := step("create topic", stepLimit, func(ctx context.Context) error {
		created, err := admin.CreateTopics(ctx, partitions, 1, nil, r.topic)
		if err == nil {
			err = created[r.topic].Err
		}
		return err
	}); err != nil {
		return err
	}
	if err := step("set share.auto.offset.reset", stepLimit, r.setEarliest(raw)); err != nil {
		return err
	}
	if err := step("produce", stepLimit, r.produce); err != nil {
		return err
	}
	return r.consume(admin)
}

// setEarliest sets the group's share.auto.offset.reset and waits until DescribeConfigs shows it
// (Kafka's brokers learn group configs from the controller a little later).
func (r *shareRound) setEarliest(raw *kgo.Client) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		alter := kmsg.NewPtrIncrementalAlterConfigsRequest()
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
		res.ResourceName = r.group
		cfg := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		cfg.Name, cfg.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
		res.Configs = append(res.Configs, cfg)
		alter.Resources = append(alter.Resources, res)
		altered, err := alter.RequestWith(ctx, raw)
		if err != nil {
			return err
		}
		if err := kerr.ErrorForCode(altered.Resources[0].ErrorCode); err != nil {
			return err
		}
		for {
			describe := kmsg.NewPtrDescribeConfigsRequest()
			dres := kmsg.NewDescribeConfigsRequestResource()
			dres.ResourceType = kmsg.ConfigResourceTypeGroupConfig
			dres.ResourceName = r.group
			dres.ConfigNames = []string{"share.auto.offset.reset"}
			describe.Resources = append(describe.Resources, dres)
			described, err := describe.RequestWith(ctx, raw)
			if err != nil {
				return err
			}
			value := ""
			for _, c := range described.Resources[0].Configs {
				if c.Name == "share.auto.offset.reset" && c.Value != nil {
					value = *c.Value
				}
			}
			if value == "earliest" {
				r.compared["share_auto_offset_reset"] = value
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("still %q: %w", value, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

func (r *shareRound) produce(ctx context.Context) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(r.seeds...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		return err
	}
	defer cl.Close()
	var records []*kgo.Record
	for i := 0; i < shareRecords; i++ {
		records = append(records, &kgo.Record{Topic: r.topic, Partition: int32(i % partitions), Value: []byte("share-value-" + strconv.Itoa(i))})
	}
	return cl.ProduceSync(ctx, records...).FirstErr()
}

func (r *shareRound) consume(admin *kadm.Client) error {
	var members []*kgo.Client
	for c := 0; c < 2; c++ {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(r.seeds...),
			kgo.ClientID(fmt.Sprintf("%s-%d", r.group, c)),
			kgo.ShareGroup(r.group),
			kgo.ConsumeTopics(r.topic),
		)
		if err != nil {
			return err
		}
		defer cl.Close()
		members = append(members, cl)
	}
	accepted, rejected := map[int]int{}, map[int]int{}
	released := map[int]int{}
	redelivered := map[int32]bool{}
	perMember := make([]int, len(members))
	expectedRejects := 0
	for i := 0; i < shareRecords; i++ {
		if i%10 == 7 {
			expectedRejects++
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(accepted)+expectedRejects < shareRecords || len(rejected) < expectedRejects {
		if time.Now().After(deadline) {
			return fmt.Errorf("not every record settled after 2 minutes: accepted %v, rejected %v", accepted, rejected)
		}
		for c, cl := range members {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			fetches := cl.PollFetches(ctx)
			cancel()
			for _, e := range fetches.Errors() {
				if !errors.Is(e.Err, context.DeadlineExceeded) && !errors.Is(e.Err, context.Canceled) {
					return fmt.Errorf("polling: %w", e.Err)
				}
			}
			fetches.EachRecord(func(rec *kgo.Record) {
				perMember[c]++
				i, _ := strconv.Atoi(strings.TrimPrefix(string(rec.Value), "share-value-"))
				count := rec.DeliveryCount()
				switch {
				case i%10 == 7:
					rejected[i]++
					rec.Ack(kgo.AckReject)
				case i%10 == 3 && count == 1:
					released[i]++
					rec.Ack(kgo.AckRelease)
				default:
					accepted[i]++
					if i%10 == 3 {
						redelivered[count] = true
					}
					rec.Ack(kgo.AckAccept)
				}
			})
			ctx, cancel = context.WithTimeout(context.Background(), stepLimit)
			err := cl.FlushAcks(ctx)
			cancel()
			if err != nil {
				return fmt.Errorf("flushing acknowledgements: %w", err)
			}
		}
	}
	once := true
	for _, n := range accepted {
		once = once && n == 1
	}
	rejectedAgain := false
	for _, n := range rejected {
		rejectedAgain = rejectedAgain || n > 1
	}
	releasedOnce := true
	for _, n := range released {
		releasedOnce = releasedOnce && n == 1
	}
	var counts []int32
	for c := range redelivered {
		counts = append(counts, c)
	}
	sort.Slice(counts, func(a, b int) bool { return counts[a] < counts[b] })
	r.compared["accepted"] = len(accepted)
	r.compared["accepted_exactly_once"] = once
	r.compared["rejected"] = len(rejected)
	r.compared["rejected_redelivered"] = rejectedAgain
	r.compared["released"] = len(released)
	r.compared["released_once_each"] = releasedOnce
	r.compared["released_redelivery_counts"] = counts
	r.info["consumed_per_member"] = perMember

	if err := step("describe while running", stepLimit, func(ctx context.Context) error {
		d, err := r.describe(ctx, admin)
		r.compared["described_running"] = d
		if err != nil {
			return err
		}
		listed, err := admin.ListGroupsByType(ctx, []string{"share"})
		if err != nil {
			return err
		}
		g := listed[r.group]
		r.compared["listed"] = map[string]any{"type": g.GroupType, "protocol": g.ProtocolType, "state": g.State}
		return nil
	}); err != nil {
		return err
	}
	for _, cl := range members {
		ctx, cancel := context.WithTimeout(context.Background(), stepLimit)
		err := cl.LeaveGroupContext(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("leaving: %w", err)
		}
	}
	return step("after leaving", stepLimit, func(ctx context.Context) error {
		d, err := r.describe(ctx, admin)
		r.compared["described_after_close"] = d
		if err != nil {
			return err
		}
		offsets, err := admin.DescribeShareGroupOffsets(ctx, r.group)
		if err != nil {
			return err
		}
		ends, err := admin.ListEndOffsets(ctx, r.topic)
		if err != nil {
			return err
		}
		starts, lags, endOffsets := map[string]int64{}, map[string]int64{}, map[string]int64{}
		for p := int32(0); p < partitions; p++ {
			key := strconv.Itoa(int(p))
			o, ok := offsets[r.group].Offsets.Lookup(r.topic, p)
			starts[key], lags[key] = -1, -1
			if ok {
				starts[key], lags[key] = o.StartOffset, o.Lag
			}
			if e, ok := ends.Lookup(r.topic, p); ok {
				endOffsets[key] = e.Offset
			}
		}
		r.compared["start_offsets"], r.compared["lags"], r.compared["end_offsets"] = starts, lags, endOffsets
		deleted, err := admin.DeleteGroups(ctx, r.group)
		if err != nil {
			return err
		}
		r.compared["delete_error"] = errName(deleted[r.group].Err)
		listed, err := admin.ListGroupsByType(ctx, []string{"share"})
		if err != nil {
			return err
		}
		_, still := listed[r.group]
		r.compared["listed_after_delete"] = still
		return nil
	})
}

func (r *shareRound) describe(ctx context.Context, admin *kadm.Client) (map[string]any, error) {
	described, err := admin.DescribeShareGroups(ctx, r.group)
	if err != nil {
		return nil, err
	}
	g := described[r.group]
	return map[string]any{"state": g.GroupState, "members": len(g.Members), "error": errName(g.Err)}, nil
}
