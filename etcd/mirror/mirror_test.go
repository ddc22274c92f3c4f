package mirror_test

import (
	"context"
	"errors"
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

	"github.com/switchyard-go/switchyard/etcd/codec"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/mirror"
	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type point struct {
	X, Y int
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdtest.WaitTimeout)
	t.Cleanup(cancel)
	return ctx
}

func put(t *testing.T, c *clientv3.Client, key, val string) int64 {
	t.Helper()
	resp, err := c.Put(ctxFor(t), key, val)
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return resp.Header.Revision
}

func del(t *testing.T, c *clientv3.Client, key string) int64 {
	t.Helper()
	resp, err := c.Delete(ctxFor(t), key)
	if err != nil {
		t.Fatalf("delete %s: %v", key, err)
	}
	return resp.Header.Revision
}

func newPoints(c *clientv3.Client, opts ...mirror.Option) *mirror.Mirror[string, point] {
	return mirror.New[string, point](c, "/points/", mirror.StringKey, opts...)
}

// has is a WaitFor condition: the state is exactly want.
func has[K comparable, V any](want map[K]V) func(watchable.State[K, V]) string {
	return func(s watchable.State[K, V]) string {
		if d := cmp.Diff(want, s.Map()); d != "" {
			return "map (-want +got):\n" + d
		}
		return ""
	}
}

// fresh is the decoded contents of the prefix, read now.
func fresh(t *testing.T, c *clientv3.Client, prefix string) map[string]point {
	t.Helper()
	resp, err := c.Get(ctxFor(t), prefix, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]point{}
	for _, kv := range resp.Kvs {
		p, err := codec.JSON[point]().Decode(kv.Value)
		if err == nil {
			out[strings.TrimPrefix(string(kv.Key), prefix)] = p
		}
	}
	return out
}

func TestListThenWatch(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	put(t, c, "/points/a", `{"X":1}`)
	put(t, c, "/points/b", `{"X":2}`)
	put(t, c, "/other/c", `{"X":3}`)

	m := newPoints(c)
	if got := m.Output().PendingInitializers(); len(got) != 1 || got[0] != "mirror /points/" {
		t.Fatalf("pending initializers %q, want the mirror's", got)
	}
	etcdtest.Run(t, m)
	select {
	case <-m.Ready():
	case <-time.After(etcdtest.WaitTimeout):
		t.Fatal("not ready")
	}
	if d := cmp.Diff(map[string]point{"a": {X: 1}, "b": {X: 2}}, m.Output().LoadAll()); d != "" {
		t.Fatalf("after the list (-want +got):\n%s", d)
	}

	put(t, c, "/points/c", `{"X":3,"Y":4}`)
	del(t, c, "/points/a")
	rev := put(t, c, "/points/b", `{"X":5}`)
	etcdtest.WaitFor(t, m.Output(), has(map[string]point{"b": {X: 5}, "c": {X: 3, Y: 4}}))
	if m.Revision() < rev {
		t.Errorf("Revision %d, want at least %d", m.Revision(), rev)
	}
	md, ok := m.Meta("b")
	if !ok || md.Key != "/points/b" || md.ModRevision != rev || md.Version != 2 || md.Lease != 0 {
		t.Errorf("Meta(b) = %+v, %v; want key /points/b at revision %d, version 2", md, ok, rev)
	}
	if _, ok := m.Meta("a"); ok {
		t.Error("Meta(a) after its deletion")
	}
	if st := m.Stats(); st.Relists != 0 || st.Events != 3 || st.DecodeErrors != 0 {
		t.Errorf("stats %+v, want 3 events, no relist", st)
	}
}

// TestTransactionIsOneBatch checks that the writes of one etcd transaction
// reach subscribers together, never half of them.
func TestTransactionIsOneBatch(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	put(t, c, "/points/gone", `{}`)
	m := newPoints(c)
	etcdtest.Run(t, m)
	<-m.Ready()

	ctx := ctxFor(t)
	sub := m.Output().Subscribe(ctx)
	first := <-sub
	if first.State.Len() != 1 {
		t.Fatalf("first snapshot %v", first.State.Map())
	}
	if _, err := c.Txn(ctx).Then(
		clientv3.OpPut("/points/1", `{"X":1}`),
		clientv3.OpPut("/points/2", `{"X":2}`),
		clientv3.OpDelete("/points/gone"),
	).Commit(); err != nil {
		t.Fatal(err)
	}
	snap := <-sub
	if d := cmp.Diff(map[string]point{"1": {X: 1}, "2": {X: 2}}, snap.State.Map()); d != "" {
		t.Fatalf("the snapshot after the transaction (-want +got):\n%s", d)
	}
	if len(snap.Updates) != 3 {
		t.Errorf("updates %+v, want 3", snap.Updates)
	}
}

// TestDecodeErrors checks that an entry that does not decode is left out
// and reported under its key, while the rest is applied; and that the
// report goes once the key decodes again or is deleted.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	put(t, c, "/points/bad-at-list", `{"X":`)
	put(t, c, "/points/ok", `{"X":1}`)
	keyFn := func(k string) (string, error) {
		if strings.HasPrefix(k, "refused") {
			return "", errors.New("not a point name")
		}
		return k, nil
	}
	m := mirror.New[string, point](c, "/points/", keyFn, mirror.WithName("points"))
	g := etcdtest.Run(t, m)
	<-m.Ready()

	problems := func(want ...string) {
		t.Helper()
		etcdtest.WaitFor(t, g.Status(), func(watchable.State[string, runner.Status]) string {
			got := etcdtest.Problems(g, "points")
			keys := slices.Sorted(maps.Keys(got))
			if d := cmp.Diff(want, keys, cmpopts.EquateEmpty()); d != "" {
				return fmt.Sprintf("problems %v (-want +got keys):\n%s", got, d)
			}
			return ""
		})
	}
	problems("/points/bad-at-list")
	if d := cmp.Diff(map[string]point{"ok": {X: 1}}, m.Output().LoadAll()); d != "" {
		t.Fatalf("after the list (-want +got):\n%s", d)
	}

	if _, err := c.Txn(ctxFor(t)).Then(
		clientv3.OpPut("/points/ok", `not json`),
		clientv3.OpPut("/points/refused-1", `{"X":9}`),
		clientv3.OpPut("/points/new", `{"X":2}`),
	).Commit(); err != nil {
		t.Fatal(err)
	}
	etcdtest.WaitFor(t, m.Output(), has(map[string]point{"new": {X: 2}}))
	problems("/points/bad-at-list", "/points/ok", "/points/refused-1")
	if got := m.Stats().DecodeErrors; got != 3 {
		t.Errorf("decode errors %d, want 3", got)
	}

	put(t, c, "/points/ok", `{"X":3}`)
	del(t, c, "/points/bad-at-list")
	del(t, c, "/points/refused-1")
	etcdtest.WaitFor(t, m.Output(), has(map[string]point{"new": {X: 2}, "ok": {X: 3}}))
	problems()
}

// TestWaitRevision checks read-your-writes: once WaitRevision returns, the
// map has the write, also for a revision no event of the prefix brings.
func TestWaitRevision(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	m := newPoints(c)
	etcdtest.Run(t, m)
	<-m.Ready()

	for i := range 20 {
		rev := put(t, c, "/points/p", fmt.Sprintf(`{"X":%d}`, i))
		if err := m.WaitRevision(ctxFor(t), rev); err != nil {
			t.Fatal(err)
		}
		if got, _ := m.Output().Load("p"); got.X != i {
			t.Fatalf("after WaitRevision(%d): p = %+v, want X %d", rev, got, i)
		}
	}
	// A write outside the prefix: only a progress notification tells the
	// mirror it has nothing to miss up to that revision.
	rev := put(t, c, "/elsewhere", "x")
	if err := m.WaitRevision(ctxFor(t), rev); err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := m.WaitRevision(short, rev+1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitRevision of a future revision: %v, want a deadline", err)
	}
}

// TestRelistAfterCompaction cuts the mirror off from etcd while keys change
// and the store is compacted past the mirror's revision: on reconnection
// the mirror lists again, and its subscribers see only the net difference.
func TestRelistAfterCompaction(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	admin := etcdtest.NewClient(t, srv.Endpoints)
	proxy, err := faultproxy.New(strings.TrimPrefix(srv.Endpoints[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	c := etcdtest.NewClient(t, []string{"http://" + proxy.Addr()})

	put(t, admin, "/points/same", `{"X":1}`)
	put(t, admin, "/points/changed", `{"X":1}`)
	put(t, admin, "/points/deleted", `{"X":1}`)
	m := newPoints(c, mirror.WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	etcdtest.Run(t, m)
	<-m.Ready()
	ctx := ctxFor(t)
	sub := m.Output().Subscribe(ctx)
	<-sub
	before := m.Revision()

	proxy.Cut()
	put(t, admin, "/points/changed", `{"X":2}`)
	del(t, admin, "/points/deleted")
	put(t, admin, "/points/transient", `{"X":1}`)
	del(t, admin, "/points/transient")
	put(t, admin, "/points/added", `{"X":1}`)
	// A key rewritten with the same value: a new revision, no difference.
	put(t, admin, "/points/same", `{"X":1}`)
	if rev := etcdtest.Compact(t, admin); rev <= before {
		t.Fatalf("compacted to %d, not past the mirror's %d", rev, before)
	}
	proxy.Restore()

	want := fresh(t, admin, "/points/")
	snap := <-sub
	if d := cmp.Diff(want, snap.State.Map()); d != "" {
		t.Fatalf("after the relist (-fresh +mirror):\n%s", d)
	}
	got := map[string]bool{}
	for _, u := range snap.Updates {
		got[u.Key] = u.Delete
	}
	if d := cmp.Diff(map[string]bool{"changed": false, "deleted": true, "added": false}, got); d != "" {
		t.Errorf("updates of the relist, key: deleted (-want +got):\n%s", d)
	}
	if st := m.Stats(); st.Relists != 1 {
		t.Errorf("stats %+v, want one relist", st)
	}
}

// TestRunTwice checks that a mirror runs once.
func TestRunTwice(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	m := newPoints(c)
	etcdtest.Run(t, m)
	<-m.Ready()
	if err := m.Run(context.Background()); !errors.Is(err, mirror.ErrAlreadyRun) {
		t.Fatalf("second Run: %v, want ErrAlreadyRun", err)
	}
}

func TestWithCodecOfAnotherType(t *testing.T) {
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "mirror.WithCodec") || !strings.Contains(msg, "mirror_test.point") {
			t.Errorf("panic %q, want one naming the option and the mirror's type", msg)
		}
	}()
	newPoints(nil, mirror.WithCodec(codec.String()))
}
