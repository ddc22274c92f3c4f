package watchable_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// next reads the next snapshot, failing the test if none comes or the
// channel is closed.
func next[K comparable, V any](t *testing.T, ch <-chan watchable.Snapshot[K, V]) watchable.Snapshot[K, V] {
	t.Helper()
	select {
	case s, ok := <-ch:
		if !ok {
			t.Fatal("subscription closed; want a snapshot")
		}
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot within 10s")
	}
	panic("unreachable")
}

// nothingPending fails if a snapshot is readable. Writes deliver before they
// return, so this needs no waiting.
func nothingPending[K comparable, V any](t *testing.T, ch <-chan watchable.Snapshot[K, V]) {
	t.Helper()
	select {
	case s, ok := <-ch:
		t.Fatalf("unexpected read (ok=%v): %+v", ok, s)
	default:
	}
}

// closed fails unless ch is closed, after any pending snapshot was read.
func closed[K comparable, V any](t *testing.T, ch <-chan watchable.Snapshot[K, V]) {
	t.Helper()
	select {
	case s, ok := <-ch:
		if ok {
			t.Fatalf("got snapshot %+v; want the channel closed", s)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("subscription not closed within 10s")
	}
}

func sorted[K ~string | ~int, V any](u []watchable.Update[K, V]) []watchable.Update[K, V] {
	out := append([]watchable.Update[K, V](nil), u...)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func TestFirstSnapshot(t *testing.T) {
	ctx := t.Context()
	t.Run("empty map", func(t *testing.T) {
		var m watchable.Map[string, int]
		s := next(t, m.Subscribe(ctx))
		if s.State.Len() != 0 || len(s.Updates) != 0 || s.Revision != 0 {
			t.Fatalf("first snapshot of an empty map: %+v", s)
		}
	})
	t.Run("lists every entry", func(t *testing.T) {
		var m watchable.Map[string, int]
		m.Store("a", 1)
		m.Store("b", 2)
		s := next(t, m.Subscribe(ctx))
		want := []watchable.Update[string, int]{{Key: "a", Value: 1}, {Key: "b", Value: 2}}
		if diff := cmp.Diff(want, sorted(s.Updates)); diff != "" {
			t.Fatalf("first Updates (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"a": 1, "b": 2}, s.State.Map()); diff != "" {
			t.Fatalf("first State (-want +got):\n%s", diff)
		}
		if s.Revision != 2 {
			t.Fatalf("Revision = %d; want 2", s.Revision)
		}
	})
}

func TestFirstSnapshotSurvivesNoNetChange(t *testing.T) {
	tests := []struct {
		name   string
		before map[string]int
		writes func(m *watchable.Map[string, int])
	}{
		{"empty map, key appears and vanishes", nil, func(m *watchable.Map[string, int]) { m.Store("a", 1); m.Delete("a") }},
		{"listed entry deleted", map[string]int{"a": 1}, func(m *watchable.Map[string, int]) { m.Delete("a") }},
		{"batch that changes nothing net", nil, func(m *watchable.Map[string, int]) {
			m.Batch(func(b *watchable.Batch[string, int]) { b.Store("a", 1); b.Delete("a") })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m watchable.Map[string, int]
			m.Replace(tt.before)
			ch := m.Subscribe(t.Context())
			tt.writes(&m)
			// The subscriber has not read its first snapshot yet: it must
			// still find one, holding the newest contents.
			select {
			case s := <-ch:
				if diff := cmp.Diff(m.LoadAll(), s.State.Map()); diff != "" {
					t.Fatalf("first State (-want +got):\n%s", diff)
				}
				if len(s.Updates) != s.State.Len() {
					t.Fatalf("first Updates %+v do not list State", s.Updates)
				}
				if s.Revision != m.Revision() {
					t.Fatalf("Revision = %d; want %d", s.Revision, m.Revision())
				}
			default:
				t.Fatal("the first snapshot is gone")
			}
			nothingPending(t, ch)
		})
	}
}

func TestNetChanges(t *testing.T) {
	type U = watchable.Update[string, int]
	tests := []struct {
		name   string
		before map[string]int // contents when the subscriber reads its first snapshot
		writes func(m *watchable.Map[string, int])
		want   []U // nil: no snapshot at all
	}{
		{"store new", nil, func(m *watchable.Map[string, int]) { m.Store("a", 1) }, []U{{Key: "a", Value: 1}}},
		{"store twice keeps newest", nil, func(m *watchable.Map[string, int]) { m.Store("a", 1); m.Store("a", 2) }, []U{{Key: "a", Value: 2}}},
		{"store equal delivers nothing", map[string]int{"a": 1}, func(m *watchable.Map[string, int]) { m.Store("a", 1) }, nil},
		{"appear then vanish delivers nothing", nil, func(m *watchable.Map[string, int]) { m.Store("a", 1); m.Delete("a") }, nil},
		{"delete missing delivers nothing", nil, func(m *watchable.Map[string, int]) { m.Delete("a") }, nil},
		{"delete carries the value the subscriber saw", map[string]int{"a": 1}, func(m *watchable.Map[string, int]) { m.Store("a", 2); m.Delete("a") }, []U{{Key: "a", Delete: true, Value: 1}}},
		{"delete then store again", map[string]int{"a": 1}, func(m *watchable.Map[string, int]) { m.Delete("a"); m.Store("a", 3) }, []U{{Key: "a", Value: 3}}},
		{"several keys", map[string]int{"a": 1, "b": 2}, func(m *watchable.Map[string, int]) {
			m.Store("c", 3)
			m.Delete("a")
			m.Store("x", 9)
			m.Store("b", 20)
			m.Delete("x")
		}, []U{{Key: "a", Delete: true, Value: 1}, {Key: "b", Value: 20}, {Key: "c", Value: 3}}},
		{"batch", map[string]int{"a": 1}, func(m *watchable.Map[string, int]) {
			m.Batch(func(b *watchable.Batch[string, int]) { b.Delete("a"); b.Store("b", 2); b.Store("c", 3); b.Delete("c") })
		}, []U{{Key: "a", Delete: true, Value: 1}, {Key: "b", Value: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m watchable.Map[string, int]
			for k, v := range tt.before {
				m.Store(k, v)
			}
			ch := m.Subscribe(t.Context())
			first := next(t, ch)
			tt.writes(&m)
			if tt.want == nil {
				nothingPending(t, ch)
				return
			}
			s := next(t, ch)
			if diff := cmp.Diff(tt.want, sorted(s.Updates)); diff != "" {
				t.Fatalf("Updates (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(m.LoadAll(), s.State.Map()); diff != "" {
				t.Fatalf("State is not the map's contents (-want +got):\n%s", diff)
			}
			if s.Revision != m.Revision() || s.Revision <= first.Revision {
				t.Fatalf("Revision = %d; map at %d, first snapshot at %d", s.Revision, m.Revision(), first.Revision)
			}
			nothingPending(t, ch)
		})
	}
}

func TestUnreadFirstSnapshotMerges(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	m.Store("b", 2)
	ch := m.Subscribe(t.Context())
	m.Delete("a")   // vanishes before the first read: not listed
	m.Store("b", 3) // listed with its newest value
	m.Store("c", 4)
	s := next(t, ch)
	want := []watchable.Update[string, int]{{Key: "b", Value: 3}, {Key: "c", Value: 4}}
	if diff := cmp.Diff(want, sorted(s.Updates)); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
	nothingPending(t, ch)
}

func TestSubscribersSeeTheirOwnWindows(t *testing.T) {
	var m watchable.Map[string, int]
	fast := m.Subscribe(t.Context())
	slow := m.Subscribe(t.Context())
	next(t, fast)
	next(t, slow)
	m.Store("a", 1)
	if s := next(t, fast); len(s.Updates) != 1 {
		t.Fatalf("fast: %+v", s)
	}
	m.Store("a", 2)
	m.Store("b", 1)
	if s := next(t, fast); len(s.Updates) != 2 {
		t.Fatalf("fast, second: %+v", s)
	}
	s := next(t, slow)
	want := []watchable.Update[string, int]{{Key: "a", Value: 2}, {Key: "b", Value: 1}}
	if diff := cmp.Diff(want, sorted(s.Updates)); diff != "" {
		t.Fatalf("slow Updates (-want +got):\n%s", diff)
	}
}

func TestSubscribeSubset(t *testing.T) {
	type U = watchable.Update[string, int]
	var m watchable.Map[string, int]
	m.Store("even", 2)
	m.Store("odd", 1)
	even := func(_ string, v int) bool { return v%2 == 0 }
	ch := m.SubscribeSubset(t.Context(), even)

	s := next(t, ch)
	if diff := cmp.Diff([]U{{Key: "even", Value: 2}}, s.Updates); diff != "" {
		t.Fatalf("first Updates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"even": 2}, s.State.Map()); diff != "" {
		t.Fatalf("first State (-want +got):\n%s", diff)
	}

	m.Store("odd", 3) // never matched: nothing
	m.Delete("odd")
	nothingPending(t, ch)

	m.Store("even", 3)  // stops matching: a delete carrying the last value seen
	m.Store("other", 5) // never matched
	m.Store("new", 4)   // starts matching
	s = next(t, ch)
	want := []U{{Key: "even", Delete: true, Value: 2}, {Key: "new", Value: 4}}
	if diff := cmp.Diff(want, sorted(s.Updates)); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"new": 4}, s.State.Map()); diff != "" {
		t.Fatalf("State (-want +got):\n%s", diff)
	}
	if s.Revision != m.Revision() {
		t.Fatalf("Revision = %d; want the map's %d", s.Revision, m.Revision())
	}

	m.Store("even", 6) // matches again
	s = next(t, ch)
	if diff := cmp.Diff([]U{{Key: "even", Value: 6}}, s.Updates); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	var m watchable.Map[string, int]
	read := m.Subscribe(t.Context())
	unread := m.Subscribe(t.Context())
	next(t, read)
	m.Store("a", 1)
	m.Close()

	// The snapshot pending at Close is still delivered, then the close.
	if s := next(t, unread); s.State.Len() != 1 {
		t.Fatalf("pending snapshot: %+v", s)
	}
	closed(t, unread)
	if s := next(t, read); len(s.Updates) != 1 {
		t.Fatalf("pending snapshot: %+v", s)
	}
	closed(t, read)

	closed(t, m.Subscribe(t.Context()))
	if n := m.Subscribers(); n != 0 {
		t.Fatalf("Subscribers after Close = %d", n)
	}
}

func TestContextEndsSubscription(t *testing.T) {
	var m watchable.Map[string, int]
	ctx, cancel := context.WithCancel(t.Context())
	ch := m.Subscribe(ctx)
	other := m.Subscribe(t.Context())
	if n := m.Subscribers(); n != 2 {
		t.Fatalf("Subscribers = %d; want 2", n)
	}
	next(t, ch)
	cancel()
	closed(t, ch)
	if n := m.Subscribers(); n != 1 {
		t.Fatalf("Subscribers after cancel = %d; want 1", n)
	}
	m.Store("a", 1) // must not touch the cancelled subscription
	if s := next(t, other); len(s.Updates) != 1 || s.Revision != 1 {
		t.Fatalf("other subscriber: %+v", s)
	}

	done, stop := context.WithCancel(t.Context())
	stop()
	closed(t, m.Subscribe(done))
}

func TestUnreadSubscriberDoesNotBlockWriters(t *testing.T) {
	var m watchable.Map[int, int]
	stalled := m.Subscribe(t.Context()) // never read until the end
	const keys, writes = 100, 100_000
	for i := range writes {
		m.Store(i%keys, i)
	}
	s := next(t, stalled)
	if len(s.Updates) != keys {
		t.Fatalf("pending Updates = %d; want one per changed key (%d)", len(s.Updates), keys)
	}
	if s.Revision != writes {
		t.Fatalf("Revision = %d; want %d", s.Revision, writes)
	}
	nothingPending(t, stalled)
}

func TestBatchPanicAppliesNothing(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	ch := m.Subscribe(t.Context())
	next(t, ch)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic in the batch function did not propagate")
			}
		}()
		m.Batch(func(b *watchable.Batch[string, int]) {
			b.Store("b", 2)
			b.Delete("a")
			panic("boom")
		})
	}()
	nothingPending(t, ch)
	if diff := cmp.Diff(map[string]int{"a": 1}, m.LoadAll()); diff != "" {
		t.Fatalf("contents after a panicking batch (-want +got):\n%s", diff)
	}
	m.Store("c", 3) // the map still works
	next(t, ch)
}

func TestBatchSeesItsOwnWrites(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	m.Batch(func(b *watchable.Batch[string, int]) {
		b.Store("b", 2)
		if v, ok := b.Load("b"); !ok || v != 2 {
			t.Errorf("Load(b) in batch = %v, %v", v, ok)
		}
		b.Delete("a")
		if _, ok := b.Load("a"); ok {
			t.Error("Load(a) in batch after Delete found it")
		}
		if b.Len() != 1 {
			t.Errorf("Len in batch = %d; want 1", b.Len())
		}
	})
}

func TestReplace(t *testing.T) {
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2, "c": 3})
	ch := m.Subscribe(t.Context())
	next(t, ch)
	m.Replace(map[string]int{"a": 1, "b": 20, "d": 4})
	s := next(t, ch)
	want := []watchable.Update[string, int]{
		{Key: "b", Value: 20}, {Key: "c", Delete: true, Value: 3}, {Key: "d", Value: 4},
	}
	if diff := cmp.Diff(want, sorted(s.Updates)); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
	m.Replace(map[string]int{"a": 1, "b": 20, "d": 4})
	nothingPending(t, ch)
}

func TestPanickingIncludeLeavesEveryoneConsistent(t *testing.T) {
	var m watchable.Map[string, int]
	ch := m.SubscribeSubset(t.Context(), func(k string, _ int) bool {
		if k == "boom" {
			panic("include: boom")
		}
		return true
	})
	whole := m.Subscribe(t.Context())
	next(t, ch)
	next(t, whole)

	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic in include did not reach the writer")
			}
		}()
		m.Store("boom", 1)
	}()
	if _, ok := m.Load("boom"); ok || m.Revision() != 0 {
		t.Fatalf("a write whose include panicked was applied (revision %d)", m.Revision())
	}
	nothingPending(t, whole)
	nothingPending(t, ch)

	m.Store("ok", 1)
	for _, c := range []<-chan watchable.Snapshot[string, int]{ch, whole} {
		s := next(t, c)
		want := []watchable.Update[string, int]{{Key: "ok", Value: 1}}
		if diff := cmp.Diff(want, s.Updates); diff != "" {
			t.Fatalf("Updates (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]int{"ok": 1}, s.State.Map()); diff != "" {
			t.Fatalf("State (-want +got):\n%s", diff)
		}
	}
}

func TestReplaceCopiesValues(t *testing.T) {
	var m watchable.Map[string, *item]
	mine := map[string]*item{"a": {Name: "a", Tags: []string{"x"}}, "b": {Name: "b"}}
	m.Replace(mine)
	mine["a"].Tags[0] = "mutated"
	mine["b"].Name = "mutated"
	if v, _ := m.State().Get("a"); v.Tags[0] != "x" {
		t.Fatalf("Replace kept the caller's memory: %+v", v)
	}
	if v, _ := m.State().Get("b"); v.Name != "b" {
		t.Fatalf("Replace kept the caller's memory: %+v", v)
	}
	rev := m.Revision()
	m.Replace(map[string]*item{"a": {Name: "a", Tags: []string{"x"}}, "b": {Name: "b"}})
	if m.Revision() != rev {
		t.Fatalf("Replace with deep-equal values made revision %d; want %d", m.Revision(), rev)
	}
}

// A subscription's windows share a chunk of memory, one after the other:
// what a reader does with its Updates, appending included, must not reach
// the windows that follow, nor they it.
func TestUpdatesBelongToTheReader(t *testing.T) {
	var m watchable.Map[string, int]
	ch := m.Subscribe(t.Context())
	next(t, ch)
	m.Store("a", 1)
	s1 := next(t, ch)
	mine := append(s1.Updates, watchable.Update[string, int]{Key: "x", Value: 99})
	mine[0].Value = 100
	for i := range 3 {
		m.Store("b", i)
		m.Store(fmt.Sprint("c", i), i)
		s := next(t, ch)
		want := []watchable.Update[string, int]{{Key: "b", Value: i}, {Key: fmt.Sprint("c", i), Value: i}}
		if !slices.Equal(s.Updates, want) {
			t.Fatalf("window %d: Updates = %v; want %v", i, s.Updates, want)
		}
	}
	if want := []watchable.Update[string, int]{{Key: "a", Value: 1}}; !slices.Equal(s1.Updates, want) {
		t.Errorf("the first window became %v; want %v", s1.Updates, want)
	}
	if want := []watchable.Update[string, int]{{Key: "a", Value: 100}, {Key: "x", Value: 99}}; !slices.Equal(mine, want) {
		t.Errorf("the reader's own slice became %v; want %v", mine, want)
	}
}

// A subscriber that reads every write costs the writer no allocation of its
// own: the windows take turns in a chunk rather than a slice each. What a
// Store allocates while the subscriber holds every version is what it
// allocates while a State does.
func TestKeptUpSubscriberAllocatesNoWindow(t *testing.T) {
	var m watchable.Map[int, int]
	for i := range 4 {
		m.Store(i, i)
	}
	ch := m.Subscribe(t.Context())
	next(t, ch)
	i := 0
	frozen := testing.AllocsPerRun(1000, func() {
		i++
		m.Store(i%4, -i)
		_ = m.State()
	})
	read := testing.AllocsPerRun(1000, func() {
		i++
		m.Store(i%4, -i)
		<-ch
	})
	if read > frozen {
		t.Errorf("a Store read by a subscriber allocates %v times; one that a State freezes, %v", read, frozen)
	}
}

// TestLargeWindowIsNotRetained checks that a subscription whose window once
// held every entry of a large map (its first snapshot went unread across a
// write) does not keep that window's bookkeeping after the reader caught up.
func TestLargeWindowIsNotRetained(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a large map")
	}
	// The heap counts every goroutine's memory: the least of three
	// measures leaves out what goroutines that earlier tests left ending
	// let go of meanwhile (with -count above 1 on a busy machine).
	least := uint64(math.MaxUint64)
	for range 3 {
		least = min(least, retainedByCaughtUpSubscription(t))
	}
	// Indexing n keys takes several megabytes; a caught-up subscription
	// needs almost nothing.
	if least > 1<<20 {
		t.Fatalf("a caught-up subscription retains %d KiB", least>>10)
	}
}

// retainedByCaughtUpSubscription returns the bytes of heap that ending a
// caught-up subscription to a map of 200,000 entries gives back (0 if the
// heap grew), where the subscription's first snapshot went unread across
// a write, so that its window once held every entry.
func retainedByCaughtUpSubscription(t *testing.T) uint64 {
	const n = 200_000
	var m watchable.Map[int, int]
	m.Batch(func(b *watchable.Batch[int, int]) {
		for i := range n {
			b.Store(i, i)
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ch := m.Subscribe(ctx)
	m.Store(-1, 1) // merges into the unread first snapshot of n entries
	if s := next(t, ch); len(s.Updates) != n+1 {
		t.Fatalf("first snapshot lists %d entries; want %d", len(s.Updates), n+1)
	}
	m.Store(-2, 1) // a small window; the reader has caught up
	next(t, ch)

	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	with := heap()
	cancel()
	closed(t, ch)
	without := heap()
	runtime.KeepAlive(&m)
	if with > without {
		return with - without
	}
	return 0
}

func TestBatchUsedAfterReturnPanics(t *testing.T) {
	var m watchable.Map[string, int]
	var kept *watchable.Batch[string, int]
	m.Batch(func(b *watchable.Batch[string, int]) { kept = b })
	uses := map[string]func(){
		"Store":  func() { kept.Store("a", 1) },
		"Delete": func() { kept.Delete("a") },
		"Load":   func() { kept.Load("a") },
		"Len":    func() { kept.Len() },
	}
	for name, use := range uses {
		t.Run(name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, "watchable: Batch") {
					t.Fatalf("panic %q does not say the Batch was used too late", msg)
				}
			}()
			use()
			t.Fatal("using a Batch after Map.Batch returned did not panic")
		})
	}
	if m.Revision() != 0 {
		t.Fatalf("a late Batch write changed the map: revision %d", m.Revision())
	}
}

// A subscriber that lags now and then, a window of thousands of keys among
// windows of a few, costs the writer the bookkeeping of a large window
// (what the subscriber saw of each key, and the index locating the keys)
// once, not at every lag: both are kept for the next.
func TestLaggingWindowKeepsItsBookkeeping(t *testing.T) {
	const lag = 3000 // every key of the map: each window copies the same nodes
	var m watchable.Map[int, int]
	m.Batch(func(b *watchable.Batch[int, int]) {
		for i := range lag {
			b.Store(i, i)
		}
	})
	ch := m.Subscribe(t.Context())
	next(t, ch)
	v := 0
	lagging := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range lag {
			v++
			m.Store(i, -v)
		}
		runtime.ReadMemStats(&after)
		if s := next(t, ch); len(s.Updates) != lag {
			t.Fatalf("a lagging window of %d updates; want %d", len(s.Updates), lag)
		}
		for i := range 3 { // windows of a key each
			v++
			m.Store(i, -v)
			next(t, ch)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	first, second, third := lagging(), lagging(), lagging()
	t.Logf("bytes allocated by lagging windows of %d keys: %d, %d, %d", lag, first, second, third)
	// The updates themselves, which the reader gets, and the copies of
	// the trie's nodes the window writes to, are allocated every time:
	// about a third of the first window's bytes. Making the bookkeeping
	// again took more than two thirds in all.
	if 5*second > 3*first || 5*third > 3*first {
		t.Errorf("later lagging windows allocate %d and %d bytes; the first %d: want at most 60%%", second, third, first)
	}
}
