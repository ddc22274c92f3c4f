package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// A replica cut off from etcd for longer than the TTL: the tests put a
// fault proxy between it and etcd, and partition it (Pause: packets vanish,
// nothing is closed, as in a real partition).

// proxied returns a fault proxy to srv and a client that goes through it.
func proxied(t *testing.T, srv *etcdtest.Embedded) (*faultproxy.Proxy, *clientv3.Client) {
	t.Helper()
	p, err := faultproxy.New(strings.TrimPrefix(srv.Endpoints[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, etcdtest.NewClient(t, []string{"http://" + p.Addr()})
}

func TestCutOffLeaderStopsBeforeAnotherLeads(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	proxy, ca := proxied(t, srv)
	h := newHandlers()
	leader := func(c *clientv3.Client, id string) runner.Runner {
		e := cluster.NewElector(c, "/app/leader", cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
		return runner.LeaderOnly(e, runner.Func("writer", func(ctx context.Context) error {
			h.run(ctx, id, "leader")
			return nil
		}), runner.WithBackoff(50*time.Millisecond, 200*time.Millisecond), runner.WithLogger(quiet))
	}
	etcdtest.Run(t, leader(ca, "a"))
	h.waitCounts(t, "a to lead", func(c map[string]int) bool { return c["a"] == 1 })
	etcdtest.Run(t, leader(etcdtest.NewClient(t, srv.Endpoints), "b"))

	proxy.Pause()
	// a's runner is cancelled, and b leads: h checks that a's term had
	// ended when b started.
	h.waitCounts(t, "b to lead while a is cut off", func(c map[string]int) bool { return c["a"] == 0 && c["b"] == 1 })

	proxy.Restore()
	h.check(t)
}

func TestCutOffReplicaLosesItsClaimsAndRejoins(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	check := claimWatch(t, etcdtest.NewClient(t, srv.Endpoints), "/app/shards")
	proxy, cc := proxied(t, srv)
	items := new(watchable.Map[string, int])
	for i := range 30 {
		items.Store(fmt.Sprintf("item-%02d", i), i)
	}
	h := newHandlers()
	shards := map[string]*runner.Sharder[string, int]{}
	for _, id := range []string{"a", "b", "c"} {
		c := cc
		if id != "c" {
			c = etcdtest.NewClient(t, srv.Endpoints)
		}
		e := cluster.NewShardEngine(c, "/app/shards", cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
		s := runner.Shard("shard", items.View(), func(k string) string { return k }, e,
			func(ctx context.Context, item string) error { h.run(ctx, id, item); return nil },
			runner.WithLogger(quiet), runner.WithBalance(runner.Balance{Step: 10 * time.Millisecond}),
			runner.WithBackoff(50*time.Millisecond, 500*time.Millisecond))
		shards[id] = s
		etcdtest.Run(t, s)
	}
	h.waitCounts(t, "the three to share 30 items", func(c map[string]int) bool {
		return sum(c) == 30 && c["a"] <= 11 && c["b"] <= 11 && c["c"] <= 11 && c["c"] > 0
	})

	proxy.Pause()
	during := h.waitCounts(t, "c's handlers cancelled and a, b holding everything", func(c map[string]int) bool {
		return c["c"] == 0 && c["a"]+c["b"] == 30
	})
	if during["a"] > 16 || during["b"] > 16 {
		t.Errorf("while c is cut off: %v, above the bound 16", during)
	}
	if shards["c"].Owned().Len() != 0 {
		t.Errorf("c's Owned() while cut off: %v", shards["c"].Owned().LoadAll())
	}

	proxy.Restore()
	// c joins again; a and b are above the cap of 11 with three members and
	// shed, one item per round, and c claims what they release.
	after := h.waitCounts(t, "c to rejoin and the three to share again", func(c map[string]int) bool {
		return sum(c) == 30 && c["a"] <= 11 && c["b"] <= 11 && c["c"] <= 11
	})
	if st := shards["c"].Stats(); st.Joins < 2 || st.Lost == 0 {
		t.Errorf("c's Stats() = %+v, want a second join and claims lost", st)
	}
	t.Logf("while c was cut off %v; after it came back %v", during, after)
	h.check(t)
	check()
}

// TestSessionEndsBeforeItsLeaseExpires checks the timing the one-holder
// rule rests on: a process cut off from etcd stops trusting its session
// before etcd expires the lease (and so before another process can take
// over what the lease held).
func TestSessionEndsBeforeItsLeaseExpires(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	proxy, cc := proxied(t, srv)
	direct := etcdtest.NewClient(t, srv.Endpoints)
	e := cluster.NewShardEngine(cc, "/s", cluster.WithIdentity("a"), cluster.WithTTL(3*time.Second), cluster.WithLogger(quiet))
	m, err := e.Join(timeout(t, patience))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Leave(context.Background())

	ctx := timeout(t, patience)
	deleted := make(chan time.Time, 1)
	wch := direct.Watch(ctx, "/s/members/a", clientv3.WithFilterPut())
	go func() {
		for resp := range wch {
			if len(resp.Events) > 0 {
				deleted <- time.Now()
				return
			}
		}
	}()

	proxy.Pause()
	cutAt := time.Now()
	within(t, m.Done(), "the membership to end")
	lostAt := time.Now()
	expiredAt := within(t, deleted, "etcd to expire the lease")
	t.Logf("cut at 0; session lost at %v, lease expired in etcd at %v", lostAt.Sub(cutAt), expiredAt.Sub(cutAt))
	if !lostAt.Before(expiredAt) {
		t.Errorf("the session was lost at %v, after etcd expired its lease at %v", lostAt.Sub(cutAt), expiredAt.Sub(cutAt))
	}
	proxy.Restore()
}
