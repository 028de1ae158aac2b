package main

// franz-round txn BOOTSTRAP TOPIC: franz-go's transactions.
//
//   - kadm creates TOPIC and TOPIC-out (3 partitions each);
//   - a kgo.TransactionalID producer commits txnRecords records, aborts as many, commits as many
//     (EndTransaction), record i to partition i % 3;
//   - readers of TOPIC with FetchIsolationLevel ReadCommitted and ReadUncommitted;
//   - kadm's DescribeTransactions of the id;
//   - a GroupTransactSession (read committed) copies each record of TOPIC to TOPIC-out, its
//     group's offsets committed in the same transaction; kadm then fetches the group's offsets;
//   - a second producer of the same transactional id fences the first;
//   - kadm's ListTransactions of the ids.
//
// "compared" holds what must be the same on every broker, "informational" what is not.

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

const txnRecords = 6

type txnRound struct {
	seeds    []string
	topic    string
	outTopic string
	id       string
	compared map[string]any
	info     map[string]any
}

func newTxnRound(seeds []string, topic string) *txnRound {
	return &txnRound{
		seeds:    seeds,
		topic:    topic,
		outTopic: topic + "-out",
		id:       topic + "-txn",
		compared: map[string]any{},
		info:     map[string]any{},
	}
}

func (t *txnRound) producer(id string) (*kgo.Client, error) {
	return kgo.NewClient(
		kgo.SeedBrokers(t.seeds...),
		kgo.TransactionalID(id),
		kgo.TransactionTimeout(60*time.Second),
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
	)
}

// records are txnRecords records valued TAG-i, record i to partition i % 3.
func (t *txnRound) records(tag string) []*kgo.Record {
	recs := make([]*kgo.Record, txnRecords)
	for i := range recs {
		recs[i] = &kgo.Record{
			Topic:     t.topic,
			Partition: int32(i % partitions),
			Key:       []byte("k-" + strconv.Itoa(i)),
			Value:     []byte(tag + "-" + strconv.Itoa(i)),
		}
	}
	return recs
}

// transaction produces recs in one transaction and ends it; the offsets written per partition.
func transaction(ctx context.Context, cl *kgo.Client, recs []*kgo.Record, end kgo.TransactionEndTry) (map[string][]int64, error) {
	if err := cl.BeginTransaction(); err != nil {
		return nil, err
	}
	results := cl.ProduceSync(ctx, recs...)
	if err := results.FirstErr(); err != nil {
		return nil, errors.Join(err, cl.EndTransaction(ctx, kgo.TryAbort))
	}
	offsets := map[string][]int64{}
	for _, res := range results {
		p := strconv.Itoa(int(res.Record.Partition))
		offsets[p] = append(offsets[p], res.Record.Offset)
	}
	return offsets, cl.EndTransaction(ctx, end)
}

// readAll reads every partition of topic from the start with level until want records came,
// then a little longer for any record read twice: values sorted, offsets per partition.
func (t *txnRound) readAll(ctx context.Context, topic string, level kgo.IsolationLevel, want int) (map[string]any, error) {
	start := map[int32]kgo.Offset{}
	for p := int32(0); p < partitions; p++ {
		start[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(t.seeds...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: start}),
		kgo.FetchIsolationLevel(level),
		kgo.FetchMaxWait(200*time.Millisecond),
	)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var values []string
	offsets := map[string][]int64{}
	poll := func(ctx context.Context) error {
		fetches := cl.PollFetches(ctx)
		var failed error
		fetches.EachError(func(_ string, _ int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				failed = err
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			values = append(values, string(r.Value))
			p := strconv.Itoa(int(r.Partition))
			offsets[p] = append(offsets[p], r.Offset)
		})
		return failed
	}
	for len(values) < want {
		if err := poll(ctx); err != nil {
			return nil, fmt.Errorf("%d of %d records: %w", len(values), want, err)
		}
	}
	more, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	if err := poll(more); err != nil {
		return nil, err
	}
	sort.Strings(values)
	return map[string]any{"records": len(values), "values": values, "offsets": offsets}, nil
}

// describe is DescribeTransactions of id once in no Prepare* state (Kafka answers EndTxn before
// writing its markers): state, epoch, timeout, the partitions of an open transaction.
func (t *txnRound) describe(ctx context.Context, admin *kadm.Client, id string) (map[string]any, error) {
	for {
		described, err := admin.DescribeTransactions(ctx, id)
		if err != nil {
			return nil, err
		}
		d := described[id]
		if d.Err != nil {
			return nil, d.Err
		}
		if strings.HasPrefix(d.State, "Prepare") {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
				continue
			}
		}
		parts := []string{}
		d.Topics.Each(func(topic string, p int32) {
			parts = append(parts, strings.ReplaceAll(topic, t.topic, "TOPIC")+"-"+strconv.Itoa(int(p)))
		})
		sort.Strings(parts)
		return map[string]any{"state": d.State, "producer_epoch": d.ProducerEpoch, "timeout_ms": d.TimeoutMillis, "partitions": parts}, nil
	}
}

func (t *txnRound) run() error {
	admin, err := kadm.NewOptClient(kgo.SeedBrokers(t.seeds...), kgo.ClientID("franz-txn-admin"))
	if err != nil {
		return fmt.Errorf("admin client: %w", err)
	}
	defer admin.Close()
	err = step("create topics", stepLimit, func(ctx context.Context) error {
		created, err := admin.CreateTopics(ctx, partitions, 1, nil, t.topic, t.outTopic)
		if err == nil {
			err = created.Error()
		}
		return err
	})
	if err != nil {
		return err
	}
	first, err := t.producer(t.id)
	if err != nil {
		return err
	}
	defer first.Close()
	err = step("commit, abort, commit", stepLimit, func(ctx context.Context) error {
		written := map[string]any{}
		for _, txn := range []struct {
			tag string
			end kgo.TransactionEndTry
		}{{"committed1", kgo.TryCommit}, {"aborted", kgo.TryAbort}, {"committed2", kgo.TryCommit}} {
			offsets, err := transaction(ctx, first, t.records(txn.tag), txn.end)
			if err != nil {
				return fmt.Errorf("%s: %w", txn.tag, err)
			}
			written[txn.tag] = offsets
		}
		t.compared["written"] = written
		return nil
	})
	if err != nil {
		return err
	}
	err = step("read", stepLimit, func(ctx context.Context) (err error) {
		if t.compared["read_committed"], err = t.readAll(ctx, t.topic, kgo.ReadCommitted(), 2*txnRecords); err != nil {
			return fmt.Errorf("read committed: %w", err)
		}
		if t.compared["read_uncommitted"], err = t.readAll(ctx, t.topic, kgo.ReadUncommitted(), 3*txnRecords); err != nil {
			return fmt.Errorf("read uncommitted: %w", err)
		}
		t.compared["described_after_commits"], err = t.describe(ctx, admin, t.id)
		return err
	})
	if err != nil {
		return err
	}
	if err := step("consume-transform-produce", stepLimit, t.copyAll(admin)); err != nil {
		return err
	}
	return step("fencing", stepLimit, func(ctx context.Context) error { return t.fence(ctx, admin, first) })
}

// copyAll copies TOPIC to TOPIC-out in a GroupTransactSession, then reads what the group
// committed, TOPIC's end offsets and TOPIC-out read committed.
func (t *txnRound) copyAll(admin *kadm.Client) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		group := t.topic + "-copier"
		sess, err := kgo.NewGroupTransactSession(
			kgo.SeedBrokers(t.seeds...),
			kgo.TransactionalID(t.id+"-copier"),
			kgo.TransactionTimeout(60*time.Second),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(t.topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
			kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.RequireStableFetchOffsets(),
			kgo.FetchMaxWait(200*time.Millisecond),
		)
		if err != nil {
			return err
		}
		defer sess.Close()
		copied, aborted := 0, 0
		for copied < 2*txnRecords {
			fetches := sess.PollFetches(ctx)
			if err := fetches.Err0(); err != nil {
				return fmt.Errorf("after %d copied: %w", copied, err)
			}
			if fetches.NumRecords() == 0 {
				continue
			}
			if err := sess.Begin(); err != nil {
				return err
			}
			fetches.EachRecord(func(r *kgo.Record) {
				sess.Produce(ctx, &kgo.Record{Topic: t.outTopic, Partition: r.Partition, Key: r.Key, Value: r.Value}, nil)
			})
			committed, err := sess.End(ctx, kgo.TryCommit)
			if err != nil {
				return err
			}
			// A rebalance aborts the transaction: its records come again.
			if committed {
				copied += fetches.NumRecords()
			} else {
				aborted++
			}
		}
		t.info["copier_aborted_transactions"] = aborted
		// Described once out of Prepare*: Kafka answers EndTxn before writing the markers which
		// make the last offsets visible to OffsetFetch.
		described, err := t.describe(ctx, admin, t.id+"-copier")
		if err != nil {
			return err
		}
		offsets, err := admin.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		committed := map[string]int64{}
		offsets.Each(func(o kadm.OffsetResponse) { committed[strconv.Itoa(int(o.Partition))] = o.At })
		ends, err := admin.ListEndOffsets(ctx, t.topic)
		if err != nil {
			return err
		}
		high := map[string]int64{}
		ends.Each(func(o kadm.ListedOffset) { high[strconv.Itoa(int(o.Partition))] = o.Offset })
		out, err := t.readAll(ctx, t.outTopic, kgo.ReadCommitted(), copied)
		if err != nil {
			return fmt.Errorf("reading %s: %w", t.outTopic, err)
		}
		delete(out, "offsets")
		// Its epoch counts its transactions (KIP-890 bumps it at each end): timing, not compared.
		delete(described, "producer_epoch")
		t.compared["consume_transform_produce"] = map[string]any{
			"copied": copied, "committed": committed, "end_offsets": high, "out_read_committed": out, "described": described,
		}
		return nil
	}
}

// fence starts a second producer of first's transactional id, which commits a record (described
// while open); first's next transaction then fails. ListTransactions of both ids at the end.
func (t *txnRound) fence(ctx context.Context, admin *kadm.Client, first *kgo.Client) error {
	second, err := t.producer(t.id)
	if err != nil {
		return err
	}
	defer second.Close()
	// Its transaction, open, as kadm sees it; then committed.
	if err := second.BeginTransaction(); err != nil {
		return err
	}
	if err := second.ProduceSync(ctx, &kgo.Record{Topic: t.topic, Partition: 0, Value: []byte("second")}).FirstErr(); err != nil {
		return fmt.Errorf("the second producer: %w", err)
	}
	if t.compared["described_open"], err = t.describe(ctx, admin, t.id); err != nil {
		return err
	}
	if err := second.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("the second producer's commit: %w", err)
	}
	fenced := map[string]any{}
	if err := first.BeginTransaction(); err != nil {
		return err
	}
	res := first.ProduceSync(ctx, &kgo.Record{Topic: t.topic, Partition: 0, Value: []byte("fenced")})
	fenced["produce"] = errName(res.FirstErr())
	fenced["end"] = errName(first.EndTransaction(ctx, kgo.TryCommit))
	t.compared["fenced"] = fenced
	if t.compared["described_after_fencing"], err = t.describe(ctx, admin, t.id); err != nil {
		return err
	}
	listed, err := admin.ListTransactions(ctx, nil, nil)
	if err != nil {
		return err
	}
	var ours []string
	for _, l := range listed.Sorted() {
		if strings.HasPrefix(l.TxnID, t.topic) {
			ours = append(ours, strings.TrimPrefix(l.TxnID, t.topic)+" "+l.State)
		}
	}
	t.compared["listed"] = ours
	after, err := t.readAll(ctx, t.topic, kgo.ReadCommitted(), 2*txnRecords+1)
	if err != nil {
		return err
	}
	t.compared["read_committed_after_fencing"] = after["records"]
	return nil
}
