package etcdtest_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

func put(t *testing.T, c *clientv3.Client, key, val string) int64 {
	t.Helper()
	resp, err := c.Put(ctx(t, 10*time.Second), key, val)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return resp.Header.Revision
}

func get(t *testing.T, c *clientv3.Client, key string) string {
	t.Helper()
	resp, err := c.Get(ctx(t, 10*time.Second), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	if len(resp.Kvs) != 1 {
		t.Fatalf("get %s: %d keys", key, len(resp.Kvs))
	}
	return string(resp.Kvs[0].Value)
}

func TestEmbeddedServesAndCompacts(t *testing.T) {
	t.Parallel()
	s := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, s.Endpoints)

	old := put(t, c, "/k", "1")
	put(t, c, "/k", "2")
	if got := get(t, c, "/k"); got != "2" {
		t.Fatalf("get /k = %q, want 2", got)
	}

	rev := etcdtest.Compact(t, c)
	if rev <= old {
		t.Fatalf("compacted to %d, want past %d", rev, old)
	}
	if _, err := c.Get(ctx(t, 10*time.Second), "/k", clientv3.WithRev(old)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("get at compacted revision %d: %v, want %v", old, err, rpctypes.ErrCompacted)
	}
	wctx, cancel := context.WithCancel(ctx(t, 10*time.Second))
	defer cancel()
	w := <-c.Watch(wctx, "/k", clientv3.WithRev(old))
	if w.CompactRevision != rev {
		t.Fatalf("watch from compacted revision %d: compact revision %d (err %v), want %d", old, w.CompactRevision, w.Err(), rev)
	}
}

func TestEmbeddedServersAreIndependent(t *testing.T) {
	t.Parallel()
	a, b := etcdtest.StartEmbedded(t), etcdtest.StartEmbedded(t)
	if a.Endpoints[0] == b.Endpoints[0] {
		t.Fatalf("two servers on one endpoint %s", a.Endpoints[0])
	}
	put(t, etcdtest.NewClient(t, a.Endpoints), "/only-a", "x")
	resp, err := etcdtest.NewClient(t, b.Endpoints).Get(ctx(t, 10*time.Second), "/only-a")
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("get on the other server: %v keys, %v; want none", len(resp.Kvs), err)
	}
}

// The cluster tests cut a replica off from etcd through a fault proxy; this
// shows a client rides through a cut.
func TestClientThroughFaultProxy(t *testing.T) {
	t.Parallel()
	s := etcdtest.StartEmbedded(t)
	p, err := faultproxy.New(s.Endpoints[0][len("http://"):])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	c := etcdtest.NewClient(t, []string{"http://" + p.Addr()})
	put(t, c, "/k", "before")

	p.Cut()
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.Put(short, "/k", "during"); err == nil {
		t.Fatal("put through a cut proxy succeeded")
	}

	p.Restore()
	put(t, c, "/k", "after")
	if got := get(t, c, "/k"); got != "after" {
		t.Fatalf("get /k = %q, want after", got)
	}
}

func TestProcessSurvivesKillAndRestart(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	p := etcdtest.StartProcess(t, dir)
	if p.DataDir != dir || !p.Running() {
		t.Fatalf("process: data dir %s, running %v", p.DataDir, p.Running())
	}
	c := etcdtest.NewClient(t, p.Endpoints)
	rev := put(t, c, "/k", "kept")

	p.Kill(t)
	if p.Running() {
		t.Fatal("running after Kill")
	}
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := c.Get(short, "/k"); err == nil {
		t.Fatal("get from a killed server succeeded")
	}

	endpoints := p.Endpoints
	p.Restart(t)
	if p.Endpoints[0] != endpoints[0] || !p.Running() {
		t.Fatalf("after restart: endpoints %v (were %v), running %v", p.Endpoints, endpoints, p.Running())
	}
	// The same client reconnects, and the write acknowledged before the kill
	// is there, at its revision.
	resp, err := c.Get(ctx(t, 10*time.Second), "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "kept" || resp.Kvs[0].ModRevision != rev {
		t.Fatalf("get after restart: %v, %v; want kept at revision %d", resp, err, rev)
	}

	// Restart kills a running server first.
	p.Restart(t)
	if got := get(t, c, "/k"); got != "kept" {
		t.Fatalf("get after second restart = %q", got)
	}
}
