package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	partitions = 3
	perCodec   = 10
	stepLimit  = 60 * time.Second
)

// The codecs kgo has, by the name the "codec" header carries.
var codecs = []struct {
	name  string
	codec kgo.CompressionCodec
}{
	{"none", kgo.NoCompression()},
	{"gzip", kgo.GzipCompression()},
	{"snappy", kgo.SnappyCompression()},
	{"lz4", kgo.Lz4Compression()},
	{"zstd", kgo.ZstdCompression()},
}

// codecName is kgo's CompressionCodecType (the batch attribute's low bits) by name.
func codecName(t uint8) string {
	names := []string{"none", "gzip", "snappy", "lz4", "zstd"}
	if int(t) < len(names) {
		return names[t]
	}
	return "codec-" + strconv.Itoa(int(t))
}

type round struct {
	seeds    []string
	topic    string
	group    string
	compared map[string]any
	info     map[string]any

	mu             sync.Mutex
	producedCodecs map[string]bool
	fetchedCodecs  map[string]bool
}

func newRound(seeds []string, topic string) *round {
	return &round{
		seeds:          seeds,
		topic:          topic,
		group:          topic + "-group",
		compared:       map[string]any{},
		info:           map[string]any{},
		producedCodecs: map[string]bool{},
		fetchedCodecs:  map[string]bool{},
	}
}

// The hooks: which codec each batch written and each batch read carried.
func (r *round) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	r.mu.Lock()
	r.producedCodecs[codecName(m.CompressionType)] = true
	r.mu.Unlock()
}

func (r *round) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	r.mu.Lock()
	r.fetchedCodecs[codecName(m.CompressionType)] = true
	r.mu.Unlock()
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// errName is Kafka's name of err's code ("TOPIC_ALREADY_EXISTS"), or its text.
func errName(err error) string {
	if err == nil {
		return "none"
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

func (r *round) run() error {
	admin, err := kadm.NewOptClient(kgo.SeedBrokers(r.seeds...), kgo.ClientID("franz-round-admin"))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer admin.Close()
	if err := step("create topic", stepLimit, func(ctx context.Context) error { return r.create(ctx, admin) }); err != nil {
		return err
	}
	if err := step("produce", stepLimit, r.produce); err != nil {
		return err
	}
	if err := r.consume(admin); err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	// Every member has left: the group can go.
	return step("delete the group", stepLimit, r.deleteGroup(admin))
}

// deleteGroup deletes the empty group, then describes it and a group nobody ever joined.
func (r *round) deleteGroup(admin *kadm.Client) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		deleted, err := admin.DeleteGroups(ctx, r.group)
		if err != nil {
			return err
		}
		after, err := r.describeOnly(ctx, admin, r.group)
		if err != nil {
			return err
		}
		never, err := r.describeOnly(ctx, admin, r.group+"-never-joined")
		if err != nil {
			return err
		}
		neverOffsets, err := admin.FetchOffsets(ctx, r.group+"-never-joined")
		r.compared["after_delete"] = map[string]any{
			"delete_error":                errName(deleted[r.group].Err),
			"described":                   after,
			"never_joined_described":      never,
			"never_joined_offsets_error":  errName(err),
			"never_joined_offsets_topics": len(neverOffsets),
		}
		return nil
	}
}

// describeOnly is DescribeGroups' error name and state for group.
func (r *round) describeOnly(ctx context.Context, admin *kadm.Client, group string) (map[string]any, error) {
	described, err := admin.DescribeGroups(ctx, group)
	if err != nil {
		return nil, fmt.Errorf("describing %s: %w", group, err)
	}
	d := described[group]
	return map[string]any{"error": errName(d.Err), "state": d.State, "members": len(d.Members)}, nil
}

func (r *round) create(ctx context.Context, admin *kadm.Client) error {
	// CreateTopics, not CreateTopic: the latter folds the topic's error into its own.
	firsts, err := admin.CreateTopics(ctx, partitions, 1, nil, r.topic)
	if err != nil {
		return err
	}
	first, ok := firsts[r.topic]
	if !ok || first.Err != nil {
		return fmt.Errorf("creating %s: %v (%s)", r.topic, first.Err, first.ErrMessage)
	}
	seconds, err := admin.CreateTopics(ctx, partitions, 1, nil, r.topic)
	if err != nil {
		return fmt.Errorf("creating it again: %w", err)
	}
	second := seconds[r.topic]
	r.compared["create"] = map[string]any{
		"partitions":         first.NumPartitions,
		"replication_factor": first.ReplicationFactor,
		"has_topic_id":       first.ID != kadm.TopicID{},
		"duplicate_error":    errName(second.Err),
	}
	// The broker's own text, with the topic's name (fresh every run) as TOPIC.
	r.info["duplicate_error_message"] = strings.ReplaceAll(second.ErrMessage, r.topic, "TOPIC")
	return nil
}

// produce writes perCodec records in each codec, one idempotent producer per codec, and checks
// that no partition gave two records the same offset.
func (r *round) produce(ctx context.Context) error {
	offsets := map[int32][]int64{}
	for _, c := range codecs {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(r.seeds...),
			kgo.ClientID("franz-round-producer-"+c.name),
			kgo.ProducerBatchCompression(c.codec),
			kgo.RequiredAcks(kgo.AllISRAcks()),
			kgo.WithHooks(r),
		)
		if err != nil {
			return err
		}
		recs := make([]*kgo.Record, perCodec)
		for i := range recs {
			recs[i] = &kgo.Record{
				Topic:   r.topic,
				Key:     []byte(fmt.Sprintf("%s-key-%d", c.name, i)),
				Value:   []byte(fmt.Sprintf("%s-%d", c.name, i)),
				Headers: []kgo.RecordHeader{{Key: "codec", Value: []byte(c.name)}},
			}
		}
		results := cl.ProduceSync(ctx, recs...)
		cl.Close()
		if err := results.FirstErr(); err != nil {
			return fmt.Errorf("codec %s: %w", c.name, err)
		}
		for _, res := range results {
			offsets[res.Record.Partition] = append(offsets[res.Record.Partition], res.Record.Offset)
		}
	}
	unique, contiguous := true, true
	perPartition := map[string]int{}
	for p, list := range offsets {
		sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
		perPartition[strconv.Itoa(int(p))] = len(list)
		for i, o := range list {
			if i > 0 && list[i-1] == o {
				unique = false
			}
			if o != int64(i) {
				contiguous = false
			}
		}
	}
	r.compared["produced"] = map[string]any{
		"records":         len(codecs) * perCodec,
		"per_partition":   perPartition,
		"offsets_unique":  unique,
		"offsets_0_to_n":  contiguous,
		"batch_codecs":    sortedKeys(r.producedCodecs),
		"producers":       len(codecs),
		"idempotent_acks": "all",
	}
	return nil
}

// group is the state the members share: what they processed, as the round checks it.
type group struct {
	consumers
	r        *round
	seen     map[string]int // record value → times processed
	byMember map[string]int
	headerOK bool
	epochs   map[string]bool // the leader epochs fetched records carried
}

func newGroup(r *round) *group {
	g := &group{r: r, seen: map[string]int{}, byMember: map[string]int{}, headerOK: true, epochs: map[string]bool{}}
	g.consumers = consumers{
		seeds:        r.seeds,
		topic:        r.topic,
		group:        r.group,
		clientPrefix: "franz-round-",
		opts:         []kgo.Opt{kgo.SessionTimeout(10 * time.Second), kgo.HeartbeatInterval(500 * time.Millisecond), kgo.WithHooks(r)},
		limit:        15,
		counted: func(m *member, records []*kgo.Record) {
			for _, rec := range records {
				value := string(rec.Value)
				g.seen[value]++
				g.byMember[m.name]++
				g.epochs[strconv.Itoa(int(rec.LeaderEpoch))] = true
				codec := strings.SplitN(value, "-", 2)[0]
				if len(rec.Headers) != 1 || rec.Headers[0].Key != "codec" || string(rec.Headers[0].Value) != codec {
					g.headerOK = false
				}
			}
		},
	}
	return g
}

// waitFor polls cond (under g.mu) until it holds, a failure is recorded, or timeout.
func (g *group) waitFor(what string, timeout time.Duration, cond func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		g.mu.Lock()
		ok, failures := cond(), append([]string(nil), g.failures...)
		g.mu.Unlock()
		if len(failures) > 0 {
			return fmt.Errorf("while waiting for %s: %s", what, strings.Join(failures, "; "))
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s (%s)", timeout, what, g.describe())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// describe is the members' state, for failure messages.
func (g *group) describe() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var parts []string
	for _, m := range g.members {
		parts = append(parts, fmt.Sprintf("%s owns %v calls %v", m.name, keys(m.owned), m.calls))
	}
	return fmt.Sprintf("consumed %d/%d; %s", g.total, g.limit, strings.Join(parts, "; "))
}

func keys(m map[int32]bool) []int32 {
	out := make([]int32, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// balanced says (under g.mu) whether live members own every partition between them, none twice,
// each of them at least one.
func balanced(live ...*member) bool {
	seen := map[int32]bool{}
	for _, m := range live {
		if len(m.owned) == 0 {
			return false
		}
		for p := range m.owned {
			if seen[p] {
				return false
			}
			seen[p] = true
		}
	}
	return len(seen) == partitions
}

func (r *round) consume(admin *kadm.Client) error {
	total := len(codecs) * perCodec
	g := newGroup(r)
	var live []*member
	defer func() {
		for _, m := range g.members {
			select {
			case <-m.stop:
			default:
				close(m.stop)
			}
			m.cl.Close()
		}
	}()
	phases := map[string]int{}

	// Phase 1: a and b share the partitions and read about 15 records.
	a, err := g.newMember("a")
	if err != nil {
		return err
	}
	b, err := g.newMember("b")
	if err != nil {
		return err
	}
	if err := g.waitFor("a and b to share the partitions", stepLimit, func() bool { return balanced(a, b) }); err != nil {
		return err
	}
	if err := g.waitFor("15 records", stepLimit, func() bool { return g.total >= 15 || g.total == total }); err != nil {
		return err
	}
	phases["a_b"] = g.count()

	// Phase 2: c joins; the three read on to about 35.
	c, err := g.newMember("c")
	if err != nil {
		return err
	}
	if err := g.waitFor("c to get partitions", stepLimit, func() bool { return balanced(a, b, c) }); err != nil {
		return err
	}
	g.setLimit(35)
	if err := g.waitFor("35 records", stepLimit, func() bool { return g.total >= 35 || g.total == total }); err != nil {
		return err
	}
	phases["a_b_c"] = g.count()

	// Phase 3: b stops processing and leaves (LeaveGroup); a and c read the rest.
	close(b.stop)
	<-b.done
	b.cl.Close()
	live = []*member{a, c}
	if err := g.waitFor("a and c to share the partitions", stepLimit, func() bool { return balanced(live...) }); err != nil {
		return err
	}
	g.setLimit(1 << 30)
	if err := g.waitFor("every record", stepLimit, func() bool { return g.total >= total }); err != nil {
		return err
	}
	// Two quiet seconds: a record processed twice would show up here.
	time.Sleep(2 * time.Second)
	phases["a_c"] = g.count()
	for _, m := range live {
		close(m.stop)
		<-m.done
	}

	g.mu.Lock()
	if len(g.failures) > 0 {
		g.mu.Unlock()
		return errors.New(strings.Join(g.failures, "; "))
	}
	duplicates := 0
	for _, n := range g.seen {
		if n > 1 {
			duplicates++
		}
	}
	var shape []int
	calls := map[string]map[string]int{}
	for _, m := range live {
		shape = append(shape, len(m.owned))
	}
	for _, m := range g.members {
		calls[m.name] = m.calls
	}
	sort.Ints(shape)
	r.compared["consumed"] = map[string]any{
		"records":                     g.total,
		"distinct":                    len(g.seen),
		"processed_twice":             duplicates,
		"headers_match_codec":         g.headerOK,
		"batch_codecs":                sortedKeys(r.fetchedCodecs),
		"record_leader_epochs":        sortedKeys(g.epochs),
		"final_partitions_per_member": shape,
	}
	r.info["rebalance_callbacks"] = calls
	r.info["consumed_by_member"] = g.byMember
	r.info["consumed_after_phase"] = phases
	g.mu.Unlock()

	// While a and c are still members: what the brokers say.
	return step("admin after consuming", stepLimit, func(ctx context.Context) error { return r.inspect(ctx, admin) })
}

func (g *group) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}

// inspect asks kadm for the group's committed offsets, the end offsets, and the group itself.
func (r *round) inspect(ctx context.Context, admin *kadm.Client) error {
	committed, err := admin.FetchOffsets(ctx, r.group)
	if err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	if err := committed.Error(); err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}
	offsets, epochs := map[string]int64{}, map[string]int32{}
	for p, o := range committed[r.topic] {
		offsets[strconv.Itoa(int(p))] = o.At
		epochs[strconv.Itoa(int(p))] = o.LeaderEpoch
	}
	r.compared["committed"] = map[string]any{"offsets": offsets, "leader_epochs": epochs}

	ends, err := admin.ListEndOffsets(ctx, r.topic)
	if err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	if err := ends.Error(); err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}
	endOffsets, endEpochs := map[string]int64{}, map[string]int32{}
	for p, o := range ends[r.topic] {
		endOffsets[strconv.Itoa(int(p))] = o.Offset
		endEpochs[strconv.Itoa(int(p))] = o.LeaderEpoch
	}
	r.compared["end"] = map[string]any{"offsets": endOffsets, "leader_epochs": endEpochs}

	described, err := admin.DescribeGroups(ctx, r.group)
	if err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	d, ok := described[r.group]
	if !ok {
		return fmt.Errorf("describe groups: %s missing from %v", r.group, described)
	}
	var perMember []int
	var clientIDs []string
	for _, m := range d.Members {
		clientIDs = append(clientIDs, m.ClientID)
		perMember = append(perMember, assignedTo(m.Assigned, r.topic))
	}
	sort.Ints(perMember)
	sort.Strings(clientIDs)
	r.compared["described"] = map[string]any{
		"error":                 errName(d.Err),
		"state":                 d.State,
		"protocol_type":         d.ProtocolType,
		"protocol":              d.Protocol,
		"members":               len(d.Members),
		"client_ids":            clientIDs,
		"partitions_per_member": perMember,
	}
	r.info["described_error_message"] = d.ErrMessage

	// Deleting a group that has members is refused.
	deleted, err := admin.DeleteGroups(ctx, r.group)
	if err != nil {
		return fmt.Errorf("delete groups: %w", err)
	}
	r.compared["delete_while_active"] = errName(deleted[r.group].Err)

	listed, err := admin.ListGroups(ctx)
	if err != nil {
		return fmt.Errorf("list groups: %w", err)
	}
	l, found := listed[r.group]
	r.compared["listed"] = map[string]any{
		"found":         found,
		"protocol_type": l.ProtocolType,
		"state":         l.State,
		"group_type":    l.GroupType,
	}
	return nil
}

// assignedTo counts the partitions of topic in a member's consumer assignment.
func assignedTo(a kadm.GroupMemberAssignment, topic string) int {
	c, ok := a.AsConsumer()
	if !ok {
		return -1
	}
	return countPartitions(c, topic)
}

func countPartitions(c *kmsg.ConsumerMemberAssignment, topic string) int {
	n := 0
	for _, t := range c.Topics {
		if t.Topic == topic {
			n += len(t.Partitions)
		}
	}
	return n
}
