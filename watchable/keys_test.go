package watchable_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/switchyard-go/switchyard/watchable"
)

func TestSubscribeKeysSeesOnlyItsKeys(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	m.Store("b", 2)
	m.Store("c", 3)
	sub := m.View().SubscribeKeys(t.Context(), "a", "z", "a")

	first := next(t, sub)
	if diff := cmp.Diff(map[string]int{"a": 1}, first.State.Map()); diff != "" {
		t.Fatalf("first State (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]watchable.Update[string, int]{{Key: "a", Value: 1}}, first.Updates); diff != "" {
		t.Fatalf("first Updates (-want +got):\n%s", diff)
	}

	m.Store("b", 20)
	m.Delete("c")
	nothingPending(t, sub)

	m.Store("z", 26)
	m.Store("a", 10)
	m.Store("a", 11) // coalesces with the previous Store
	got := next(t, sub)
	sort.Slice(got.Updates, func(i, j int) bool { return got.Updates[i].Key < got.Updates[j].Key })
	want := []watchable.Update[string, int]{{Key: "a", Value: 11}, {Key: "z", Value: 26}}
	if diff := cmp.Diff(want, got.Updates); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
	if got.Revision != m.Revision() {
		t.Fatalf("Revision = %d; want the map's, %d", got.Revision, m.Revision())
	}

	m.Delete("a")
	got = next(t, sub)
	if diff := cmp.Diff([]watchable.Update[string, int]{{Key: "a", Delete: true, Value: 11}}, got.Updates); diff != "" {
		t.Fatalf("delete Updates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"z": 26}, got.State.Map()); diff != "" {
		t.Fatalf("State after delete (-want +got):\n%s", diff)
	}
	if n := m.Subscribers(); n != 1 {
		t.Fatalf("Subscribers = %d; want 1", n)
	}
	m.Close()
	closed(t, sub)
}

func TestSubscribeKeysEndsWithItsContext(t *testing.T) {
	var m watchable.Map[int, int]
	ctx, cancel := context.WithCancel(t.Context())
	sub := m.SubscribeKeys(ctx, 1)
	next(t, sub)
	other := m.SubscribeKeys(t.Context(), 1)
	next(t, other)
	cancel()
	closed(t, sub)
	m.Store(1, 1)
	if got := next(t, other); len(got.Updates) != 1 {
		t.Fatalf("the other subscriber to the same key got %+v", got)
	}
	if n := m.Subscribers(); n != 1 {
		t.Fatalf("Subscribers = %d after one of two ended; want 1", n)
	}
}

// TestSubscribeKeysManyOnOneKey keeps the first subscriber to a key in the
// index's slot and the others beside it: whichever of them ends, in any
// order, the rest keep receiving, and the key's entry goes with the last.
func TestSubscribeKeysManyOnOneKey(t *testing.T) {
	for _, order := range [][]int{{0, 1, 2}, {1, 0, 2}, {2, 1, 0}, {1, 2, 0}} {
		t.Run(fmt.Sprint(order), func(t *testing.T) {
			var m watchable.Map[int, int]
			defer m.Close()
			var subs []<-chan watchable.Snapshot[int, int]
			var cancels []context.CancelFunc
			for range 3 {
				ctx, cancel := context.WithCancel(t.Context())
				subs, cancels = append(subs, m.SubscribeKeys(ctx, 7, 8)), append(cancels, cancel)
				next(t, subs[len(subs)-1])
			}
			ended := map[int]bool{}
			for round, i := range order {
				cancels[i]()
				closed(t, subs[i])
				ended[i] = true
				m.Store(7, round)
				for j := range subs {
					if ended[j] {
						continue
					}
					got := next(t, subs[j])
					if diff := cmp.Diff([]watchable.Update[int, int]{{Key: 7, Value: round}}, got.Updates); diff != "" {
						t.Fatalf("round %d, subscriber %d (-want +got):\n%s", round, j, diff)
					}
				}
				if n, want := m.Subscribers(), 2-round; n != want {
					t.Fatalf("Subscribers = %d; want %d", n, want)
				}
			}
			// The index is empty now: a new subscriber starts it again.
			again := m.SubscribeKeys(t.Context(), 8)
			next(t, again)
			m.Store(8, 1)
			if got := next(t, again); len(got.Updates) != 1 {
				t.Fatalf("a new subscriber got %+v", got)
			}
		})
	}
}

// node is a pod-like value placed on a node; its Equal ignores Seen, like a
// heartbeat, but not Node.
type node struct {
	Node string
	Seen int
}

func (n node) Equal(o node) bool { return n.Node == o.Node }

func TestPartitionsMoveBetweenPartitions(t *testing.T) {
	var m watchable.Map[string, node]
	m.Store("p1", node{Node: "n1"})
	m.Store("p2", node{Node: "n2"})
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ string, v node) string { return v.Node })
	n1 := parts.Subscribe(t.Context(), "n1")
	n2 := parts.Subscribe(t.Context(), "n2")
	n3 := parts.Subscribe(t.Context(), "n3") // no entries yet
	if got := next(t, n1).State.Map(); !cmp.Equal(got, map[string]node{"p1": {Node: "n1"}}) {
		t.Fatalf("n1's first State = %v", got)
	}
	next(t, n2)
	if got := next(t, n3); got.State.Len() != 0 || len(got.Updates) != 0 {
		t.Fatalf("n3's first snapshot = %+v; want empty", got)
	}
	sizes := parts.Sizes()
	if diff := cmp.Diff(map[string]int{"n1": 1, "n2": 1}, sizes.LoadAll()); diff != "" {
		t.Fatalf("Sizes (-want +got):\n%s", diff)
	}

	// p1 moves from n1 to n3: a delete for n1, a store for n3, nothing for n2.
	m.Store("p1", node{Node: "n3", Seen: 1})
	if got := next(t, n1); !cmp.Equal(got.Updates, []watchable.Update[string, node]{{Key: "p1", Delete: true, Value: node{Node: "n1"}}}) {
		t.Fatalf("n1 got %+v; want p1's delete with its last value", got.Updates)
	}
	if got := next(t, n3); !cmp.Equal(got.Updates, []watchable.Update[string, node]{{Key: "p1", Value: node{Node: "n3", Seen: 1}}}) {
		t.Fatalf("n3 got %+v; want p1's store", got.Updates)
	}
	nothingPending(t, n2)
	if diff := cmp.Diff(map[string]int{"n2": 1, "n3": 1}, sizes.LoadAll()); diff != "" {
		t.Fatalf("Sizes after the move (-want +got):\n%s", diff)
	}

	// A heartbeat (equal value) within n3 tells nobody and keeps the revision.
	rev := m.Revision()
	m.Store("p1", node{Node: "n3", Seen: 2})
	nothingPending(t, n3)
	if m.Revision() != rev {
		t.Fatalf("an equal Store within a partition changed the revision")
	}

	m.Delete("p2")
	if got := next(t, n2); !cmp.Equal(got.Updates, []watchable.Update[string, node]{{Key: "p2", Delete: true, Value: node{Node: "n2"}}}) {
		t.Fatalf("n2 got %+v; want p2's delete", got.Updates)
	}
	if diff := cmp.Diff(map[string]int{"n3": 1}, sizes.LoadAll()); diff != "" {
		t.Fatalf("Sizes after the delete (-want +got):\n%s", diff)
	}
	if n := m.Subscribers(); n != 3 {
		t.Fatalf("Subscribers = %d; want 3", n)
	}
}

// moving is a value whose Equal ignores the field its partition depends on:
// storing an equal value can still move it between partitions.
type moving struct {
	ID   int
	Zone string
}

func (a moving) Equal(b moving) bool { return a.ID == b.ID }

func TestPartitionsSilentMoveIsAChange(t *testing.T) {
	var m watchable.Map[string, moving]
	m.Store("x", moving{ID: 1, Zone: "a"})
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ string, v moving) string { return v.Zone })
	a, b := parts.Subscribe(t.Context(), "a"), parts.Subscribe(t.Context(), "b")
	next(t, a)
	next(t, b)
	rev := m.Revision()
	m.Store("x", moving{ID: 1, Zone: "b"}) // equal by Equal, but in another partition
	if m.Revision() != rev+1 {
		t.Fatalf("Revision = %d after a silent Store that moves partitions; want %d", m.Revision(), rev+1)
	}
	if got := next(t, a); len(got.Updates) != 1 || !got.Updates[0].Delete {
		t.Fatalf("partition a got %+v; want a delete", got.Updates)
	}
	if got := next(t, b); len(got.Updates) != 1 || got.Updates[0].Delete || got.Updates[0].Value.Zone != "b" {
		t.Fatalf("partition b got %+v; want a store", got.Updates)
	}
}

// TestPartitionFunctionCalledTwicePerChange checks the cost model: a write
// calls the partition function for the old value and the new one, however
// many partitions are subscribed to, and wakes only their subscribers.
func TestPartitionFunctionCalledTwicePerChange(t *testing.T) {
	var m watchable.Map[int, int]
	for k := range 100 {
		m.Store(k, k)
	}
	calls := 0
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_, v int) int { calls++; return v % 100 })
	subs := make([]<-chan watchable.Snapshot[int, int], 100)
	for p := range subs {
		subs[p] = parts.Subscribe(t.Context(), p)
		next(t, subs[p])
	}
	calls = 0
	m.Store(5, 105) // stays in partition 5
	if calls != 2 {
		t.Fatalf("one Store called the partition function %d times; want 2", calls)
	}
	next(t, subs[5])
	for p, sub := range subs {
		if p != 5 {
			nothingPending(t, sub)
		}
	}
}

// TestPartitionFirstSnapshot checks that a partition's first snapshot holds
// exactly its entries; that the first Subscribe to a partition with entries
// asks the partition function of every entry, once, to index every
// partition's keys, and later ones ask it nothing; and that a partition
// without entries costs no call.
func TestPartitionFirstSnapshot(t *testing.T) {
	var m watchable.Map[int, int]
	for k := range 1000 {
		m.Store(k, k)
	}
	partOf := func(v int) int {
		switch {
		case v >= 5000:
			return 5 // moved there below
		case v >= 990:
			return 3 // ten entries in a partition of their own
		}
		return v % 3 // partitions 0, 1 and 2, spread over the map
	}
	calls := 0
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_, v int) int { calls++; return partOf(v) })
	check := func(p, wantCalls int) {
		t.Helper()
		want := map[int]int{}
		for k, v := range m.State().All() {
			if partOf(v) == p {
				want[k] = v
			}
		}
		calls = 0
		got := next(t, parts.Subscribe(t.Context(), p)).State.Map()
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("partition %d's first State (-want +got):\n%s", p, diff)
		}
		if calls != wantCalls {
			t.Errorf("subscribing to partition %d called the partition function %d times; want %d", p, calls, wantCalls)
		}
	}
	check(4, 0)    // no entries: no scan
	check(0, 1000) // the first with entries indexes the map
	for p := 1; p <= 3; p++ {
		check(p, 0)
	}
	// Writes keep the index: moves in, a delete, a new entry.
	for k := range 10 {
		m.Store(k, 5000+k)
	}
	m.Delete(3)
	m.Store(2000, 5999)
	check(5, 0)
}

// TestPartitionFirstSnapshotAfterWrites checks the index of partitions' keys
// against the map itself over random writes, silent moves among them: each
// partition's first snapshot holds what the map holds in it.
func TestPartitionFirstSnapshotAfterWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	zones := []string{"a", "b", "c", "d", "e", "f"}
	value := func() moving { return moving{ID: r.IntN(3), Zone: zones[r.IntN(len(zones))]} }
	var m watchable.Map[int, moving]
	defer m.Close()
	for k := range 100 {
		m.Store(k, value())
	}
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ int, v moving) string { return v.Zone })
	for step := range 400 {
		switch r.IntN(5) {
		case 0:
			m.Delete(r.IntN(150))
		case 1:
			m.Batch(func(b *watchable.Batch[int, moving]) {
				for range 5 {
					if r.IntN(3) == 0 {
						b.Delete(r.IntN(150))
					} else {
						b.Store(r.IntN(150), value())
					}
				}
			})
		case 2:
			if r.IntN(20) == 0 {
				entries := map[int]moving{}
				for range 30 {
					entries[r.IntN(150)] = value()
				}
				m.Replace(entries)
				break
			}
			fallthrough
		default:
			m.Store(r.IntN(150), value()) // often equal by Equal, in another zone
		}
		if step%10 != 0 {
			continue
		}
		zone := zones[r.IntN(len(zones))]
		want := map[int]moving{}
		for k, v := range m.State().All() {
			if v.Zone == zone {
				want[k] = v
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		sub := parts.Subscribe(ctx, zone)
		got := next(t, sub).State.Map()
		cancel()
		closed(t, sub)
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("step %d: zone %s's first State (-want +got):\n%s", step, zone, diff)
		}
	}
}

func TestPartitionsEndWithTheirContext(t *testing.T) {
	var m watchable.Map[int, int]
	ctx, cancel := context.WithCancel(t.Context())
	parts := watchable.PartitionBy(ctx, m.View(), func(_, v int) int { return v })
	sub := parts.Subscribe(t.Context(), 1)
	next(t, sub)
	sizes := parts.Sizes().Subscribe(t.Context())
	next(t, sizes)
	cancel()
	closed(t, sub)
	closed(t, sizes)
	if late := parts.Subscribe(t.Context(), 1); !drainedAndClosed(late) {
		t.Fatalf("Subscribe after the index ended returned an open channel")
	}
	m.Store(1, 1) // nothing left to tell
	if n := m.Subscribers(); n != 0 {
		t.Fatalf("Subscribers = %d; want 0", n)
	}
}

// A subscription to a partition that no map can find again (NaN is not
// equal to itself) still ends with its context, and leaves the other
// partitions' subscriptions as they were.
func TestPartitionNaNSubscriptionEnds(t *testing.T) {
	var m watchable.Map[int, float64]
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ int, v float64) float64 { return v })
	other := parts.Subscribe(t.Context(), 1)
	next(t, other)
	ctx, cancel := context.WithCancel(t.Context())
	nan := parts.Subscribe(ctx, math.NaN())
	next(t, nan)
	if n := m.Subscribers(); n != 2 {
		t.Fatalf("Subscribers = %d; want 2", n)
	}
	cancel()
	closed(t, nan)
	m.Store(7, 1)
	if s := next(t, other); s.State.Len() != 1 || len(s.Updates) != 1 || s.Updates[0].Key != 7 {
		t.Fatalf("partition 1 after the NaN subscription ended: State of %d entries, Updates %v; want key 7 stored", s.State.Len(), s.Updates)
	}
	if n := m.Subscribers(); n != 1 {
		t.Fatalf("Subscribers = %d; want 1", n)
	}
}

func drainedAndClosed[K comparable, V any](ch <-chan watchable.Snapshot[K, V]) bool {
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return true
			}
		default:
			return false
		}
	}
}

// A per-node fan-out: one handler per node that has pods, started when the
// node's first pod appears and stopped when its last one goes, each seeing
// only its node's pods. Here the handlers only print what they see.
func ExamplePartitionBy() {
	var pods watchable.Map[string, string] // pod name → node name
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	byNode := watchable.PartitionBy(ctx, pods.View(), func(_, node string) string { return node })

	pods.Store("web-1", "node-a")
	pods.Store("web-2", "node-b")
	nodes := byNode.Sizes().Subscribe(ctx)
	updates := (<-nodes).Updates
	sort.Slice(updates, func(i, j int) bool { return updates[i].Key < updates[j].Key })
	for _, u := range updates {
		if !u.Delete {
			snap := <-byNode.Subscribe(ctx, u.Key) // a handler would loop here
			fmt.Printf("%s has %d pod(s)\n", u.Key, snap.State.Len())
		}
	}
	// Output:
	// node-a has 1 pod(s)
	// node-b has 1 pod(s)
}

// Sizes is initialized when the indexed map is, so that a fan-out waiting
// on it never starts handlers from a partial list of partitions.
func TestPartitionSizesFollowInitialization(t *testing.T) {
	var m watchable.Map[string, string]
	done := m.RegisterInitializer("loader")
	m.Store("a", "node-1")
	p := watchable.PartitionBy(t.Context(), m.View(), func(_ string, node string) string { return node })
	sizes := p.Sizes()
	if received(sizes.Initialized()) {
		t.Fatal("Sizes is initialized while the indexed map is not")
	}
	if got := sizes.PendingInitializers(); len(got) != 1 || !strings.Contains(got[0], "loader") {
		t.Fatalf("Sizes' pending initializers = %v; want one naming the map's", got)
	}
	m.Store("b", "node-2")
	done()
	select {
	case <-sizes.Initialized():
	case <-time.After(10 * time.Second):
		t.Fatal("Sizes not initialized within 10s of the indexed map")
	}
	if got := sizes.State().Map(); len(got) != 2 {
		t.Fatalf("Sizes once initialized = %v; want both partitions", got)
	}

	// An index of an initialized map is initialized at once.
	q := watchable.PartitionBy(t.Context(), m.View(), func(_ string, node string) string { return node })
	if !received(q.Sizes().Initialized()) {
		t.Fatal("Sizes of an initialized map is not initialized")
	}
}

// TestSubscribeKeysOfEveryKeyKind checks that a keyed subscription is told
// of its key's Store and Delete, and of nothing else, for keys of kinds
// the table and the key index hash differently unless they agree: negative
// narrow integers and keys maphash hashes (a struct, a float).
func TestSubscribeKeysOfEveryKeyKind(t *testing.T) {
	type narrow int16
	type pair struct {
		A string
		B int
	}
	keyedOnce(t, int8(-3), int8(4))
	keyedOnce(t, int32(-70000), int32(70000))
	keyedOnce(t, narrow(-300), narrow(300))
	keyedOnce(t, pair{"a", -1}, pair{"a", 1})
	keyedOnce(t, -0.5, 0.5)
	keyedOnce(t, strings.Repeat("node", 10), "node")
}

func keyedOnce[K comparable](t *testing.T, key, other K) {
	t.Helper()
	var m watchable.Map[K, int]
	m.Store(key, 1)
	m.Store(other, 1)
	sub := m.SubscribeKeys(t.Context(), key)
	if diff := cmp.Diff([]watchable.Update[K, int]{{Key: key, Value: 1}}, next(t, sub).Updates); diff != "" {
		t.Fatalf("%v: first Updates (-want +got):\n%s", key, diff)
	}
	m.Store(other, 2)
	nothingPending(t, sub)
	m.Store(key, 2)
	if diff := cmp.Diff([]watchable.Update[K, int]{{Key: key, Value: 2}}, next(t, sub).Updates); diff != "" {
		t.Fatalf("%v: Updates after a Store (-want +got):\n%s", key, diff)
	}
	m.Delete(key)
	if diff := cmp.Diff([]watchable.Update[K, int]{{Key: key, Delete: true, Value: 2}}, next(t, sub).Updates); diff != "" {
		t.Fatalf("%v: Updates after a Delete (-want +got):\n%s", key, diff)
	}
}
