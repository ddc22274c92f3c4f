package watchable_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// A Batch on a large map holds its last few Stores back, their slots
// prefetched, and applies each when later ones come (see storesAhead).
// These tests run batches far longer than that on maps large enough for
// it, so that Stores, Deletes, Loads and Lens fall among Stores held
// back, and check that nothing of that shows.

// ballast is how many entries the tests put in a map, at keys from
// ballastKey on, to make it large enough for Stores to be held back: a
// table of 65,536 slots or more (mvcc.Table.Large).
const ballast, ballastKey = 1<<16 + 100, 1 << 30

func withBallast[V any](m *watchable.Map[int, V], v V) {
	m.Batch(func(b *watchable.Batch[int, V]) {
		for i := range ballast {
			b.Store(ballastKey+i, v)
		}
	})
}

// TestLongBatchesMatchAModel runs random long batches (stores, equal
// stores, deletes, loads and lens, keys repeated within a batch) against a
// Go map, checking every read inside the batch, the contents, revision and
// the net Updates a subscriber receives after each, and that a State taken
// before each batch still holds what it held.
func TestLongBatchesMatchAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(14, 2))
	var m watchable.Map[int, int]
	defer m.Close()
	withBallast(&m, -1)
	keys := make([]int, 40)
	for i := range keys {
		keys[i] = i
	}
	sub := m.SubscribeKeys(t.Context(), keys...)
	<-sub
	seen := map[int]int{}
	want := map[int]int{}
	for round := range 60 {
		before, held := m.State(), maps.Clone(want)
		rev := m.Revision()
		next := maps.Clone(want)
		n := rng.IntN(200)
		m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range n {
				k := rng.IntN(40)
				switch op := rng.IntN(10); {
				case op < 6:
					v := rng.IntN(4)
					b.Store(k, v)
					next[k] = v
				case op < 8:
					b.Delete(k)
					delete(next, k)
				case op < 9:
					got, ok := b.Load(k)
					w, had := next[k]
					if got != w || ok != had {
						t.Fatalf("round %d op %d: Load(%d) = %d, %v; want %d, %v", round, i, k, got, ok, w, had)
					}
				default:
					if got := b.Len(); got != ballast+len(next) {
						t.Fatalf("round %d op %d: Len = %d; want %d", round, i, got, ballast+len(next))
					}
				}
			}
		})
		changed := !maps.Equal(want, next)
		want = next
		if diff := cmp.Diff(want, small(m.State())); diff != "" {
			t.Fatalf("round %d: contents (-want +got):\n%s", round, diff)
		}
		if m.Len() != ballast+len(want) {
			t.Fatalf("round %d: Len = %d; want %d", round, m.Len(), ballast+len(want))
		}
		if wantRev := rev + map[bool]uint64{true: 1}[changed]; m.Revision() != wantRev {
			t.Fatalf("round %d: revision %d; want %d", round, m.Revision(), wantRev)
		}
		if !maps.Equal(small(before), held) || before.Len() != ballast+len(held) {
			t.Fatalf("round %d: a State taken before the batch changed", round)
		}
		select {
		case s := <-sub:
			if !changed {
				t.Fatalf("round %d: a snapshot for a batch that changed nothing", round)
			}
			keys := map[int]bool{}
			for _, u := range s.Updates {
				if keys[u.Key] {
					t.Fatalf("round %d: key %d updated twice in one snapshot", round, u.Key)
				}
				keys[u.Key] = true
				if u.Delete {
					if v, ok := seen[u.Key]; !ok || v != u.Value {
						t.Fatalf("round %d: delete of %d carries %d; the subscriber saw %d, %v", round, u.Key, u.Value, v, ok)
					}
					delete(seen, u.Key)
				} else {
					seen[u.Key] = u.Value
				}
			}
			if diff := cmp.Diff(want, seen); diff != "" {
				t.Fatalf("round %d: previous snapshot + Updates (-want +got):\n%s", round, diff)
			}
			if diff := cmp.Diff(want, s.State.Map()); diff != "" {
				t.Fatalf("round %d: snapshot State (-want +got):\n%s", round, diff)
			}
		default:
			if changed {
				t.Fatalf("round %d: no snapshot for a batch that changed the map", round)
			}
		}
	}
}

// TestLongBatchPanicAppliesNothing panics after many more Stores than a
// batch holds back, most of them already applied to the table, the last
// few still held: nothing reaches the map.
func TestLongBatchPanicAppliesNothing(t *testing.T) {
	var m watchable.Map[int, int]
	defer m.Close()
	withBallast(&m, -1)
	for i := range 100 {
		m.Store(i, i)
	}
	rev, before := m.Revision(), m.LoadAll()
	func() {
		defer func() { _ = recover() }()
		m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range 1000 {
				b.Store(i%150, -i)
				b.Store(ballastKey+i, i)
			}
			panic("half way")
		})
	}()
	if m.Revision() != rev {
		t.Fatalf("revision %d after a panicking batch; want %d", m.Revision(), rev)
	}
	if diff := cmp.Diff(before, m.LoadAll()); diff != "" {
		t.Fatalf("contents after a panicking batch (-want +got):\n%s", diff)
	}
}

// TestReadersNeverSeeHalfALongBatch has every batch set every key to the
// same value while readers take States: each State must hold one value
// everywhere, the batch's or the previous one's.
func TestReadersNeverSeeHalfALongBatch(t *testing.T) {
	var m watchable.Map[int, int]
	defer m.Close()
	const keys, batches = 300, 100
	withBallast(&m, -1)
	m.Batch(func(b *watchable.Batch[int, int]) {
		for k := range keys {
			b.Store(k, 0)
		}
	})
	readWhile(t, 2, func(int) func() error {
		return func() error {
			s := m.State()
			first, _ := s.Get(0)
			for k := range keys {
				if v, _ := s.Get(k); v != first {
					return fmt.Errorf("a State holds %d at key 0 and %d at key %d", first, v, k)
				}
			}
			if s.Len() != ballast+keys {
				return fmt.Errorf("a State holds %d keys", s.Len())
			}
			return nil
		}
	}, func() {
		for i := 1; i <= batches; i++ {
			m.Batch(func(b *watchable.Batch[int, int]) {
				for k := range keys {
					b.Store(k, i)
				}
			})
		}
	})
}

// readWhile runs n readers while write runs, and fails t with the first
// error of each. reader(r) returns reader r's step, which it repeats until
// write has returned or the step fails.
func readWhile(t *testing.T, n int, reader func(r int) func() error, write func()) {
	t.Helper()
	done := make(chan struct{})
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			step := reader(r)
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := step(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	write()
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// small returns the entries of s below the ballast.
func small(s watchable.State[int, int]) map[int]int {
	out := map[int]int{}
	for k := range 40 {
		if v, ok := s.Get(k); ok {
			out[k] = v
		}
	}
	return out
}
