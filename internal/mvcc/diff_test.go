package mvcc

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// diffChange is one call of Diff's fn as the tests record it, or one
// difference between two maps.
type diffChange[V comparable] struct {
	Old      V
	Had      bool
	New      V
	Has      bool
	Repeated bool // Diff gave the key more than once
}

// diffHeld is a snapshot held by a test of Diff, with a copy of the map
// kept beside the table when it was taken. The zero diffHeld is the zero
// Snapshot, which is empty.
type diffHeld[K comparable, V comparable] struct {
	s Snapshot[K, V]
	m map[K]V
}

// diffOf is what Diff gives from from to to, by key.
func diffOf[K comparable, V comparable](from, to Snapshot[K, V]) map[K]diffChange[V] {
	got := map[K]diffChange[V]{}
	Diff(from, to, func(k K, old V, had bool, new V, has bool) bool {
		_, again := got[k]
		got[k] = diffChange[V]{old, had, new, has, again}
		return true
	})
	return got
}

// diffWant is the difference from from to to, values compared with ==.
func diffWant[K comparable, V comparable](from, to map[K]V) map[K]diffChange[V] {
	want := map[K]diffChange[V]{}
	var zero V
	for k, v := range from {
		if w, ok := to[k]; !ok {
			want[k] = diffChange[V]{Old: v, Had: true, New: zero}
		} else if v != w {
			want[k] = diffChange[V]{Old: v, Had: true, New: w, Has: true}
		}
	}
	for k, w := range to {
		if _, ok := from[k]; !ok {
			want[k] = diffChange[V]{New: w, Has: true}
		}
	}
	return want
}

// diffMismatch compares what Diff gives from from to to with the
// difference of their maps, and describes the first few disagreements,
// or returns "".
func diffMismatch[K comparable, V comparable](from, to diffHeld[K, V]) string {
	got, want := diffOf(from.s, to.s), diffWant(from.m, to.m)
	if maps.Equal(got, want) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Diff from version %d to %d (%d keys given, want %d):", diffVersion(from.s), diffVersion(to.s), len(got), len(want))
	var lines []string
	for k, g := range got {
		if w, ok := want[k]; !ok || g != w {
			lines = append(lines, fmt.Sprintf("\n\t%v: given %+v, want %+v (in the wanted difference: %v)", k, g, w, ok))
		}
	}
	for k, w := range want {
		if _, ok := got[k]; !ok {
			lines = append(lines, fmt.Sprintf("\n\t%v: not given, want %+v", k, w))
		}
	}
	slices.Sort(lines)
	for _, l := range lines[:min(len(lines), 6)] {
		b.WriteString(l)
	}
	return b.String()
}

// diffVersion is s's version, or 0 for the zero Snapshot.
func diffVersion[K comparable, V any](s Snapshot[K, V]) uint64 {
	if s.snapshot == nil {
		return 0
	}
	return s.ver
}

// diffBox is a value of more than one word, which the table keeps boxed.
type diffBox struct {
	A string
	B int
}

// diffOfferLog makes the tests of Diff offer their tables' change logs to
// Diff (Table.LogForDiff), so that Diff reads the log where it reaches
// back far enough; see TestDiffThroughTheLog.
// diffLogLimit, when not 0, is the blocks of the log such a table keeps
// beyond a quarter of its keys' worth.
var (
	diffOfferLog bool
	diffLogLimit int
)

// newDiffTable is New(0), offering its log to Diff if diffOfferLog says so.
func newDiffTable[K comparable, V any](t *testing.T) *Table[K, V] {
	tb := New[K, V](0)
	if diffOfferLog {
		t.Cleanup(tb.LogForDiff())
		tb.log.asked.Store(true) // as if a Diff had asked: log from the first change
		if diffLogLimit != 0 {
			tb.log.limit = diffLogLimit
		}
	}
	return tb
}

// TestDiffThroughTheLog runs the tests of Diff between two snapshots of
// one table with the table keeping its change log, and no bound on the
// entries Diff reads from it, so that it reads the log whenever the log
// reaches back to the older snapshot: the model's many small tables drop
// old blocks of their log (kept short here), which makes Diff walk the
// slots for the older snapshots and read the log for the newer ones. It
// fails if the log answered too few of the comparisons. Across growth,
// the log keeps enough blocks to reach back to the first snapshot.
func TestDiffThroughTheLog(t *testing.T) {
	was := logShare
	logShare = 0
	diffOfferLog = true
	var viaLog atomic.Int64
	onLogDiff = func() { viaLog.Add(1) }
	wasEnough := underWriterEnough
	t.Cleanup(func() {
		logShare, diffOfferLog, diffLogLimit, onLogDiff, underWriterEnough = was, false, 0, nil, wasEnough
	})
	for _, test := range []struct {
		name  string
		run   func(*testing.T)
		limit int
		want  int64
	}{
		{"model", TestDiffAgreesWithMaps, 0, 1000},
		{"across growth", TestDiffAcrossGrowth, 64, 2},
		{"under a writer", TestDiffUnderAWriter, 0, 100},
	} {
		before := viaLog.Load()
		diffLogLimit = test.limit
		// Under a writer, how many Diffs the log answers depends on how
		// often the reader runs: a log nobody reads stops. The writer
		// goes on until the log has answered enough.
		underWriterEnough = func(diffs int64) bool { return diffs >= 100 && viaLog.Load()-before >= test.want }
		t.Run(test.name, test.run)
		if n := viaLog.Load() - before; n < test.want {
			t.Errorf("%s: the log answered %d Diffs, want at least %d", test.name, n, test.want)
		}
	}
}

// diffKey is the key of number i.
func diffKey(i int) string { return fmt.Sprint("k", i) }

// diffModel drives a table from New(0), so that it grows, with random
// Stores, Deletes and Batches of them over keys keys, and holds snapshots
// taken at random moments, each with a copy of a Go map kept beside the
// table. Each time it holds one it checks Diff between it and an earlier
// one, both ways; at the end, between every ordered pair of the
// snapshots held (the zero Snapshot among them). Now and then it lets
// snapshots go, collects and trims, so that the lists of older values
// lose what only those read. It returns how many times the table grew.
func diffModel[K comparable, V comparable](t *testing.T, seed uint64, keys, steps int, key func(int) K, value func(r *rand.Rand) V) int {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 2))
	tb := newDiffTable[K, V](t)
	m := map[K]V{}
	held := []diffHeld[K, V]{{}}
	arr, grown := tb.meta.Load().arr, 0
	check := func(a, b diffHeld[K, V], when string) {
		t.Helper()
		if p := diffMismatch(a, b); p != "" {
			t.Fatalf("seed %d, %s: %s", seed, when, p)
		}
	}
	for step := range steps {
		switch op := r.IntN(100); {
		case op < 45:
			k, v := key(r.IntN(keys)), value(r)
			tb.Store(k, v)
			m[k] = v
		case op < 70:
			k := key(r.IntN(keys))
			tb.Delete(k)
			delete(m, k)
		case op < 76:
			tb.Batch(func(b Batch[K, V]) {
				for range 1 + r.IntN(10) {
					k := key(r.IntN(keys))
					if r.IntN(3) == 0 {
						b.Delete(k)
						delete(m, k)
					} else {
						v := value(r)
						b.Store(k, v)
						m[k] = v
					}
				}
			})
		case op < 90:
			h := diffHeld[K, V]{tb.Snapshot(), maps.Clone(m)}
			other := held[r.IntN(len(held))]
			check(other, h, fmt.Sprint("step ", step))
			check(h, other, fmt.Sprint("step ", step))
			if len(held) < 12 {
				held = append(held, h)
			} else {
				held[1+r.IntN(len(held)-1)] = h // the other is let go
			}
		case op < 97:
			_ = tb.Snapshot() // taken and let go at once
		case op < 99:
			tb.Trim()
		default:
			runtime.GC() // ends the snapshots let go, for the next trim
		}
		if a := tb.meta.Load().arr; a != arr {
			arr = a
			grown++
		}
	}
	for _, a := range held {
		for _, b := range held {
			check(a, b, "at the end")
		}
	}
	return grown
}

// TestDiffAgreesWithMaps checks Diff against the difference of Go maps
// (diffModel), with values kept as a word (a few of them, so that keys
// are often stored again with the value they had, which is no change),
// as a pointer (from a small pool, likewise) and boxed (each Store a
// value of its own, so that equal values are the same box), string keys
// and boxed int keys, over few keys (many deletes, growth by deleted
// slots) and more, and with keys whose hashes collide.
func TestDiffAgreesWithMaps(t *testing.T) {
	pool := make([]*int, 4)
	for i := range pool {
		pool[i] = new(int)
	}
	const seeds, steps = 4, 1500
	for _, keys := range []int{40, 400} {
		t.Run(fmt.Sprint("keys=", keys), func(t *testing.T) {
			grown := 0
			for seed := range uint64(seeds) {
				t.Run(fmt.Sprint("word/seed=", seed), func(t *testing.T) {
					grown += diffModel(t, seed, keys, steps, diffKey, func(r *rand.Rand) uint64 { return uint64(r.IntN(3)) })
				})
				t.Run(fmt.Sprint("pointer/seed=", seed), func(t *testing.T) {
					grown += diffModel(t, seed, keys, steps, diffKey, func(r *rand.Rand) *int { return pool[r.IntN(len(pool))] })
				})
				n := 0
				t.Run(fmt.Sprint("boxed/seed=", seed), func(t *testing.T) {
					grown += diffModel(t, seed, keys, steps, func(i int) int { return i }, func(*rand.Rand) diffBox {
						n++
						return diffBox{fmt.Sprint("v", n), n}
					})
				})
			}
			if grown < 3*seeds {
				t.Errorf("the tables grew %d times in all, want at least once a run", grown)
			}
		})
	}
	t.Run("collisions", func(t *testing.T) {
		// Every key on one of three hashes, one of which begins its
		// probes at the last slot, so that they wrap around: the
		// lookups across arrays compare keys all along long runs.
		old := hashOverride
		t.Cleanup(func() { hashOverride = old })
		hseed := maphash.MakeSeed()
		hashOverride = func(k any) uint64 { return []uint64{0, 1 << 63, 1<<64 - 1}[maphash.Comparable(hseed, k)%3] }
		for seed := range uint64(2) {
			diffModel(t, seed, 100, steps, diffKey, func(r *rand.Rand) uint64 { return uint64(r.IntN(3)) })
		}
	})
}

// TestDiffAcrossGrowth takes a snapshot, deletes most of its keys, grows
// the table twice (the second time after deleting more keys in the
// array the first growth made), stores some of the deleted keys again,
// changes some others, and takes a second snapshot; after it, it stores
// more of the deleted keys again, so that their slots in the second
// snapshot's array hold no write it reads. Diff between the two, either
// way, must give each key that differs once, with its values.
func TestDiffAcrossGrowth(t *testing.T) {
	tb := newDiffTable[string, uint64](t)
	m := map[string]uint64{}
	store := func(k string, v uint64) { tb.Store(k, v); m[k] = v }
	del := func(k string) { tb.Delete(k); delete(m, k) }
	for i := range 2000 {
		store(diffKey(i), 1)
	}
	a := diffHeld[string, uint64]{tb.Snapshot(), maps.Clone(m)}
	for i := range 1500 {
		del(diffKey(i))
	}
	next := 2000
	growOnce := func() {
		for arr := tb.meta.Load().arr; tb.meta.Load().arr == arr; next++ {
			store(diffKey(next), 2)
		}
	}
	growOnce()
	for i := 1500; i < 1800; i++ {
		del(diffKey(i)) // in the array the first growth made
	}
	growOnce()
	for i := range 100 {
		store(diffKey(i), 3) // deleted before growth, stored again
	}
	for i := 1800; i < 1900; i++ {
		store(diffKey(i), 4)
	}
	b := diffHeld[string, uint64]{tb.Snapshot(), maps.Clone(m)}
	if a.s.arr == b.s.arr {
		t.Fatal("the table did not grow between the snapshots")
	}
	for i := 100; i < 200; i++ {
		tb.Store(diffKey(i), 5) // after b: its slot in b's array holds nothing b reads
	}
	tb.Store(diffKey(1950), 5)
	for _, p := range [][2]diffHeld[string, uint64]{{a, b}, {b, a}} {
		if msg := diffMismatch(p[0], p[1]); msg != "" {
			t.Error(msg)
		}
	}
	if got := len(diffOf(a.s, b.s)); got != 1900+next-2000 {
		t.Errorf("Diff gave %d keys, want %d", got, 1900+next-2000)
	}
}

// TestDiffZeroSnapshots checks that the zero Snapshot is empty to Diff:
// from it, every key of the other is added; to it, every key of the other
// is removed, with its value; from one zero Snapshot to another, nothing.
func TestDiffZeroSnapshots(t *testing.T) {
	tb := New[string, uint64](0)
	m := map[string]uint64{}
	for i := range 100 {
		tb.Store(diffKey(i), uint64(i))
		m[diffKey(i)] = uint64(i)
	}
	for i := range 30 {
		tb.Delete(diffKey(i))
		delete(m, diffKey(i))
	}
	full, zero := diffHeld[string, uint64]{tb.Snapshot(), maps.Clone(m)}, diffHeld[string, uint64]{}
	tb.Store(diffKey(50), 1000) // after the snapshot
	tb.Delete(diffKey(60))
	for _, p := range [][2]diffHeld[string, uint64]{{zero, full}, {full, zero}, {zero, zero}} {
		if msg := diffMismatch(p[0], p[1]); msg != "" {
			t.Error(msg)
		}
	}
	if n := len(diffOf(zero.s, full.s)); n != 70 {
		t.Errorf("from the zero Snapshot Diff gave %d keys, want 70", n)
	}
	empty := New[string, uint64](0).Snapshot()
	if got := diffOf(empty, zero.s); len(got) != 0 {
		t.Errorf("from an empty table's snapshot to the zero Snapshot Diff gave %v", got)
	}
}

// TestDiffStopsWhenFnReturnsFalse has fn return false at its first, and
// then at its second, call, and checks that Diff calls it no more: for
// changes in one array, for removals that only the walk of the older
// array across growth finds, from and to the zero Snapshot, and across
// two tables.
func TestDiffStopsWhenFnReturnsFalse(t *testing.T) {
	type pair struct {
		name     string
		from, to Snapshot[string, uint64]
	}
	var pairs []pair

	tb := New[string, uint64](0)
	for i := range 100 {
		tb.Store(diffKey(i), 1)
	}
	s1 := tb.Snapshot()
	for i := range 10 {
		tb.Store(diffKey(i), 2)
	}
	s2 := tb.Snapshot()
	pairs = append(pairs, pair{"one array", s1, s2}, pair{"one array, backwards", s2, s1})

	for i := range 10 {
		tb.Delete(diffKey(i))
	}
	for i, arr := 1000, tb.meta.Load().arr; tb.meta.Load().arr == arr; i++ {
		tb.Store(diffKey(i), 3)
		tb.Delete(diffKey(i)) // none of the new keys is left: only removals differ
	}
	s3 := tb.Snapshot()
	if s3.arr == s2.arr {
		t.Fatal("the table did not grow")
	}
	if got := len(diffOf(s2, s3)); got != 10 {
		t.Fatalf("across growth Diff gave %d keys, want the 10 removed", got)
	}
	pairs = append(pairs, pair{"removals across growth", s2, s3}, pair{"additions across growth", s3, s2})
	pairs = append(pairs, pair{"from zero", Snapshot[string, uint64]{}, s1}, pair{"to zero", s1, Snapshot[string, uint64]{}})

	other := New[string, uint64](0)
	for i := range 50 {
		other.Store(diffKey(2*i), 7)
	}
	pairs = append(pairs, pair{"two tables", s1, other.Snapshot()}, pair{"two tables, backwards", other.Snapshot(), s1})

	for _, p := range pairs {
		for stopAt := 1; stopAt <= 2; stopAt++ {
			calls := 0
			Diff(p.from, p.to, func(string, uint64, bool, uint64, bool) bool {
				calls++
				return calls < stopAt
			})
			if calls != stopAt {
				t.Errorf("%s: fn returned false at call %d, and was called %d times", p.name, stopAt, calls)
			}
		}
	}
}

// TestDiffTwoTables compares snapshots of two different tables, either
// way, against the difference of their maps: word values compare by
// value across tables too. Boxed values are each Store's own box, so
// across tables every key that both hold is given, even with equal values.
func TestDiffTwoTables(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var sides [2]diffHeld[string, uint64]
	for j := range sides {
		tb := New[string, uint64](0)
		m := map[string]uint64{}
		for range 3000 {
			k := diffKey(r.IntN(500))
			if r.IntN(4) == 0 {
				tb.Delete(k)
				delete(m, k)
			} else {
				v := uint64(r.IntN(3))
				tb.Store(k, v)
				m[k] = v
			}
		}
		sides[j] = diffHeld[string, uint64]{tb.Snapshot(), m}
	}
	for _, p := range [][2]diffHeld[string, uint64]{{sides[0], sides[1]}, {sides[1], sides[0]}} {
		if msg := diffMismatch(p[0], p[1]); msg != "" {
			t.Error(msg)
		}
	}

	x, y := New[int, diffBox](0), New[int, diffBox](0)
	for i := range 10 {
		x.Store(i, diffBox{"same", i})
		y.Store(i+5, diffBox{"same", i + 5})
	}
	if got := diffOf(x.Snapshot(), y.Snapshot()); len(got) != 15 {
		t.Errorf("across two tables of boxed values Diff gave %d keys, want all 15 (the 5 both hold are in boxes of their own)", len(got))
	}
}

// TestDiffBoxedValuesByBox checks what Diff compares: a key whose boxed
// value is stored again, equal, is given, with both values, for the
// Store made a new box; a key whose word value is stored again with the
// same word is not.
func TestDiffBoxedValuesByBox(t *testing.T) {
	boxed := New[string, diffBox](0)
	boxed.Store("a", diffBox{"x", 1})
	boxed.Store("b", diffBox{"y", 2})
	before := boxed.Snapshot()
	boxed.Store("a", diffBox{"x", 1})
	got := diffOf(before, boxed.Snapshot())
	want := map[string]diffChange[diffBox]{"a": {diffBox{"x", 1}, true, diffBox{"x", 1}, true, false}}
	if !maps.Equal(got, want) {
		t.Errorf("after a boxed value stored again, equal, Diff gave %v, want %v", got, want)
	}

	words := New[string, uint64](0)
	words.Store("a", 1)
	words.Store("b", 2)
	before2 := words.Snapshot()
	words.Store("a", 1)
	words.Store("b", 3)
	got2 := diffOf(before2, words.Snapshot())
	want2 := map[string]diffChange[uint64]{"b": {2, true, 3, true, false}}
	if !maps.Equal(got2, want2) {
		t.Errorf("after a word value stored again, the same, Diff gave %v, want %v", got2, want2)
	}
}

// TestDiffUnderAWriter runs Diff on another goroutine between snapshots
// the writer took (and copied its map for) while the writer goes on
// storing, deleting, batching and growing the table, so that the slots
// Diff reads move on under it; each result must still be the difference
// of the two maps. Run with -race, it also checks Diff's reads against
// the writer's writes.
// underWriterEnough reports whether TestDiffUnderAWriter's reader made
// enough comparisons, diffs of them, for the writer to stop.
var underWriterEnough = func(diffs int64) bool { return diffs >= 100 }

func TestDiffUnderAWriter(t *testing.T) {
	const keys, steps = 300, 20000
	tb := newDiffTable[string, uint64](t)
	var (
		mu       sync.Mutex
		held     []diffHeld[string, uint64]
		diffs    atomic.Int64
		failures atomic.Int32
		wg       sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		r := rand.New(rand.NewPCG(9, 9))
		for {
			select {
			case <-done:
				return
			default:
			}
			mu.Lock()
			n := len(held)
			if n < 2 {
				mu.Unlock()
				runtime.Gosched()
				continue
			}
			// Mostly the newest, whose slots the writer is moving on;
			// sometimes an old one, across growth.
			a, b := held[n-1-r.IntN(min(n, 4))], held[n-1]
			if r.IntN(4) == 0 {
				a = held[r.IntN(n)]
			}
			mu.Unlock()
			for _, p := range [][2]diffHeld[string, uint64]{{a, b}, {b, a}} {
				if msg := diffMismatch(p[0], p[1]); msg != "" && failures.Add(1) <= 3 {
					t.Error(msg)
				}
			}
			diffs.Add(1)
		}
	}()
	r := rand.New(rand.NewPCG(8, 8))
	m := map[string]uint64{}
	// Until the reader has made enough comparisons, however the two
	// goroutines are scheduled, for half a minute at most.
	start := time.Now()
	for step := 0; (step < steps || !underWriterEnough(diffs.Load())) && time.Since(start) < 30*time.Second; step++ {
		k := diffKey(r.IntN(keys))
		switch op := r.IntN(100); {
		case op < 50:
			v := uint64(r.IntN(4))
			tb.Store(k, v)
			m[k] = v
		case op < 80:
			tb.Delete(k)
			delete(m, k)
		case op < 82:
			tb.Batch(func(b Batch[string, uint64]) {
				for range 5 {
					k := diffKey(r.IntN(keys))
					b.Store(k, uint64(step))
					m[k] = uint64(step)
				}
			})
		case op < 85:
			h := diffHeld[string, uint64]{tb.Snapshot(), maps.Clone(m)}
			mu.Lock()
			held = append(held, h)
			mu.Unlock()
		}
		if failures.Load() > 0 {
			break
		}
	}
	close(done)
	wg.Wait()
}

// TestSame checks that Same is true of two snapshots of one table (of
// different versions, or across growth) and false of snapshots of two
// tables, and of a zero Snapshot with any other, itself included.
func TestSame(t *testing.T) {
	tb, other := New[string, uint64](0), New[string, uint64](0)
	s1 := tb.Snapshot()
	for i := range 100 {
		tb.Store(diffKey(i), 1) // grows the table
	}
	s2 := tb.Snapshot()
	var zero Snapshot[string, uint64]
	for _, c := range []struct {
		name string
		a, b Snapshot[string, uint64]
		want bool
	}{
		{"one table", s1, s2, true},
		{"one snapshot", s2, s2, true},
		{"two tables", s1, other.Snapshot(), false},
		{"zero and a snapshot", zero, s1, false},
		{"a snapshot and zero", s1, zero, false},
		{"zero and zero", zero, zero, false},
	} {
		if got := c.a.Same(c.b); got != c.want {
			t.Errorf("%s: Same = %v, want %v", c.name, got, c.want)
		}
	}
}

// BenchmarkDiff measures Diff between two snapshots of a table of 100,000
// keys with 100 Stores to distinct keys between them: one walk of the
// slots, and list reads for the 100.
func BenchmarkDiff(b *testing.B) {
	const n, changes = 100_000, 100
	tb := New[string, uint64](n)
	for i := range n {
		tb.Store(diffKey(i), uint64(i))
	}
	from := tb.Snapshot()
	for i, k := range rand.New(rand.NewPCG(1, 1)).Perm(n)[:changes] {
		tb.Store(diffKey(k), uint64(n+i))
	}
	to := tb.Snapshot()
	got := 0
	count := func(string, uint64, bool, uint64, bool) bool { got++; return true }
	for b.Loop() {
		got = 0
		Diff(from, to, count)
	}
	if got != changes {
		b.Fatalf("Diff gave %d keys, want %d", got, changes)
	}
	b.ReportMetric(float64(len(to.arr.slots)), "slots")
}
