package watchable_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

type endpoint struct {
	Addr   string
	Labels map[string]string
}

// applyUpdates applies updates to a copy of seen, failing on a key listed
// twice or a delete that does not carry the value seen.
func applyUpdates[V any](t *testing.T, seen map[string]V, updates []watchable.Update[string, V]) map[string]V {
	t.Helper()
	out := maps.Clone(seen)
	listed := map[string]bool{}
	for _, u := range updates {
		if listed[u.Key] {
			t.Fatalf("key %q listed twice", u.Key)
		}
		listed[u.Key] = true
		if u.Delete {
			old, had := out[u.Key]
			if !had || !watchable.DeepEqual(old, u.Value) {
				t.Fatalf("delete of %q carries %v, the reader saw %v (present %v)", u.Key, u.Value, old, had)
			}
			delete(out, u.Key)
			continue
		}
		out[u.Key] = u.Value
	}
	return out
}

func keysOf[V any](updates []watchable.Update[string, V]) map[string]bool {
	out := map[string]bool{}
	for _, u := range updates {
		out[u.Key] = u.Delete
	}
	return out
}

func ep(addr string) *endpoint {
	return &endpoint{Addr: addr, Labels: map[string]string{"zone": "a"}}
}

// endpointStates makes three States of a map of endpoints: first holds a,
// b and c; second follows an equal store to a, a change to b, a change to
// c undone, a delete of an absent d, d added, and e added and deleted;
// third follows a delete of a.
func endpointStates() (first, second, third watchable.State[string, *endpoint]) {
	var m watchable.Map[string, *endpoint]
	m.Store("a", ep("10.0.0.1"))
	m.Store("b", ep("10.0.0.2"))
	m.Store("c", ep("10.0.0.3"))
	first = m.State()
	m.Store("a", ep("10.0.0.1")) // equal: not a change
	m.Store("b", ep("10.0.0.9")) // changed
	m.Store("c", ep("10.0.0.4")) // changed, then changed back
	m.Store("c", ep("10.0.0.3"))
	m.Delete("d")                // absent: nothing
	m.Store("d", ep("10.0.0.5")) // added
	m.Store("e", ep("10.0.0.6")) // added, then deleted
	m.Delete("e")
	second = m.State()
	m.Delete("a")
	return first, second, m.State()
}

func TestUpdatesSince(t *testing.T) {
	first, second, third := endpointStates()

	// Since the zero State: every entry.
	all := first.UpdatesSince(watchable.State[string, *endpoint]{})
	if diff := cmp.Diff(map[string]bool{"a": false, "b": false, "c": false}, keysOf(all)); diff != "" {
		t.Fatalf("since the zero State (-want +got):\n%s", diff)
	}
	if got := first.UpdatesSince(first); len(got) != 0 {
		t.Fatalf("a State since itself lists %v", got)
	}

	got := second.UpdatesSince(first)
	if diff := cmp.Diff(map[string]bool{"b": false, "d": false}, keysOf(got)); diff != "" {
		t.Fatalf("second since first (-want +got):\n%s", diff)
	}
	got = third.UpdatesSince(first)
	if diff := cmp.Diff(map[string]bool{"a": true, "b": false, "d": false}, keysOf(got)); diff != "" {
		t.Fatalf("third since first (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(third.Map(), applyUpdates(t, first.Map(), got)); diff != "" {
		t.Fatalf("first plus the updates is not third (-want +got):\n%s", diff)
	}
	// Backwards works too: the updates that undo the changes.
	got = first.UpdatesSince(third)
	if diff := cmp.Diff(map[string]bool{"a": false, "b": false, "d": true}, keysOf(got)); diff != "" {
		t.Fatalf("first since third (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(first.Map(), applyUpdates(t, third.Map(), got)); diff != "" {
		t.Fatalf("third plus the updates is not first (-want +got):\n%s", diff)
	}
}

func TestUpdatesSinceAcrossMaps(t *testing.T) {
	var a, b watchable.Map[string, []string]
	for i, k := range []string{"x", "y", "z", "w"} {
		a.Store(k, []string{k})
		if i < 3 {
			b.Store(k, []string{k}) // equal values in another map
		}
	}
	b.Store("y", []string{"changed"})
	b.Store("v", nil)
	got := b.State().UpdatesSince(a.State())
	if diff := cmp.Diff(map[string]bool{"y": false, "v": false, "w": true}, keysOf(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
}

// TestUpdatesSinceBetweenAViewAndTheMap checks UpdatesSince between a
// subset subscriber's State, which is the subscriber's own, and the map's,
// in both directions: the entries outside the subset come as stores one
// way and as deletes with their values the other, and a changed entry
// inside it as a store either way.
func TestUpdatesSinceBetweenAViewAndTheMap(t *testing.T) {
	var m watchable.Map[string, int]
	for i, k := range []string{"a", "b", "c", "d"} {
		m.Store(k, i)
	}
	even := func(_ string, v int) bool { return v%2 == 0 }
	snap := <-m.SubscribeSubset(t.Context(), even) // a: 0, c: 2
	m.Store("c", 4)                                // still in the subset, changed
	whole := m.State()                             // a: 0, b: 1, c: 4, d: 3

	got := whole.UpdatesSince(snap.State)
	if diff := cmp.Diff(map[string]bool{"b": false, "c": false, "d": false}, keysOf(got)); diff != "" {
		t.Fatalf("the map since the view (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(whole.Map(), applyUpdates(t, snap.State.Map(), got)); diff != "" {
		t.Fatalf("the view plus the updates is not the map (-want +got):\n%s", diff)
	}
	got = snap.State.UpdatesSince(whole)
	if diff := cmp.Diff(map[string]bool{"b": true, "c": false, "d": true}, keysOf(got)); diff != "" {
		t.Fatalf("the view since the map (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(snap.State.Map(), applyUpdates(t, whole.Map(), got)); diff != "" {
		t.Fatalf("the map plus the updates is not the view (-want +got):\n%s", diff)
	}
}

// TestUpdatesSinceLazyReader runs a writer and a reader that follows the
// map with Notify, State and UpdatesSince, concurrently; under -race this
// checks that the States it compares never change under it while the
// writer changes the map in place.
func TestUpdatesSinceLazyReader(t *testing.T) {
	// At 20,000 keys, UpdatesSince between two close States reads the
	// keys that changed from the table's log of changes, which Notify
	// keeps; at 500, walking the table costs less, and it does that.
	for _, keys := range []int{500, 20_000} {
		t.Run(fmt.Sprint("keys=", keys), func(t *testing.T) { updatesSinceLazyReader(t, keys) })
	}
}

func updatesSinceLazyReader(t *testing.T, keys int) {
	const writes = 20_000
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var m watchable.Map[string, *endpoint]
	signal := make(chan struct{}, 1)
	m.Notify(ctx, signal)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range writes {
			if i%100 == 0 {
				runtime.Gosched() // let the reader in now and then
			}
			k := string(rune('a'+i%26)) + string(rune('a'+i/26%(keys/26+1)))
			if i%7 == 0 {
				m.Delete(k)
			} else {
				m.Store(k, &endpoint{Addr: k, Labels: map[string]string{"n": string(rune('0' + i%10))}})
			}
		}
	}()

	var last watchable.State[string, *endpoint]
	seen := map[string]*endpoint{}
	read := func() {
		cur := m.State()
		seen = applyUpdates(t, seen, cur.UpdatesSince(last))
		last = cur
		if diff := cmp.Diff(cur.Map(), seen); diff != "" {
			t.Fatalf("view rebuilt from UpdatesSince differs from State (-state +rebuilt):\n%s", diff)
		}
	}
	reads := 0
	for finished := false; !finished; {
		select {
		case <-signal:
			read()
			reads++
		case <-done:
			finished = true
		case <-ctx.Done():
			t.Fatal("the writer did not finish in time")
		}
	}
	read()
	if diff := cmp.Diff(m.State().Map(), seen); diff != "" {
		t.Fatalf("after the last write (-want +got):\n%s", diff)
	}
	t.Logf("%d reads for %d writes", reads, writes)
}

// heartbeat's Equal ignores its timestamp, so storing a newer one is
// silent: kept in the map, but not a change.
type heartbeat struct {
	N, At int
}

func (h heartbeat) Equal(o heartbeat) bool { return h.N == o.N }

// TestUpdatesSinceCloseStatesOfALargeMap follows a map of 20,000 entries
// with Notify, State and UpdatesSince, a few writes of every kind between
// reads, on one goroutine: UpdatesSince between two close States of a map
// this large reads the keys that changed from the table's log of changes,
// which Notify keeps, where TestUpdatesSinceLazyReader's reader mostly
// falls too far behind and walks the table. Each rebuilt view must be the
// State, and at the end, after the registration ends (and the log with
// it), UpdatesSince between the first and the last State must still give
// the whole difference.
func TestUpdatesSinceCloseStatesOfALargeMap(t *testing.T) {
	const keys, rounds = 20_000, 300
	ctx, cancel := context.WithCancel(t.Context())
	var m watchable.Map[string, int]
	m.Notify(ctx, make(chan struct{}, 1))
	m.Batch(func(b *watchable.Batch[string, int]) {
		for k := range keys {
			b.Store(fmt.Sprint(k), k)
		}
	})
	r := rand.New(rand.NewPCG(1, 2))
	first := m.State()
	last, seen := first, first.Map()
	for round := range rounds {
		for range 1 + r.IntN(20) {
			k := fmt.Sprint(r.IntN(keys + 100)) // a few keys new to the map
			switch op := r.IntN(10); {
			case op < 5:
				m.Store(k, r.IntN(3)) // often the value it has: no change
			case op < 8:
				m.Delete(k)
			case op < 9:
				m.CompareAndSwap(k, r.IntN(3), round)
			default:
				m.Batch(func(b *watchable.Batch[string, int]) {
					b.Store(k, round)
					b.Delete(fmt.Sprint(r.IntN(keys)))
				})
			}
		}
		cur := m.State()
		seen = applyUpdates(t, seen, cur.UpdatesSince(last))
		if want := cur.Map(); !maps.Equal(want, seen) {
			t.Fatalf("round %d: the view rebuilt from UpdatesSince differs from State (-state +rebuilt):\n%s", round, cmp.Diff(want, seen))
		}
		last = cur
	}
	cancel()
	m.Store("after", -1) // after the registration ends: not logged
	end := m.State()
	if diff := cmp.Diff(end.Map(), applyUpdates(t, first.Map(), end.UpdatesSince(first))); diff != "" {
		t.Fatalf("first plus its updates to the end is not the end (-want +got):\n%s", diff)
	}
}

// TestUpdatesSinceBesideSubscriptions runs one writer making every kind of
// write (Store, Delete, Batch, Replace, CompareAndSwap, LoadOrStore,
// LoadAndDelete) while a lazy reader follows the map with Notify, State and
// UpdatesSince, and subscribers of every kind (whole map, subset, keys,
// partition, and one that never reads, which seals and unseals versions)
// check UpdatesSince between the States of their own snapshots. Values are
// integers and pointers (changed in place with one word), strings (whose
// nodes are replaced) and a struct whose Equal ignores a field (silent
// stores). Every State must hold what it held when it was taken, and the
// updates applied to the older one must give the newer one, up to
// DeepEqual. Run with -race.
func TestUpdatesSinceBesideSubscriptions(t *testing.T) {
	t.Run("int", func(t *testing.T) {
		updatesBesideSubscriptions(t, func(r *rand.Rand) int { return r.IntN(4) })
	})
	t.Run("string", func(t *testing.T) {
		updatesBesideSubscriptions(t, func(r *rand.Rand) string { return string(rune('a' + r.IntN(4))) })
	})
	t.Run("pointer", func(t *testing.T) {
		updatesBesideSubscriptions(t, func(r *rand.Rand) *heartbeat { return &heartbeat{r.IntN(3), r.IntN(1000)} })
	})
	t.Run("Equal ignoring a field", func(t *testing.T) {
		updatesBesideSubscriptions(t, func(r *rand.Rand) heartbeat { return heartbeat{r.IntN(3), r.IntN(1000)} })
	})
}

func updatesBesideSubscriptions[V any](t *testing.T, mk func(*rand.Rand) V) {
	const keys, writes = 100, 10_000
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var m watchable.Map[int, V]
	signal := make(chan struct{}, 1)
	m.Notify(ctx, signal) // before the first State: no write is missed
	same := func(a, b map[int]V) bool { return maps.EqualFunc(a, b, watchable.DeepEqual[V]) }
	apply := func(seen map[int]V, updates []watchable.Update[int, V]) (map[int]V, bool) {
		out := maps.Clone(seen)
		if out == nil {
			out = map[int]V{}
		}
		listed := map[int]bool{}
		for _, u := range updates {
			old, had := out[u.Key]
			switch {
			case listed[u.Key]:
				return nil, false
			case u.Delete && (!had || !watchable.DeepEqual(old, u.Value)):
				return nil, false
			case !u.Delete && had && watchable.DeepEqual(old, u.Value):
				return nil, false // not a change
			case u.Delete:
				delete(out, u.Key)
			default:
				out[u.Key] = u.Value
			}
			listed[u.Key] = true
		}
		return out, true
	}

	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	done := make(chan struct{})
	errs := make(chan string, 16)
	report := func(s string) {
		select {
		case errs <- s:
		default:
		}
	}
	follow := func(name string, ch <-chan watchable.Snapshot[int, V]) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var prev watchable.State[int, V]
			var prevMap map[int]V
			for snap := range ch {
				cur := snap.State.Map()
				got, ok := apply(prevMap, snap.State.UpdatesSince(prev))
				if !ok || !same(got, cur) {
					report(name + ": UpdatesSince between two snapshots' States is not their difference")
					return
				}
				if !same(prev.Map(), prevMap) {
					report(name + ": the previous snapshot's State changed")
					return
				}
				prev, prevMap = snap.State, cur
			}
		}()
	}
	follow("Subscribe", m.Subscribe(ctx))
	follow("SubscribeSubset", m.SubscribeSubset(ctx, func(k int, _ V) bool { return k%3 == 0 }))
	follow("SubscribeKeys", m.SubscribeKeys(ctx, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89))
	parts := watchable.PartitionBy(ctx, m.View(), func(k int, _ V) int { return k % 4 })
	follow("partition", parts.Subscribe(ctx, 1))
	follow("partition sharing a view", parts.Subscribe(ctx, 1))
	_ = m.Subscribe(ctx) // never read

	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		r := rand.New(rand.NewPCG(3, 4))
		for range writes {
			k := r.IntN(keys)
			switch p := r.IntN(100); {
			case p < 40:
				m.Store(k, mk(r))
			case p < 50:
				m.Delete(k)
			case p < 60:
				m.Batch(func(b *watchable.Batch[int, V]) {
					for range r.IntN(5) {
						if k := r.IntN(keys); r.IntN(3) == 0 {
							b.Delete(k)
						} else {
							b.Store(k, mk(r))
						}
					}
				})
			case p < 62:
				all := m.LoadAll()
				for range 5 {
					all[r.IntN(keys)] = mk(r)
					delete(all, r.IntN(keys))
				}
				m.Replace(all)
			case p < 70:
				if v, ok := m.Load(k); ok {
					m.CompareAndSwap(k, v, mk(r))
				}
			case p < 80:
				m.LoadOrStore(k, mk(r))
			default:
				m.LoadAndDelete(k)
			}
		}
	}()

	var last watchable.State[int, V]
	var recent []watchable.State[int, V]
	var recentMaps []map[int]V
	seen := map[int]V{}
	read := func() {
		cur := m.State()
		curMap := cur.Map()
		var ok bool
		if seen, ok = apply(seen, cur.UpdatesSince(last)); !ok || !same(seen, curMap) {
			t.Fatalf("lazy reader: the view rebuilt from UpdatesSince is not the State")
		}
		for i, old := range recent {
			if !same(old.Map(), recentMaps[i]) {
				t.Fatalf("lazy reader: an older State changed")
			}
			if back, ok := apply(curMap, old.UpdatesSince(cur)); !ok || !same(back, recentMaps[i]) {
				t.Fatalf("lazy reader: UpdatesSince back to an older State is not the difference")
			}
		}
		if recent, recentMaps = append(recent, cur), append(recentMaps, curMap); len(recent) > 3 {
			recent, recentMaps = recent[1:], recentMaps[1:]
		}
		last = cur
	}
	for finished := false; !finished; {
		select {
		case <-signal:
			read()
		case <-done:
			finished = true
		case e := <-errs:
			t.Fatal(e)
		case <-ctx.Done():
			t.Fatal("the writer did not finish in time")
		}
	}
	read()
	if !same(seen, m.LoadAll()) {
		t.Fatalf("lazy reader: after the last write, the view is not the map")
	}
	cancel()
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
}

func TestStateRevision(t *testing.T) {
	var m watchable.Map[string, int]
	if got := (watchable.State[string, int]{}).Revision(); got != 0 {
		t.Errorf("zero State: Revision() = %d", got)
	}
	done := m.RegisterInitializer("test")
	m.Store("a", 1)
	m.Store("a", 1) // equal: no new revision
	m.Store("b", 2)
	first := m.State()
	if first.Revision() != 2 || m.Revision() != 2 {
		t.Errorf("after two changes: State().Revision() = %d, Revision() = %d; want 2", first.Revision(), m.Revision())
	}
	m.Delete("a")
	done() // becoming initialized is a revision of its own
	if first.Revision() != 2 {
		t.Errorf("a State's revision moved with the map: %d", first.Revision())
	}
	if got := m.State().Revision(); got != 4 {
		t.Errorf("after a delete and initialization: State().Revision() = %d; want 4", got)
	}
	sub := m.SubscribeKeys(t.Context(), "b")
	if snap := <-sub; snap.State.Revision() != snap.Revision || snap.Revision != 4 {
		t.Errorf("keyed snapshot: State.Revision() = %d, Revision = %d; want 4", snap.State.Revision(), snap.Revision)
	}
}

// TestStateOfNilValuesOutlivesDeletes holds a State of a map of nil
// pointers while every key is deleted, then collects garbage: the State
// must still read each key as nil. The deletes keep the nils for it, some
// in copies of whole pages of slots whose keep blocks held only nils,
// which the writer's trims used to let go of as if they listed nothing:
// the State's Get panicked (round forty-eight).
func TestStateOfNilValuesOutlivesDeletes(t *testing.T) {
	var m watchable.Map[string, *endpoint]
	const keys = 10000 // enough older values kept for the writer to trim
	key := func(i int) string { return fmt.Sprint("ep-", i) }
	for i := range keys {
		m.Store(key(i), nil)
	}
	held := m.State()
	for i := range keys {
		m.Delete(key(i))
	}
	runtime.GC()
	runtime.GC()
	for i := range keys {
		if v, ok := held.Get(key(i)); !ok || v != nil {
			t.Fatalf("the held State reads %v, %v at %s; want nil, true", v, ok, key(i))
		}
	}
	if held.Len() != keys || m.Len() != 0 {
		t.Fatalf("the held State has %d keys and the map %d; want %d and 0", held.Len(), m.Len(), keys)
	}
}
