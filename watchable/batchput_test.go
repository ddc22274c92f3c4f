package watchable_test

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// filledInts returns a map of n ints, value i at key i, that nobody holds:
// a batch of overwrites goes in place there.
func filledInts(t *testing.T, n int) *watchable.Map[int, int] {
	t.Helper()
	m := &watchable.Map[int, int]{}
	t.Cleanup(m.Close)
	m.Batch(func(b *watchable.Batch[int, int]) {
		for i := range n {
			b.Store(i, i)
		}
	})
	return m
}

// checkLoads checks m's contents below key n against want with Load, not
// State (a State would freeze the version, and the next batch would copy),
// and its revision: rev, plus one if the last write changed anything.
func checkLoads(t *testing.T, round int, m *watchable.Map[int, int], n int, want map[int]int, rev uint64, changed bool) {
	t.Helper()
	got := map[int]int{}
	for k := range n {
		if v, ok := m.Load(k); ok {
			got[k] = v
		}
	}
	if diff := cmp.Diff(want, got); diff != "" || m.Len() != len(want) {
		t.Fatalf("round %d: contents (-want +got):\n%s\nLen %d; want %d", round, diff, m.Len(), len(want))
	}
	if changed {
		rev++
	}
	if m.Revision() != rev {
		t.Fatalf("round %d: revision %d; want %d", round, m.Revision(), rev)
	}
}

// catchUp is a lazy reader's read: it takes the map's State, checks that
// last plus the updates since it make want, and returns the new State.
func catchUp(t *testing.T, round int, m *watchable.Map[int, int], last watchable.State[int, int], want map[int]int) watchable.State[int, int] {
	t.Helper()
	cur := m.State()
	got := last.Map()
	for _, u := range cur.UpdatesSince(last) {
		if u.Delete {
			delete(got, u.Key)
		} else {
			got[u.Key] = u.Value
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("round %d: an old State plus UpdatesSince (-want +got):\n%s", round, diff)
	}
	return cur
}

// TestBatchOfOverwritesCopiesNothing checks that a batch that only
// overwrites existing keys of a version nobody holds changes them in place:
// it allocates nothing per Store, where a copying batch allocates nodes.
func TestBatchOfOverwritesCopiesNothing(t *testing.T) {
	m := filledInts(t, 50000)
	g := 0
	allocs := testing.AllocsPerRun(20, func() {
		g++
		m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range 2000 {
				b.Store(i*23%50000, g)
			}
		})
	})
	if allocs > 10 {
		t.Errorf("a batch of 2,000 overwrites allocated %.0f times; want a few at most", allocs)
	}
	for i := range 2000 {
		if v, _ := m.Load(i * 23 % 50000); v != g {
			t.Fatalf("Load(%d) = %d after the last batch; want %d", i*23%50000, v, g)
		}
	}
}

// TestBatchOfOverwritesPanicAppliesNothing panics in a batch that has made
// only overwrites: nothing reaches the map, and the next batch works.
func TestBatchOfOverwritesPanicAppliesNothing(t *testing.T) {
	m := filledInts(t, 40000)
	rev := m.Revision()
	func() {
		defer func() { _ = recover() }()
		m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range 3000 {
				b.Store(i, -1)
			}
			panic("half way")
		})
	}()
	if m.Revision() != rev {
		t.Fatalf("revision %d after a panicking batch; want %d", m.Revision(), rev)
	}
	for i := range 3000 {
		if v, _ := m.Load(i); v != i {
			t.Fatalf("Load(%d) = %d after a panicking batch; want %d", i, v, i)
		}
	}
	m.Batch(func(b *watchable.Batch[int, int]) { b.Store(5, 55) })
	if v, _ := m.Load(5); v != 55 || m.Revision() != rev+1 {
		t.Fatalf("after the next batch: Load(5) = %d, revision %d; want 55, %d", v, m.Revision(), rev+1)
	}
	if v, _ := m.Load(6); v != 6 {
		t.Fatalf("the next batch carried a write of the panicking one: Load(6) = %d", v)
	}
}

// TestBatchesOfOverwritesMatchAModel runs random batches on a map nobody
// holds, against a Go map: mostly overwrites, some repeated within a batch
// or equal to the value there, Loads and Lens, and, in some batches, an
// insert or a delete part way, after which the batch goes on copying. Every
// read inside the batch, the contents, the revision, and a lazy reader's
// net updates must agree with the model; a State taken on some rounds
// before the batch must not change.
func TestBatchesOfOverwritesMatchAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 24))
	const keys = 300
	m := filledInts(t, keys)
	want := map[int]int{}
	for i := range keys {
		want[i] = i
	}
	n := make(chan struct{}, 1)
	m.Notify(t.Context(), n)
	last := m.State()
	for round := range 300 {
		var before watchable.State[int, int]
		var held map[int]int
		if round%4 == 0 {
			before, held = m.State(), maps.Clone(want)
		}
		rev := m.Revision()
		next := maps.Clone(want)
		ops := 1 + rng.IntN(400)
		mixed := round%3 == 0
		m.Batch(func(b *watchable.Batch[int, int]) {
			for i := range ops {
				k := rng.IntN(keys)
				op := 0
				switch r := rng.IntN(50); {
				case r < 2:
					op = 3 + r // a Load or a Len
				case r == 2 && mixed:
					op = 1 + rng.IntN(2) // an insert or a delete
				}
				switch op {
				case 0: // an overwrite, or an insert once the key was deleted
					v := rng.IntN(3)
					b.Store(k, v)
					next[k] = v
				case 1:
					v := keys + rng.IntN(50) // a key that may be new
					b.Store(v, v)
					next[v] = v
				case 2:
					b.Delete(k)
					delete(next, k)
				case 3:
					got, ok := b.Load(k)
					w, had := next[k]
					if got != w || ok != had {
						t.Fatalf("round %d op %d: Load(%d) = %d, %v; want %d, %v", round, i, k, got, ok, w, had)
					}
				case 4:
					if got := b.Len(); got != len(next) {
						t.Fatalf("round %d op %d: Len = %d; want %d", round, i, got, len(next))
					}
				}
			}
		})
		changed := !maps.Equal(want, next)
		want = next
		checkLoads(t, round, m, keys+50, want, rev, changed)
		if held != nil && !maps.Equal(before.Map(), held) {
			t.Fatalf("round %d: a State taken before the batch changed", round)
		}
		select {
		case <-n:
			if !changed {
				t.Fatalf("round %d: a notification for a batch that changed nothing", round)
			}
		default:
			if changed {
				t.Fatalf("round %d: no notification for a batch that changed the map", round)
			}
		}
		if round%5 == 0 { // the lazy reader catches up now and then
			last = catchUp(t, round, m, last, want)
		}
	}
}

// TestLoadsNeverSeeHalfABatchOfOverwrites has every batch overwrite every
// key with the same, growing value while readers Load the keys one by one:
// the values a reader gets must never go down. A reader that got one
// key's new value and then another's old one would have seen half a batch.
func TestLoadsNeverSeeHalfABatchOfOverwrites(t *testing.T) {
	const keys = 3000
	m := filledInts(t, keys)
	m.Batch(func(b *watchable.Batch[int, int]) {
		for k := range keys {
			b.Store(k, 0)
		}
	})
	readWhile(t, 2, func(r int) func() error {
		last, i := 0, 0
		return func() error {
			k := (i*7919 + r*31) % keys
			i++
			v, ok := m.Load(k)
			if !ok || v < last {
				return fmt.Errorf("reader %d: Load(%d) = %d, %v after a Load returned %d", r, k, v, ok, last)
			}
			last = v
			return nil
		}
	}, func() {
		deadline := time.Now().Add(2 * time.Second)
		for g := 1; g <= 200 && time.Now().Before(deadline); g++ {
			m.Batch(func(b *watchable.Batch[int, int]) {
				for k := range keys {
					b.Store(k, g)
				}
			})
		}
	})
}

// TestReplacesOfOverwritesMatchAModel runs random Replaces against a Go
// map: most change some values of the keys present and keep the rest (in
// place), some also drop or add keys (copying). The contents, revision and
// lazy reader's updates must agree with the model, a State taken before
// must not change, and a Replace of overwrites alone must allocate no
// nodes.
func TestReplacesOfOverwritesMatchAModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	const keys = 2000
	m := filledInts(t, keys)
	want := map[int]int{}
	for i := range keys {
		want[i] = i
	}
	last := m.State()
	for round := range 120 {
		next := maps.Clone(want)
		for k := range next {
			if rng.IntN(10) == 0 {
				next[k] = rng.IntN(5)
			}
		}
		if round%4 == 3 {
			for range 5 {
				delete(next, rng.IntN(keys))
				next[keys+rng.IntN(100)] = 1
			}
		}
		var before watchable.State[int, int]
		if round%5 == 0 {
			before = m.State()
		}
		rev := m.Revision()
		m.Replace(next)
		changed := !maps.Equal(want, next)
		held := want
		want = next
		checkLoads(t, round, m, keys+100, want, rev, changed)
		if round%5 == 0 && !maps.Equal(before.Map(), held) {
			t.Fatalf("round %d: a State taken before the Replace changed", round)
		}
		if round%7 == 0 {
			last = catchUp(t, round, m, last, want)
		}
	}

	// In place: the Replace itself allocates a few times at most, where
	// copying 200 changed keys' nodes would allocate hundreds of times.
	// AllocsPerRun counts every goroutine's allocations: the least of
	// three measures leaves out those of goroutines that earlier tests
	// left ending (with -count above 1 on a busy machine, up to 20).
	g := 100
	allocs := math.Inf(1)
	for range 3 {
		allocs = min(allocs, testing.AllocsPerRun(10, func() {
			g++
			next := want // the same map, changed in place between runs
			for k := range 200 {
				next[k*7] = g
			}
			m.Replace(next)
		}))
	}
	if allocs > 10 {
		t.Errorf("a Replace of 200 overwrites allocated %.0f times; want a few at most", allocs)
	}
}

// TestBatchOfOverwritesInPlaceAgainAfterAState checks that a State held
// over a map makes the batches of overwrites after it keep the values it
// reads in blocks rather than one allocation a key (the first batch keeps
// its undo log, frozen; the second, over the same keys, moves what that
// log holds into the keys' lists as it writes them), and that the batch
// after those keeps nothing again: the State reads none of what it
// replaces.
func TestBatchOfOverwritesInPlaceAgainAfterAState(t *testing.T) {
	m := filledInts(t, 50000)
	overwrite := func(g int) func() {
		return func() {
			m.Batch(func(b *watchable.Batch[int, int]) {
				for i := range 1000 {
					b.Store(i*37%50000, g)
				}
			})
		}
	}
	mallocs := func(f func()) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	overwrite(1)() // makes the undo log the batches reuse
	held := m.State()
	freezing := mallocs(overwrite(2))
	thawing := mallocs(overwrite(3))
	inPlace := mallocs(overwrite(4))
	if keeping := freezing + thawing; keeping < 2 || keeping > 60 || inPlace > 4 {
		t.Errorf("allocations: %d and %d for the two batches after a State, %d for the next one; want a few blocks (2 to 60 in all), then a few at most", freezing, thawing, inPlace)
	}
	if v, _ := held.Get(37); v != 1 {
		t.Errorf("the State holds %d at key 37; want 1", v)
	}
	if v, _ := m.Load(37); v != 4 {
		t.Errorf("Load(37) = %d; want 4", v)
	}
}

// TestBatchOfPointerOverwritesKeepsEveryValue is the model test's case for
// pointer values, whose in-place stores replace pointers: a key stored
// twice, read back within the batch, stored with an equal value, and then
// the whole batch replayed into a copy by an insert, with collections in
// between, so that a value kept only by the batch would be lost.
func TestBatchOfPointerOverwritesKeepsEveryValue(t *testing.T) {
	type item struct{ Name string }
	val := func(s string) *item { return &item{Name: s} }
	for _, insert := range []bool{false, true} {
		t.Run(fmt.Sprintf("insert=%v", insert), func(t *testing.T) {
			m := &watchable.Map[int, *item]{}
			t.Cleanup(m.Close)
			const n = 200
			m.Batch(func(b *watchable.Batch[int, *item]) {
				for i := range n {
					b.Store(i, val(fmt.Sprint("v", i)))
				}
			})
			want := map[int]string{}
			for i := range n {
				want[i] = fmt.Sprint("v", i)
			}
			m.Batch(func(b *watchable.Batch[int, *item]) {
				for i := 0; i < n; i += 2 {
					b.Store(i, val(fmt.Sprint("first", i)))
				}
				runtime.GC()
				for i := 0; i < n; i += 4 {
					b.Store(i, val(fmt.Sprint("second", i)))
					b.Store(i+1, val(fmt.Sprint("v", i+1))) // equal to the map's
				}
				runtime.GC()
				for i := 0; i < n; i += 2 {
					got, ok := b.Load(i)
					w := fmt.Sprint("first", i)
					if i%4 == 0 {
						w = fmt.Sprint("second", i)
					}
					if !ok || got.Name != w {
						t.Fatalf("Load(%d) in the batch = %v, %v; want %q", i, got, ok, w)
					}
					want[i] = w
				}
				if insert {
					b.Store(n, val("new"))
					want[n] = "new"
				}
				runtime.GC()
			})
			runtime.GC()
			got := map[int]string{}
			for k, v := range m.State().All() {
				got[k] = v.Name
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("contents (-want +got):\n%s", diff)
			}
		})
	}
}
