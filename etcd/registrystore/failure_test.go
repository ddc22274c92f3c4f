package registrystore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/registrystore"
	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"github.com/switchyard-go/switchyard/provider/registry"
)

// heartbeat renews id through st every lease/4 until the test ends, as a
// client whose heartbeats reach that replica would.
func heartbeat(t *testing.T, st *registrystore.Store, id string) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(lease / 4)
		defer tick.Stop()
		for {
			hctx, hcancel := context.WithTimeout(ctx, lease/2)
			_ = st.Renew(hctx, id) // failures show as the instance expiring
			hcancel()
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// monotonic watches st's instances until the test ends and records any
// key whose etcd revision is seen going backwards: a duplicated or
// reordered update.
func monotonic(t *testing.T, st *registrystore.Store) (violations func() []string) {
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var bad []string
	seen := map[string]int64{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for snap := range st.Instances().Subscribe(ctx) {
			for id := range snap.State.Keys() {
				md, ok := st.Meta(id)
				if !ok {
					continue
				}
				if md.ModRevision < seen[id] {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%s: revision %d after %d", id, md.ModRevision, seen[id]))
					mu.Unlock()
				}
				seen[id] = md.ModRevision
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), bad...)
	}
}

// TestEtcdKilledAndRestarted kills etcd with SIGKILL for longer than the
// lease and restarts it on the same data directory: the replicas get their
// sessions back, rewrite what their sockets hold, and every mirror equals a
// fresh Get.
func TestEtcdKilledAndRestarted(t *testing.T) {
	t.Parallel()
	p := etcdtest.StartProcess(t, filepath.Join(t.TempDir(), "data"))
	admin := etcdtest.NewClient(t, p.Endpoints)
	a, b := replica(t, p.Endpoints, "/sy"), replica(t, p.Endpoints, "/sy")
	held := register(t, a, reg("api", 80), 1)
	leased := register(t, b, reg("api", 81), registry.NoHolder)
	heartbeat(t, a, leased)
	etcdtest.WaitFor(t, b.Instances(), present(held, leased))
	firstSession := a.Stats().Sink.Lease

	p.Kill(t)
	// Down until the replica's session is lost on its side.
	etcdtest.Until(t, func() string {
		if a.Stats().Sink.Lease != 0 {
			return "replica a still counts on its session"
		}
		return ""
	})
	p.Restart(t)

	after := register(t, b, reg("web", 80), registry.NoHolder)
	etcdtest.WaitFor(t, a.Instances(), present(held, leased, after))
	for name, st := range map[string]*registrystore.Store{"a": a, "b": b} {
		t.Run(name, func(t *testing.T) { equalsFresh(t, st, admin, "/sy") })
	}
	if md, _ := a.Meta(held); md.Lease == firstSession || md.Lease != a.Stats().Sink.Lease {
		t.Errorf("the held instance is under lease %x; the lost session was %x, the new one %x", md.Lease, firstSession, a.Stats().Sink.Lease)
	}
}

// TestReplicaCutOffLongerThanTheLease cuts one replica off from etcd for
// longer than the lease while the others write and etcd is compacted: the
// instances its sockets hold expire for the others, the ones leased by
// heartbeats live on through the other replica, and on reconnection it
// lists again, writes its instances back, and equals a fresh Get; no key's
// revision is ever seen going backwards.
func TestReplicaCutOffLongerThanTheLease(t *testing.T) {
	t.Parallel()
	p := etcdtest.StartProcess(t, filepath.Join(t.TempDir(), "data"))
	admin := etcdtest.NewClient(t, p.Endpoints)
	proxy, err := faultproxy.New(strings.TrimPrefix(p.Endpoints[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	a := replica(t, []string{"http://" + proxy.Addr()}, "/sy")
	b := replica(t, p.Endpoints, "/sy")
	violations := monotonic(t, a)

	held := register(t, a, reg("api", 80), 1)
	leased := register(t, a, reg("api", 81), registry.NoHolder)
	gone := register(t, b, reg("api", 82), registry.NoHolder)
	heartbeat(t, b, leased) // its heartbeats reach b
	heartbeat(t, b, gone)
	etcdtest.WaitFor(t, a.Instances(), present(held, leased, gone))

	proxy.Cut()
	added := register(t, b, reg("web", 80), registry.NoHolder)
	heartbeat(t, b, added)
	if err := b.Deregister(ctxFor(t), gone); err != nil {
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, b.Instances(), absent(held)) // expired with a's session
	etcdtest.Compact(t, admin)
	if _, ok := b.Instances().Load(leased); !ok {
		t.Fatal("the instance leased by heartbeats expired although they reached the other replica")
	}
	proxy.Restore()

	etcdtest.WaitFor(t, b.Instances(), present(held, leased, added))
	equalsFresh(t, a, admin, "/sy")
	equalsFresh(t, b, admin, "/sy")
	if st := a.Stats(); st.Mirror.Relists == 0 || st.Sink.Grants < 2 {
		t.Errorf("replica a: %+v, want a relist and a second session", st)
	}
	if v := violations(); len(v) > 0 {
		t.Errorf("revisions seen going backwards: %v", v)
	}
}
