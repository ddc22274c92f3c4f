package watchable_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// A Batch into an empty map grows the table as it goes, and once the
// table is large holds its last Stores back (see storesAhead in
// batchahead.go). These tests run the same batches that way and one Store
// at a time (a batch that asks Len after every Store, which applies the
// Stores held back), and want nothing to tell the two apart: contents,
// revisions, what subscribers of the map and of its partitions are told,
// reads inside the batch.

// fillOp is one write or read of a batch in these tests.
type fillOp[V any] struct {
	op  int // 0 Store, 1 Load, 2 Delete
	key int
	val V
}

// fillOps returns n random operations on keys below keys, whose values
// val makes: Stores of values equal and identical to earlier ones among
// them, and, when reads, a few Loads and Deletes.
func fillOps[V any](r *rand.Rand, n, keys int, reads bool, val func(*rand.Rand) V) []fillOp[V] {
	ops := make([]fillOp[V], n)
	for i := range ops {
		o := fillOp[V]{key: r.IntN(keys), val: val(r)}
		if reads && r.IntN(20) == 0 {
			o.op = 1 + r.IntN(2)
		}
		ops[i] = o
	}
	return ops
}

// runFill applies ops to m in one batch, asking Len after every Store
// when oneByOne (which applies the Stores held back), and returns what
// its Loads found.
func runFill[V any](m *watchable.Map[int, V], ops []fillOp[V], oneByOne bool) []string {
	var loads []string
	m.Batch(func(b *watchable.Batch[int, V]) {
		for _, o := range ops {
			switch o.op {
			case 0:
				b.Store(o.key, o.val)
				if oneByOne {
					b.Len()
				}
			case 1:
				v, ok := b.Load(o.key)
				loads = append(loads, fmt.Sprint(v, ok, b.Len()))
			case 2:
				b.Delete(o.key)
			}
		}
	})
	return loads
}

func TestBatchIntoAnEmptyMapIsOneStoreAfterAnother(t *testing.T) {
	// moving's Equal ignores Zone, the partition: a Store of an equal
	// value is silent, yet moves the key between partitions. ints are
	// exact: a Store of an equal one is dropped.
	movingVal := func(r *rand.Rand) moving { return moving{ID: r.IntN(2), Zone: fmt.Sprint(r.IntN(3))} }
	movingZone := func(_ int, v moving) string { return v.Zone }
	intVal := func(r *rand.Rand) int { return r.IntN(3) }
	intZone := func(_ int, v int) string { return fmt.Sprint(v % 2) }
	for _, tc := range []struct {
		name       string
		n, keys    int
		reads, sub bool
		seeds      uint64
	}{
		{"stores", 300, 100, false, true, 20},
		{"stores, unwatched", 300, 100, false, false, 20},
		{"stores and reads", 300, 100, true, true, 20},
		{"one key", 20, 1, false, true, 20},
		// Enough keys for a large table (65,536 slots), where Stores
		// are held back.
		{"large", 70000, 60000, false, true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := range tc.seeds {
				checkFill(t, seed, fillOps(rand.New(rand.NewPCG(seed, 3)), tc.n, tc.keys, tc.reads, movingVal), tc.sub, movingZone)
				checkFill(t, seed, fillOps(rand.New(rand.NewPCG(seed, 4)), tc.n, tc.keys, tc.reads, intVal), tc.sub, intZone)
			}
		})
	}
}

// checkFill runs ops on an empty map filled and on one stored one by one,
// with, when sub, a subscriber to each and to each of partitions "0" to
// "2" of zone, and wants them to agree.
func checkFill[V any](t *testing.T, seed uint64, ops []fillOp[V], sub bool, zone func(int, V) string) {
	t.Helper()
	var filled, stored watchable.Map[int, V]
	var subs [2][]<-chan watchable.Snapshot[int, V]
	if sub {
		for i, m := range []*watchable.Map[int, V]{&filled, &stored} {
			parts := watchable.PartitionBy(t.Context(), m.View(), zone)
			subs[i] = []<-chan watchable.Snapshot[int, V]{m.Subscribe(t.Context()),
				parts.Subscribe(t.Context(), "0"), parts.Subscribe(t.Context(), "1"), parts.Subscribe(t.Context(), "2")}
			for _, s := range subs[i] {
				next(t, s)
			}
		}
	}
	gotLoads := runFill(&filled, ops, false)
	wantLoads := runFill(&stored, ops, true)
	if diff := cmp.Diff(wantLoads, gotLoads); diff != "" {
		t.Fatalf("seed %d: Loads inside the batch (-one by one +filled):\n%s", seed, diff)
	}
	if diff := cmp.Diff(stored.State().Map(), filled.State().Map()); diff != "" {
		t.Fatalf("seed %d: contents (-one by one +filled):\n%s", seed, diff)
	}
	if filled.Revision() != stored.Revision() || filled.Len() != stored.Len() {
		t.Fatalf("seed %d: revision %d, Len %d; one by one %d, %d", seed,
			filled.Revision(), filled.Len(), stored.Revision(), stored.Len())
	}
	byKey := func(a, b watchable.Update[int, V]) int { return a.Key - b.Key }
	for i := range subs[0] {
		var got, want []watchable.Update[int, V]
		select {
		case s := <-subs[0][i]:
			got = s.Updates
		default: // told nothing: snapshots are sent before Batch returns
		}
		select {
		case s := <-subs[1][i]:
			want = s.Updates
		default:
		}
		slices.SortFunc(got, byKey)
		slices.SortFunc(want, byKey)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d: subscriber %d's Updates (-one by one +filled):\n%s", seed, i, diff)
		}
		nothingPending(t, subs[0][i])
	}
}

// TestBatchIntoAnEmptyMapThenInPlace wants a filled map, which nobody
// has read, overwritten in place by the next batch, as any map its writer
// alone has seen.
func TestBatchIntoAnEmptyMapThenInPlace(t *testing.T) {
	var m watchable.Map[string, int]
	const n = 1000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprint(i)
	}
	m.Batch(func(b *watchable.Batch[string, int]) {
		for i, k := range keys {
			b.Store(k, i)
		}
	})
	// The first batch after the fill counts: a copying one would leave
	// nodes the next could edit in place.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	m.Batch(func(b *watchable.Batch[string, int]) {
		for i, k := range keys {
			b.Store(k, -i)
		}
	})
	runtime.ReadMemStats(&after)
	// In place, only the batch's array of puts grows (about 20
	// allocations); copying, the batch allocates node after node (about 360).
	if allocs := after.Mallocs - before.Mallocs; allocs > 60 {
		t.Fatalf("a batch of %d overwrites after the fill allocated %d times; want it in place", n, allocs)
	}
	for i, k := range keys {
		if v, _ := m.Load(k); v != -i {
			t.Fatalf("Load(%s) = %d; want %d", k, v, -i)
		}
	}
}

// TestReplaceOfAnEmptyMap wants Replace into an empty map to tell a
// subscriber of every entry, once.
func TestReplaceOfAnEmptyMap(t *testing.T) {
	var m watchable.Map[int, int]
	sub := m.Subscribe(t.Context())
	next(t, sub)
	want := map[int]int{}
	for i := range 5000 {
		want[i*7] = i
	}
	m.Replace(want)
	s := next(t, sub)
	if diff := cmp.Diff(want, s.State.Map()); diff != "" {
		t.Fatalf("State after Replace (-want +got):\n%s", diff)
	}
	seen := map[int]int{}
	for _, u := range s.Updates {
		if _, again := seen[u.Key]; again || u.Delete {
			t.Fatalf("Update %+v told twice or as a delete", u)
		}
		seen[u.Key] = u.Value
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
	if m.Revision() != 1 {
		t.Fatalf("Revision = %d; want 1", m.Revision())
	}
}

// TestBatchIntoAnEmptyMapPanicAppliesNothing panics after many Stores into
// an empty map: the map stays empty, and the next batch fills it.
func TestBatchIntoAnEmptyMapPanicAppliesNothing(t *testing.T) {
	var m watchable.Map[int, int]
	sub := m.Subscribe(t.Context())
	next(t, sub)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the batch's panic did not propagate")
			}
		}()
		m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range 1000 {
				b.Store(i, i)
			}
			panic("no")
		})
	}()
	if m.Len() != 0 || m.Revision() != 0 {
		t.Fatalf("after a batch that panicked: Len %d, revision %d; want 0, 0", m.Len(), m.Revision())
	}
	nothingPending(t, sub)
	m.Batch(func(b *watchable.Batch[int, int]) { b.Store(1, 1) })
	if s := next(t, sub); len(s.Updates) != 1 || s.Updates[0].Key != 1 || s.State.Len() != 1 {
		t.Fatalf("the next batch's snapshot = %+v; want key 1 alone", s)
	}
}
