package main

// The consumer-protocol round (franz-round consumer-protocol BOOTSTRAP TOPIC): franz-go's
// KIP-848 opt-in, kgo.ServerSideBalancer, with its default cooperative-sticky balancer (which
// asks the broker for its "uniform" assignor). kgo uses the new protocol only where the broker
// advertises ConsumerGroupHeartbeat v1; otherwise it silently falls back to the classic one, so
// the round reports what the broker says the group is.
//
//   - kadm creates TOPIC (6 partitions); one producer writes 10 records to each partition;
//   - members a and b join (TOPIC + "-group"), then c, then b leaves; each processes its
//     records, commits them with CommitRecords, and only then lets the group rebalance
//     (BlockRebalanceOnPoll); the members read in gated steps so that every phase has work;
//   - once the group is stable in each phase: what the members' callbacks say they own and
//     what kadm's DescribeConsumerGroups says they hold (sizes only: which partitions is the
//     assignor's choice);
//   - at the end: committed offsets against end offsets, ListGroups, DescribeConsumerGroups,
//     DescribeGroups (the classic API), DeleteGroups while members remain, then once all left.
//
// Only what does not depend on timing goes in "compared"; epochs go in "informational".

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	cpPartitions   = 6
	cpPerPartition = 10
)

type cpRound struct {
	consumers
	admin    *kadm.Client
	compared map[string]any
	info     map[string]any
	seen     map[string]int // record value → times processed, guarded by consumers.mu
	perPart  map[string]int // partition → records processed, guarded by consumers.mu
}

func newConsumerProtocolRound(seeds []string, topic string) *cpRound {
	r := &cpRound{compared: map[string]any{}, info: map[string]any{}, seen: map[string]int{}, perPart: map[string]int{}}
	r.consumers = consumers{
		seeds:               seeds,
		topic:               topic,
		group:               topic + "-group",
		clientPrefix:        "franz-cp-",
		opts:                []kgo.Opt{kgo.ServerSideBalancer()},
		rebalanceWhileGated: true,
		counted: func(_ *member, records []*kgo.Record) {
			for _, rec := range records {
				r.seen[string(rec.Value)]++
				r.perPart[strconv.Itoa(int(rec.Partition))]++
			}
		},
	}
	return r
}

func (r *cpRound) summary() (compared, info map[string]any) { return r.compared, r.info }

func (r *cpRound) run() error {
	admin, err := kadm.NewOptClient(kgo.SeedBrokers(r.seeds...), kgo.ClientID("franz-cp-admin"))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer admin.Close()
	r.admin = admin
	if err := step("create topic", stepLimit, func(ctx context.Context) error {
		created, err := admin.CreateTopics(ctx, cpPartitions, 1, nil, r.topic)
		if err != nil {
			return err
		}
		if c := created[r.topic]; c.Err != nil {
			return fmt.Errorf("creating %s: %v (%s)", r.topic, c.Err, c.ErrMessage)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := step("produce", stepLimit, r.produce); err != nil {
		return err
	}
	defer func() {
		for _, m := range r.members {
			r.leave(m)
		}
	}()
	if err := r.consume(admin); err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	return nil
}

// produce writes cpPerPartition records to each partition.
func (r *cpRound) produce(ctx context.Context) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(r.seeds...),
		kgo.ClientID("franz-cp-producer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	var recs []*kgo.Record
	for p := int32(0); p < cpPartitions; p++ {
		for i := 0; i < cpPerPartition; i++ {
			recs = append(recs, &kgo.Record{Topic: r.topic, Partition: p, Value: []byte(fmt.Sprintf("p%d-%d", p, i))})
		}
	}
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// waitFor polls cond until it holds, a failure is recorded, or stepLimit passes; cond runs
// without the lock (it may ask the broker).
func (r *cpRound) waitFor(what string, cond func() (bool, string)) error {
	deadline := time.Now().Add(stepLimit)
	for {
		r.mu.Lock()
		failures := append([]string(nil), r.failures...)
		r.mu.Unlock()
		if len(failures) > 0 {
			return fmt.Errorf("while waiting for %s: %s", what, strings.Join(failures, "; "))
		}
		ok, state := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s (%s)", stepLimit, what, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ownedSizes is (under r.mu) how many partitions each live member's callbacks say it owns,
// sorted, and whether they own every partition between them, none twice.
func (r *cpRound) ownedSizes(live []*member) ([]int, bool) {
	seen := map[int32]bool{}
	disjoint := true
	var sizes []int
	for _, m := range live {
		sizes = append(sizes, len(m.owned))
		for p := range m.owned {
			if seen[p] {
				disjoint = false
			}
			seen[p] = true
		}
	}
	sort.Ints(sizes)
	return sizes, disjoint && len(seen) == cpPartitions
}

// describe is kadm's DescribeConsumerGroups of the group.
func (r *cpRound) describe() (kadm.DescribedConsumerGroup, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	described, err := r.admin.DescribeConsumerGroups(ctx, r.group)
	if err != nil {
		return kadm.DescribedConsumerGroup{}, err
	}
	return described[r.group], nil
}

func topicSize(s kadm.TopicsSet, topic string) int { return len(s[topic]) }

// settle waits until the group is stable with exactly the live members, each holding what the
// coordinator means it to and what its callbacks say it owns, every partition held once; then
// records the phase.
func (r *cpRound) settle(phase string, live ...*member) error {
	var d kadm.DescribedConsumerGroup
	err := r.waitFor(phase+" to be stable", func() (bool, string) {
		var err error
		if d, err = r.describe(); err != nil || d.Err != nil {
			return false, fmt.Sprintf("describe: %v %v", err, d.Err)
		}
		r.mu.Lock()
		sizes, complete := r.ownedSizes(live)
		r.mu.Unlock()
		var described []int
		reconciled := true
		for _, m := range d.Members {
			described = append(described, topicSize(m.Assignment, r.topic))
			reconciled = reconciled && fmt.Sprint(m.Assignment) == fmt.Sprint(m.TargetAssignment) && m.MemberEpoch == d.Epoch
		}
		sort.Ints(described)
		ok := d.State == "Stable" && reconciled && complete && len(d.Members) == len(live) &&
			fmt.Sprint(sizes) == fmt.Sprint(described)
		return ok, fmt.Sprintf("state %s, epoch %d, owned %v, described %v", d.State, d.Epoch, sizes, described)
	})
	if err != nil {
		return err
	}
	r.mu.Lock()
	sizes, _ := r.ownedSizes(live)
	r.mu.Unlock()
	types := map[string]bool{}
	for _, m := range d.Members {
		types[strconv.Itoa(int(m.MemberType))] = true
	}
	phases, _ := r.compared["phases"].(map[string]any)
	if phases == nil {
		phases = map[string]any{}
		r.compared["phases"] = phases
	}
	phases[phase] = map[string]any{
		"owned_sizes":  sizes,
		"members":      len(d.Members),
		"state":        d.State,
		"assignor":     d.AssignorName,
		"member_types": sortedKeys(types),
	}
	epochs, _ := r.info["group_epochs"].(map[string]any)
	if epochs == nil {
		epochs = map[string]any{}
		r.info["group_epochs"] = epochs
	}
	epochs[phase] = d.Epoch
	return nil
}

// consumeTo lets the members read until total reaches n (or everything), waiting for it.
func (r *cpRound) consumeTo(n int) error {
	r.setLimit(n)
	return r.waitFor(fmt.Sprintf("%d records", n), func() (bool, string) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.total >= n, fmt.Sprintf("consumed %d", r.total)
	})
}

func (r *cpRound) consume(admin *kadm.Client) error {
	total := cpPartitions * cpPerPartition
	a, err := r.newMember("a")
	if err != nil {
		return err
	}
	b, err := r.newMember("b")
	if err != nil {
		return err
	}
	if err := r.settle("a_b", a, b); err != nil {
		return err
	}
	if err := r.consumeTo(20); err != nil {
		return err
	}
	c, err := r.newMember("c")
	if err != nil {
		return err
	}
	if err := r.settle("a_b_c", a, b, c); err != nil {
		return err
	}
	if err := r.consumeTo(40); err != nil {
		return err
	}
	// b stops processing and leaves the group.
	r.leave(b)
	if err := r.settle("a_c", a, c); err != nil {
		return err
	}
	if err := r.consumeTo(total); err != nil {
		return err
	}
	// Two quiet seconds: a record processed twice would show up here.
	time.Sleep(2 * time.Second)
	for _, m := range []*member{a, c} {
		r.stopPolling(m)
	}
	r.mu.Lock()
	duplicates := 0
	for _, n := range r.seen {
		if n > 1 {
			duplicates++
		}
	}
	r.compared["consumed"] = map[string]any{
		"records":         r.total,
		"distinct":        len(r.seen),
		"processed_twice": duplicates,
		"per_partition":   r.perPart,
	}
	failures := append([]string(nil), r.failures...)
	r.mu.Unlock()
	if len(failures) > 0 {
		return errors.New(strings.Join(failures, "; "))
	}
	if err := step("admin with a and c in the group", stepLimit, func(ctx context.Context) error { return r.inspect(ctx, admin) }); err != nil {
		return err
	}
	// a and c leave: the group empties and can go.
	for _, m := range []*member{a, c} {
		r.leave(m)
	}
	var empty kadm.DescribedConsumerGroup
	if err := r.waitFor("the group to empty", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		described, err := admin.DescribeConsumerGroups(ctx, r.group)
		if err != nil {
			return false, err.Error()
		}
		empty = described[r.group]
		return empty.State == "Empty", "state " + empty.State
	}); err != nil {
		return err
	}
	return step("delete the empty group", stepLimit, func(ctx context.Context) error {
		deleted, err := admin.DeleteGroups(ctx, r.group)
		if err != nil {
			return err
		}
		after, err := admin.DescribeConsumerGroups(ctx, r.group)
		var afterErr error = err
		if err == nil {
			afterErr = after[r.group].Err
		}
		r.compared["after_leaving"] = map[string]any{
			"state":              empty.State,
			"members":            len(empty.Members),
			"delete_error":       errName(deleted[r.group].Err),
			"described_after":    errName(afterErr),
			"epoch_kept_nonzero": empty.Epoch > 0,
		}
		return nil
	})
}

// inspect asks kadm, while a and c are members, for the committed and end offsets and for the
// group as every API describes it.
func (r *cpRound) inspect(ctx context.Context, admin *kadm.Client) error {
	committed, err := admin.FetchOffsets(ctx, r.group)
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	if err := committed.Error(); err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	offsets := map[string]int64{}
	for p, o := range committed[r.topic] {
		offsets[strconv.Itoa(int(p))] = o.At
	}
	ends, err := admin.ListEndOffsets(ctx, r.topic)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	endOffsets := map[string]int64{}
	for p, o := range ends[r.topic] {
		endOffsets[strconv.Itoa(int(p))] = o.Offset
	}
	r.compared["committed"] = offsets
	r.compared["end"] = endOffsets
	r.compared["committed_is_end"] = fmt.Sprint(offsets) == fmt.Sprint(endOffsets)

	listed, err := admin.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	l, found := listed[r.group]
	r.compared["listed"] = map[string]any{
		"found":         found,
		"group_type":    l.GroupType,
		"protocol_type": l.ProtocolType,
		"state":         l.State,
	}

	described, err := admin.DescribeConsumerGroups(ctx, r.group)
	if err != nil {
		return fmt.Errorf("describe consumer groups: %w", err)
	}
	d := described[r.group]
	var sizes []int
	var clientIDs []string
	for _, m := range d.Members {
		sizes = append(sizes, topicSize(m.Assignment, r.topic))
		clientIDs = append(clientIDs, m.ClientID)
	}
	sort.Ints(sizes)
	sort.Strings(clientIDs)
	r.compared["described"] = map[string]any{
		"error":      errName(d.Err),
		"state":      d.State,
		"assignor":   d.AssignorName,
		"members":    len(d.Members),
		"client_ids": clientIDs,
		"sizes":      sizes,
	}
	r.info["described_epochs"] = map[string]int32{"group": d.Epoch, "assignment": d.AssignmentEpoch}

	// The classic API's view of a consumer group.
	classic, err := admin.DescribeGroups(ctx, r.group)
	if err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	cd := classic[r.group]
	r.compared["described_classic"] = map[string]any{
		"error":         errName(cd.Err),
		"state":         cd.State,
		"protocol_type": cd.ProtocolType,
		"members":       len(cd.Members),
	}

	deleted, err := admin.DeleteGroups(ctx, r.group)
	if err != nil {
		return fmt.Errorf("delete groups: %w", err)
	}
	r.compared["delete_while_active"] = errName(deleted[r.group].Err)
	return nil
}
