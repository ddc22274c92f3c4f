package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// The runners of package runner on etcd, in one process: each replica has
// its own client and its own runner group.

// group runs runners until stop or the end of the test: etcdtest.Run, for
// the groups that run until the end of the test, cannot be stopped before.
type group struct {
	g      *runner.Group
	cancel context.CancelFunc
	errc   chan error
	once   sync.Once
}

func runGroup(t *testing.T, runners ...runner.Runner) *group {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &group{g: runner.NewGroup(runner.WithLogger(etcdtest.Logger(t))), cancel: cancel, errc: make(chan error, 1)}
	go func() { g.errc <- g.g.Run(ctx, runners...) }()
	t.Cleanup(func() { g.stop(t) })
	return g
}

func (g *group) stop(t *testing.T) {
	t.Helper()
	g.once.Do(func() {
		g.cancel()
		if err := within(t, g.errc, "the group to return"); err != nil {
			t.Errorf("group: %v", err)
		}
	})
}

// handlers records the handlers (and leader-only runners) that run in this
// process, and checks at every start that any other replica's run of the
// same item belongs to a term that has ended: the engine ended the old
// holder's term before it let another win.
type handlers struct {
	mu         sync.Mutex
	running    map[string]map[string]runner.Term // item -> replica -> term
	violations []string
	count      watchable.Map[string, int] // replica -> runs, to wait on
}

func newHandlers() *handlers { return &handlers{running: map[string]map[string]runner.Term{}} }

func (h *handlers) run(ctx context.Context, replica, item string) {
	term, _ := runner.TermOf(ctx)
	h.mu.Lock()
	for other, t := range h.running[item] {
		select {
		case <-t.Done():
		default:
			h.violations = append(h.violations, fmt.Sprintf("%s started %q (token %d) while %s held it (token %d)", replica, item, term.Token(), other, t.Token()))
		}
	}
	if h.running[item] == nil {
		h.running[item] = map[string]runner.Term{}
	}
	h.running[item][replica] = term
	h.count.Store(replica, h.countLocked(replica))
	h.mu.Unlock()

	<-ctx.Done()

	h.mu.Lock()
	delete(h.running[item], replica)
	h.count.Store(replica, h.countLocked(replica))
	h.mu.Unlock()
}

func (h *handlers) countLocked(replica string) int {
	n := 0
	for _, rs := range h.running {
		if _, ok := rs[replica]; ok {
			n++
		}
	}
	return n
}

func (h *handlers) counts() map[string]int {
	return h.count.LoadAll()
}

func (h *handlers) check(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.violations {
		t.Error(v)
	}
}

// waitCounts waits until cond holds for the runs per replica.
func (h *handlers) waitCounts(t *testing.T, what string, cond func(map[string]int) bool) map[string]int {
	t.Helper()
	ctx := timeout(t, patience)
	for snap := range h.count.Subscribe(ctx) {
		if c := snap.State.Map(); cond(c) {
			return c
		}
	}
	t.Fatalf("timed out waiting for %s; runs per replica: %v", what, h.counts())
	return nil
}

func sum(c map[string]int) int {
	n := 0
	for _, v := range c {
		n += v
	}
	return n
}

// claimWatch follows the claims under prefix in etcd from now on, and
// checks that every claim key is created, never overwritten: each PUT
// creates the key (one holder per item at every revision).
func claimWatch(t *testing.T, c *clientv3.Client, prefix string) (check func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	wch := c.Watch(ctx, prefix+"/claims/", clientv3.WithPrefix())
	var bad []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for resp := range wch {
			for _, ev := range resp.Events {
				if ev.Type == clientv3.EventTypePut && ev.Kv.Version != 1 {
					bad = append(bad, fmt.Sprintf("%s overwritten at revision %d by %s (version %d)", ev.Kv.Key, ev.Kv.ModRevision, ev.Kv.Value, ev.Kv.Version))
				}
			}
		}
	}()
	return func() {
		t.Helper()
		cancel()
		<-done
		for _, b := range bad {
			t.Error(b)
		}
	}
}

func TestLeaderOnlyOnEtcd(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	h := newHandlers()
	leader := func(id string) runner.Runner {
		c := etcdtest.NewClient(t, srv.Endpoints)
		e := cluster.NewElector(c, "/app/leader", cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
		return runner.LeaderOnly(e, runner.Func("writer", func(ctx context.Context) error {
			h.run(ctx, id, "leader")
			return nil
		}))
	}
	a := runGroup(t, leader("a"))
	h.waitCounts(t, "a to lead", func(c map[string]int) bool { return c["a"] == 1 })
	etcdtest.Run(t, leader("b"))

	a.stop(t) // resigns
	h.waitCounts(t, "b to lead after a resigned", func(c map[string]int) bool { return c["b"] == 1 && c["a"] == 0 })
	h.check(t)
}

func TestShardOnEtcd(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	check := claimWatch(t, etcdtest.NewClient(t, srv.Endpoints), "/app/shards")
	items := new(watchable.Map[string, int])
	for i := range 30 {
		items.Store(fmt.Sprintf("item-%02d", i), i)
	}
	h := newHandlers()
	clients := map[string]*clientv3.Client{}
	for _, id := range []string{"a", "b", "c"} {
		// Clients closed by the test, like a crash, must not be closed
		// again by the cleanup: connect without etcdtest.NewClient.
		c, err := clientv3.New(clientv3.Config{Endpoints: srv.Endpoints, Logger: zapNop})
		if err != nil {
			t.Fatal(err)
		}
		clients[id] = c
		t.Cleanup(func() { c.Close() }) // after the group stops: cleanups run last first
		e := cluster.NewShardEngine(c, "/app/shards", cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
		s := runner.Shard("shard", items.View(), func(k string) string { return k }, e,
			func(ctx context.Context, item string) error { h.run(ctx, id, item); return nil },
			runner.WithLogger(quiet), runner.WithBalance(runner.Balance{Step: 10 * time.Millisecond}))
		etcdtest.Run(t, s)
	}
	before := h.waitCounts(t, "the three to share 30 items", func(c map[string]int) bool {
		return sum(c) == 30 && c["a"] <= 11 && c["b"] <= 11 && c["c"] <= 11
	})

	// c's process loses etcd as in a crash: its client is gone, its lease
	// expires after the TTL, and the others take its items over.
	clients["c"].Close()
	after := h.waitCounts(t, "a and b to take everything over", func(c map[string]int) bool {
		return c["a"]+c["b"] == 30 && c["c"] == 0
	})
	if after["a"] > 16 || after["b"] > 16 {
		t.Errorf("after the takeover: %v, above the bound 16", after)
	}
	t.Logf("before %v, after c crashed %v", before, after)
	h.check(t)
	check()
}
