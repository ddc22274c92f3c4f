package sink_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/mirror"
	"github.com/switchyard-go/switchyard/etcd/sink"
	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const prefix = "/routes/"

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdtest.WaitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func identity(k string) string { return k }

// observe runs a mirror of the prefix, through which tests see what is in
// etcd.
func observe(t *testing.T, c *clientv3.Client) *mirror.Mirror[string, int] {
	t.Helper()
	m := mirror.New[string, int](c, prefix, mirror.StringKey, mirror.WithName("observer"))
	etcdtest.Run(t, m)
	<-m.Ready()
	return m
}

func is(want map[string]int) func(watchable.State[string, int]) string {
	return func(s watchable.State[string, int]) string {
		if d := cmp.Diff(want, s.Map(), cmpopts.EquateEmpty()); d != "" {
			return "etcd (-want +got):\n" + d
		}
		return ""
	}
}

// runSink runs s until the test ends or stop is called; stop returns once
// Run has.
func runSink(t *testing.T, s *sink.Sink[string, int]) (g *runner.Group, stop func()) {
	t.Helper()
	g = runner.NewGroup(runner.WithLogger(etcdtest.Logger(t)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, s) }()
	var err error
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
		}
		if err != nil {
			t.Errorf("sink: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case <-s.Ready():
	case <-time.After(etcdtest.WaitTimeout):
		t.Fatal("sink not ready")
	}
	return g, stop
}

func TestWritesFollowsAndRevokes(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	seen := observe(t, etcdtest.NewClient(t, srv.Endpoints))

	var in watchable.Map[string, int]
	in.Store("a", 1)
	in.Store("b", 2)
	s := sink.New(c, prefix, in.View(), identity)
	_, stop := runSink(t, s)
	etcdtest.WaitFor(t, seen.Output(), is(map[string]int{"a": 1, "b": 2}))
	lease := s.Lease()
	if md, _ := seen.Meta("a"); lease == 0 || md.Lease != lease {
		t.Fatalf("key a under lease %x, the sink's is %x", md.Lease, lease)
	}

	in.Batch(func(b *watchable.Batch[string, int]) {
		b.Store("a", 10)
		b.Delete("b")
		b.Store("c", 3)
	})
	rev, err := s.Sync(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := seen.WaitRevision(ctxFor(t), rev); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]int{"a": 10, "c": 3}, seen.Output().LoadAll()); d != "" {
		t.Fatalf("after Sync and WaitRevision (-want +got):\n%s", d)
	}

	stop()
	// Revoked: gone at once, not one TTL later.
	resp, err := c.Get(ctxFor(t), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 0 {
		t.Fatalf("after the sink stopped: %d keys (%v), want none", resp.Count, err)
	}
}

// TestFenced checks that the sink changes only keys that are absent or its
// own: a key another writer holds is left alone and reported, and written
// once the other writer lets go and the entry changes.
func TestFenced(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	other := etcdtest.NewClient(t, srv.Endpoints)
	seen := observe(t, other)

	grant, err := other.Grant(ctxFor(t), 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Put(ctxFor(t), prefix+"theirs", "100", clientv3.WithLease(grant.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Put(ctxFor(t), prefix+"unleased", "200"); err != nil {
		t.Fatal(err)
	}
	var in watchable.Map[string, int]
	in.Store("theirs", 1)
	in.Store("unleased", 2)
	in.Store("mine", 3)
	s := sink.New(c, prefix, in.View(), identity, sink.WithName("routes"))
	g, _ := runSink(t, s)
	etcdtest.WaitFor(t, seen.Output(), is(map[string]int{"theirs": 100, "unleased": 200, "mine": 3}))
	problems := func(want ...string) {
		t.Helper()
		etcdtest.WaitFor(t, g.Status(), func(watchable.State[string, runner.Status]) string {
			got := etcdtest.Problems(g, "routes")
			if d := cmp.Diff(want, slices.Sorted(maps.Keys(got)), cmpopts.EquateEmpty()); d != "" {
				return fmt.Sprintf("problems %v (-want +got):\n%s", got, d)
			}
			return ""
		})
	}
	problems(prefix+"theirs", prefix+"unleased")
	if st := s.Stats(); st.Refused != 2 {
		t.Errorf("stats %+v, want 2 refused", st)
	}

	// Deleting the entry deletes nothing of theirs.
	in.Delete("unleased")
	if _, err := s.Sync(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
	// Once they let go, the next change is written.
	if _, err := other.Revoke(ctxFor(t), grant.ID); err != nil {
		t.Fatal(err)
	}
	in.Store("theirs", 4)
	etcdtest.WaitFor(t, seen.Output(), is(map[string]int{"theirs": 4, "unleased": 200, "mine": 3}))
	problems()
}

// TestLeaseLost revokes the sink's lease behind its back: its keys vanish,
// and it grants another lease and writes everything again.
func TestLeaseLost(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	admin := etcdtest.NewClient(t, srv.Endpoints)
	seen := observe(t, admin)
	var in watchable.Map[string, int]
	for i := range 150 { // more than one transaction
		in.Store(fmt.Sprint(i), i)
	}
	s := sink.New(c, prefix, in.View(), identity, sink.WithTTL(2*time.Second))
	runSink(t, s)
	want := in.LoadAll()
	etcdtest.WaitFor(t, seen.Output(), is(want))
	first := s.Lease()

	if _, err := admin.Revoke(ctxFor(t), first); err != nil {
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, seen.Output(), func(st watchable.State[string, int]) string {
		if d := cmp.Diff(want, st.Map()); d != "" {
			return "not rewritten (-want +got):\n" + d
		}
		if md, _ := seen.Meta("0"); md.Lease == first || md.Lease != s.Lease() {
			return fmt.Sprintf("key 0 under lease %x; the revoked one was %x, the sink's is %x", md.Lease, first, s.Lease())
		}
		return ""
	})
	if st := s.Stats(); st.Grants != 2 || st.Lease == first || st.Lease == 0 {
		t.Errorf("stats %+v, want a second lease", st)
	}
}

// TestCutLongerThanTTL cuts the sink off from etcd for longer than its
// TTL while its map changes: its keys expire for everyone, and when it is
// back it writes the map as it is now, under a new lease.
func TestCutLongerThanTTL(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	proxy, err := faultproxy.New(strings.TrimPrefix(srv.Endpoints[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	c := etcdtest.NewClient(t, []string{"http://" + proxy.Addr()})
	seen := observe(t, etcdtest.NewClient(t, srv.Endpoints))

	var in watchable.Map[string, int]
	in.Store("kept", 1)
	in.Store("deleted", 2)
	s := sink.New(c, prefix, in.View(), identity, sink.WithTTL(2*time.Second), sink.WithBackoff(10*time.Millisecond, 200*time.Millisecond))
	runSink(t, s)
	etcdtest.WaitFor(t, seen.Output(), is(map[string]int{"kept": 1, "deleted": 2}))

	proxy.Cut()
	in.Delete("deleted")
	in.Store("added", 3)
	etcdtest.WaitFor(t, seen.Output(), is(map[string]int{})) // expired
	proxy.Restore()
	etcdtest.WaitFor(t, seen.Output(), is(map[string]int{"kept": 1, "added": 3}))
	if got := s.Stats().Grants; got != 2 {
		t.Errorf("%d leases granted, want 2", got)
	}
}

func TestEmptyMapIsReady(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	var in watchable.Map[string, int]
	s := sink.New(c, prefix, in.View(), identity)
	runSink(t, s) // fails unless Ready closes
	if _, err := s.Sync(ctxFor(t)); err != nil {
		t.Fatal(err)
	}
}
