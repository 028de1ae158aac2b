package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// consumers is a group's members, each a kgo client polling in its own goroutine: a poll's
// records are counted by the round (counted, called under mu), committed with CommitRecords, and
// only then may the group rebalance. Members poll only while fewer than limit records were
// processed, so that a round moves through its phases one at a time.
type consumers struct {
	seeds        []string
	topic        string
	group        string
	clientPrefix string
	// The round's own client options (session timeouts, hooks, the server-side assignor).
	opts []kgo.Opt
	// Whether a member lets the group rebalance while it waits for the limit to rise (the
	// consumer protocol's members must, to move through their phases).
	rebalanceWhileGated bool
	counted             func(m *member, records []*kgo.Record)

	mu       sync.Mutex
	total    int
	limit    int
	failures []string
	members  []*member
}

// member is one consumer of the group, polling in its own goroutine.
type member struct {
	name  string
	cl    *kgo.Client
	stop  chan struct{}
	done  chan struct{}
	owned map[int32]bool // guarded by consumers.mu
	calls map[string]int // callback name → times called, guarded by consumers.mu
	gone  bool           // closed: it left the group
}

func (c *consumers) fail(format string, args ...any) {
	c.mu.Lock()
	c.failures = append(c.failures, fmt.Sprintf(format, args...))
	c.mu.Unlock()
}

func (c *consumers) newMember(name string) (*member, error) {
	m := &member{name: name, stop: make(chan struct{}), done: make(chan struct{}), owned: map[int32]bool{}, calls: map[string]int{}}
	note := func(call string, parts map[string][]int32, owned bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		m.calls[call]++
		for _, p := range parts[c.topic] {
			if owned {
				m.owned[p] = true
			} else {
				delete(m.owned, p)
			}
		}
	}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(c.seeds...),
		kgo.ClientID(c.clientPrefix + name),
		kgo.ConsumerGroup(c.group),
		kgo.ConsumeTopics(c.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			note("assigned", a, true)
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			note("revoked", a, false)
		}),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, a map[string][]int32) {
			note("lost", a, false)
		}),
	}, c.opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	m.cl = cl
	c.mu.Lock()
	c.members = append(c.members, m)
	c.mu.Unlock()
	go c.poll(m)
	return m, nil
}

// poll processes records until stopped: each poll's records are counted, committed with
// CommitRecords, and only then may the group rebalance.
func (c *consumers) poll(m *member) {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		c.mu.Lock()
		gated := c.total >= c.limit
		c.mu.Unlock()
		if gated {
			if c.rebalanceWhileGated {
				m.cl.AllowRebalance()
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		fetches := m.cl.PollRecords(ctx, 4)
		cancel()
		if fetches.IsClientClosed() {
			return
		}
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
				c.fail("%s: fetching %s/%d: %v", m.name, t, p, err)
			}
		})
		records := fetches.Records()
		c.mu.Lock()
		c.total += len(records)
		c.counted(m, records)
		c.mu.Unlock()
		if len(records) > 0 {
			cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := m.cl.CommitRecords(cctx, records...); err != nil {
				c.fail("%s: committing %d records: %v", m.name, len(records), err)
			}
			ccancel()
		}
		m.cl.AllowRebalance()
	}
}

func (c *consumers) setLimit(n int) {
	c.mu.Lock()
	c.limit = n
	c.mu.Unlock()
}

func (c *consumers) stopPolling(m *member) {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// leave stops m's polling and closes its client, which leaves the group.
func (c *consumers) leave(m *member) {
	c.stopPolling(m)
	if !m.gone {
		m.gone = true
		m.cl.Close()
	}
}
