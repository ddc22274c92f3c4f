package watchable_test

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// Writes change the map's current version in place while nobody holds it
// (docs/design.md). These tests hold it in every way there is — State,
// LoadAll, a snapshot read or unread — and check that what is held never
// changes.

// TestStateBeforeInPlaceWritesNeverChanges takes a State between writes that
// change the map in place, and checks it still holds what it held.
func TestStateBeforeInPlaceWritesNeverChanges(t *testing.T) {
	for _, name := range []string{"int", "pointer", "string"} {
		t.Run(name, func(t *testing.T) {
			switch name {
			case "int":
				checkStatesHold(t, func(i int) int { return i })
			case "pointer":
				checkStatesHold(t, func(i int) *counter { return &counter{N: i} })
			case "string":
				checkStatesHold(t, func(i int) string { return fmt.Sprint(i) })
			}
		})
	}
}

// counter is a pointer value, which writes replace in place with one
// pointer store.
type counter struct{ N int }

func (c *counter) DeepCopy() *counter { d := *c; return &d }

func checkStatesHold[V any](t *testing.T, mk func(int) V) {
	var m watchable.Map[int, V]
	type held struct {
		state watchable.State[int, V]
		want  map[int]V
	}
	var states []held
	want := map[int]V{}
	for i := range 3000 {
		k := i * 7 % 500
		if i%9 == 0 {
			m.Delete(k)
			delete(want, k)
		} else {
			m.Store(k, mk(i))
			want[k] = mk(i)
		}
		if i%100 == 0 {
			states = append(states, held{m.State(), maps.Clone(want)})
		}
	}
	for i, h := range states {
		if diff := cmp.Diff(h.want, h.state.Map()); diff != "" {
			t.Fatalf("State %d changed after later writes (-held +now):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff(want, m.LoadAll()); diff != "" {
		t.Fatalf("LoadAll (-want +got):\n%s", diff)
	}
}

// TestUnreadSnapshotNeverChanges keeps a subscriber that reads now and then
// while a writer writes: the writer takes back unread snapshots and changes
// the map in place, so this checks that a snapshot the subscriber did
// receive never changes, even when it received it while the writer was
// at work.
func TestUnreadSnapshotNeverChanges(t *testing.T) {
	var m watchable.Map[int, int]
	defer m.Close()
	for k := range 200 {
		m.Store(k, 0)
	}
	ctx, cancel := context.WithCancel(t.Context())
	sub := m.Subscribe(ctx)
	type got struct {
		snap watchable.Snapshot[int, int]
		had  map[int]int
	}
	received := make(chan []got, 1)
	latest := make(chan uint64, 1) // the newest revision the subscriber has
	go func() {
		var all []got
		for snap := range sub {
			// Values are the revision that wrote them: none may be newer
			// than the snapshot.
			all = append(all, got{snap, snap.State.Map()})
			select {
			case <-latest:
			default:
			}
			latest <- snap.Revision
		}
		received <- all
	}()
	for round := range 20 {
		for i := range 1000 {
			m.Store((round*1000+i)%200, int(m.Revision())+1)
		}
		// Let the subscriber catch up now and then, so that it receives
		// snapshots throughout rather than only the last one.
		for want := m.Revision(); <-latest < want; {
		}
	}
	cancel()
	all := <-received
	if len(all) < 2 {
		t.Fatalf("the subscriber received %d snapshots; want several", len(all))
	}
	for i, g := range all {
		if diff := cmp.Diff(g.had, g.snap.State.Map()); diff != "" {
			t.Fatalf("snapshot %d (revision %d) changed after delivery (-received +now):\n%s", i, g.snap.Revision, diff)
		}
		for k, v := range g.had {
			if uint64(v) > g.snap.Revision {
				t.Fatalf("snapshot %d at revision %d holds key %d written at revision %d", i, g.snap.Revision, k, v)
			}
		}
	}
}

// TestReadsDuringInPlaceWrites runs Load, Len, State and LoadAll on other
// goroutines while one writer changes the map in place as fast as it can
// (run with -race). Each value encodes its key, so a torn or misplaced read
// shows; each State is read twice, apart in time, and must not change.
func TestReadsDuringInPlaceWrites(t *testing.T) {
	var m watchable.Map[int, int]
	defer m.Close()
	const keys, writes, readers = 256, 30000, 2
	done := make(chan struct{})
	errs := make(chan error, readers)
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var states []watchable.State[int, int]
			var held []map[int]int
			for i := 0; ; i++ {
				select {
				case <-done:
					for j, s := range states {
						if !maps.Equal(s.Map(), held[j]) {
							errs <- fmt.Errorf("reader %d: State %d changed", r, j)
							return
						}
					}
					errs <- nil
					return
				default:
				}
				k := i % keys
				if v, ok := m.Load(k); ok && v%1000 != k {
					errs <- fmt.Errorf("reader %d: Load(%d) = %d, a value of key %d", r, k, v, v%1000)
					return
				}
				if n := m.Len(); n > keys {
					errs <- fmt.Errorf("reader %d: Len = %d", r, n)
					return
				}
				if i%50 == 0 {
					s := m.State()
					if len(states) == 16 {
						states, held = states[1:], held[1:]
					}
					states = append(states, s)
					held = append(held, s.Map())
				}
				if i%500 == 0 {
					for k, v := range m.LoadAll() {
						if v%1000 != k {
							errs <- fmt.Errorf("reader %d: LoadAll has %d at key %d", r, v, k)
							return
						}
					}
				}
			}
		}()
	}
	for i := range writes {
		k := i * 13 % keys
		if i%11 == 0 {
			m.Delete(k)
		} else {
			m.Store(k, i*1000+k)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestWindowAcrossItsIndexThreshold drives a subscriber whose pending
// window grows past the size where it starts indexing keys, and shrinks
// back (keys that appear and vanish again), reading only now and then, and
// checks every snapshot: applying its Updates to the previous snapshot's
// contents gives its State, and deletes carry the value last seen.
func TestWindowAcrossItsIndexThreshold(t *testing.T) {
	var m watchable.Map[int, int]
	defer m.Close()
	sub := m.Subscribe(t.Context())
	seen := map[int]int{}
	read := func() {
		t.Helper()
		select {
		case snap := <-sub:
			for _, u := range snap.Updates {
				if u.Delete {
					if got, ok := seen[u.Key]; !ok || got != u.Value {
						t.Fatalf("delete of %d carries %d; the subscriber saw %d (present %v)", u.Key, u.Value, got, ok)
					}
					delete(seen, u.Key)
				} else {
					seen[u.Key] = u.Value
				}
			}
			if diff := cmp.Diff(snap.State.Map(), seen); diff != "" {
				t.Fatalf("rebuilt view differs from State (-state +rebuilt):\n%s", diff)
			}
		default:
		}
	}
	r := uint64(7)
	for i := range 20000 {
		r = r*6364136223846793005 + 1442695040888963407
		k := int(r>>33) % 40
		switch (r >> 20) % 4 {
		case 0:
			m.Delete(k)
		default:
			m.Store(k, i)
		}
		if (r>>40)%17 == 0 {
			read()
		}
	}
	read()
	if diff := cmp.Diff(m.State().Map(), seen); diff != "" {
		t.Fatalf("final view (-map +rebuilt):\n%s", diff)
	}
}

// TestFilteredSnapshotsNeverChange is TestUnreadSnapshotNeverChanges for
// the subscriptions that keep a view of their own (keys, subset,
// partition): a write changes a view in place while no snapshot the
// subscriber has, or may take, holds it. Subscribers on other goroutines
// read at their own pace, with -race; a second subscriber to a partition
// shares the first one's view midway; heartbeat-like silent stores (equal
// by Equal, different by value) land while snapshots sit unread. Every
// State received must keep what it held.
func TestFilteredSnapshotsNeverChange(t *testing.T) {
	var m watchable.Map[int, pulse]
	defer m.Close()
	for k := range 64 {
		m.Store(k, pulse{N: 0})
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	parts := watchable.PartitionBy(ctx, m.View(), func(k int, _ pulse) int { return k % 4 })
	type got struct {
		snap watchable.Snapshot[int, pulse]
		had  map[int]pulse
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var all [][]got
	read := func(sub <-chan watchable.Snapshot[int, pulse], every int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []got
			i := 0
			for snap := range sub {
				mine = append(mine, got{snap, snap.State.Map()})
				for range i % every * 100 {
					// Dawdle now and then, so that writes find
					// snapshots unread as well as taken.
				}
				i++
			}
			mu.Lock()
			all = append(all, mine)
			mu.Unlock()
		}()
	}
	read(m.SubscribeKeys(ctx, 1, 2, 3), 3)
	read(m.SubscribeKeys(ctx, 5), 2)
	read(m.SubscribeSubset(ctx, func(k int, _ pulse) bool { return k%8 == 1 }), 5)
	read(parts.Subscribe(ctx, 1), 4)
	for i := range 20000 {
		k := i * 7 % 64
		switch {
		case i%5 == 0:
			old, _ := m.Load(k)
			m.Store(k, pulse{N: old.N, Seen: i}) // silent when present
		case i%13 == 0:
			m.Delete(k)
		default:
			m.Store(k, pulse{N: i})
		}
		if i == 10000 {
			read(parts.Subscribe(ctx, 1), 2) // shares the first's view
		}
		if i%100 == 0 {
			// With GOMAXPROCS=1 the writer could make all its Stores
			// before a reader runs, and a reader would see only its
			// first snapshot.
			runtime.Gosched()
		}
	}
	cancel()
	wg.Wait()
	for j, mine := range all {
		if len(mine) < 2 {
			t.Fatalf("subscriber %d received %d snapshots; want several", j, len(mine))
		}
		for i, g := range mine {
			if diff := cmp.Diff(g.had, g.snap.State.Map()); diff != "" {
				t.Fatalf("subscriber %d, snapshot %d (revision %d) changed after delivery (-received +now):\n%s", j, i, g.snap.Revision, diff)
			}
		}
	}
}

// pulse is a heartbeat-like value: Equal ignores Seen.
type pulse struct{ N, Seen int }

func (b pulse) Equal(o pulse) bool { return b.N == o.N }

// TestSharedPartitionViewNeverChanges subscribes to a partition whose
// first subscriber has an unread snapshot, so that its view's nodes were
// being changed in place: the newcomer shares that view, and neither may
// change it in place afterwards.
func TestSharedPartitionViewNeverChanges(t *testing.T) {
	var m watchable.Map[int, int]
	defer m.Close()
	m.Store(1, 0)
	m.Store(5, 0)
	parts := watchable.PartitionBy(t.Context(), m.View(), func(k, _ int) int { return k % 4 })
	first := parts.Subscribe(t.Context(), 1)
	<-first
	m.Store(1, 1)
	m.Store(1, 2) // takes back first's unread snapshot: its view changes in place
	second := parts.Subscribe(t.Context(), 1)
	snap := <-second
	had := snap.State.Map()
	m.Store(5, 3) // takes back first's snapshot again
	m.Store(1, 4)
	if diff := cmp.Diff(had, snap.State.Map()); diff != "" {
		t.Fatalf("the second subscriber's first snapshot changed (-received +now):\n%s", diff)
	}
	if got := (<-first).State.Map(); !maps.Equal(got, map[int]int{1: 4, 5: 3}) {
		t.Fatalf("the first subscriber's State = %v", got)
	}
}
