package watchable_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// received reports whether a receive from ch would not block (it is
// closed, or holds a signal), and receives.
func received(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestPlainMapIsInitialized(t *testing.T) {
	var m watchable.Map[string, int]
	if !received(m.Initialized()) {
		t.Fatal("a map without initializers is not initialized")
	}
	if s := next(t, m.Subscribe(t.Context())); !s.Initialized {
		t.Fatal("first snapshot of a map without initializers says not initialized")
	}
	if p := m.PendingInitializers(); len(p) != 0 {
		t.Fatalf("PendingInitializers = %v; want none", p)
	}
}

func TestInitializers(t *testing.T) {
	var m watchable.Map[string, int]
	loadA := m.RegisterInitializer("a")
	loadB := m.RegisterInitializer("b")
	init := m.Initialized()
	if received(init) {
		t.Fatal("initialized with two initializers pending")
	}
	if diff := cmp.Diff([]string{"a", "b"}, m.PendingInitializers()); diff != "" {
		t.Fatalf("PendingInitializers (-want +got):\n%s", diff)
	}
	sub := m.Subscribe(t.Context())
	subset := m.SubscribeSubset(t.Context(), func(k string, _ int) bool { return k == "x" })
	notified := make(chan struct{}, 1)
	m.Notify(t.Context(), notified)
	if s := next(t, sub); s.Initialized {
		t.Fatal("first snapshot says initialized while initializers are pending")
	}
	next(t, subset)

	m.Store("x", 1)
	if s := next(t, sub); s.Initialized || len(s.Updates) != 1 {
		t.Fatalf("snapshot before initialization = %+v", s)
	}
	next(t, subset)
	<-notified

	loadA()
	loadA() // only the first call counts
	if received(init) || !cmp.Equal(m.PendingInitializers(), []string{"b"}) {
		t.Fatalf("after one of two initializers: closed %v, pending %v", received(init), m.PendingInitializers())
	}
	nothingPending(t, sub)

	rev := m.Revision()
	loadB()
	if !received(init) || !received(m.Initialized()) {
		t.Fatal("not initialized after every initializer finished")
	}
	if m.Revision() != rev+1 {
		t.Fatalf("Revision = %d; want %d: becoming initialized is published", m.Revision(), rev+1)
	}
	for name, ch := range map[string]<-chan watchable.Snapshot[string, int]{"whole": sub, "subset": subset} {
		s := next(t, ch)
		if !s.Initialized || len(s.Updates) != 0 || s.Revision != rev+1 {
			t.Fatalf("%s: snapshot on initialization = %+v; want Initialized, no updates, revision %d", name, s, rev+1)
		}
	}
	select {
	case <-notified:
	default:
		t.Fatal("Notify not signalled on initialization")
	}

	// Initialized for good: a late initializer changes nothing.
	late := m.RegisterInitializer("late")
	if !received(m.Initialized()) || len(m.PendingInitializers()) != 0 {
		t.Fatal("a late initializer made an initialized map wait")
	}
	late()
	nothingPending(t, sub)
	if s := next(t, m.Subscribe(t.Context())); !s.Initialized {
		t.Fatal("a new subscriber's first snapshot says not initialized")
	}
}

// Updates made while a subscriber did not read arrive together with the
// initialization, in one snapshot.
func TestInitializationCoalescesWithUnreadChanges(t *testing.T) {
	var m watchable.Map[string, int]
	done := m.RegisterInitializer("loader")
	sub := m.Subscribe(t.Context())
	m.Replace(map[string]int{"a": 1, "b": 2})
	done()
	s := next(t, sub)
	if !s.Initialized || len(s.Updates) != 2 {
		t.Fatalf("snapshot = %+v; want the two entries and Initialized", s)
	}
	nothingPending(t, sub)
}

func TestInitializerDoneFromManyGoroutines(t *testing.T) {
	var m watchable.Map[int, int]
	var dones []func()
	for range 8 {
		dones = append(dones, m.RegisterInitializer("loader"))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sub := m.Subscribe(ctx)
	var wg sync.WaitGroup
	for i, done := range dones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.Store(i, i)
			done()
			done()
		}()
	}
	wg.Wait()
	<-m.Initialized()
	if m.Revision() != 9 {
		t.Fatalf("Revision = %d; want 8 stores and the initialization", m.Revision())
	}
	s := next(t, sub)
	for !s.Initialized {
		s = next(t, sub)
	}
}

func TestInitializerAfterClose(t *testing.T) {
	var m watchable.Map[string, int]
	done := m.RegisterInitializer("loader")
	m.Close()
	done()
	if !received(m.Initialized()) {
		t.Fatal("not initialized after its initializer finished on a closed map")
	}
	if m.Revision() != 0 {
		t.Fatalf("Revision of a closed map grew to %d", m.Revision())
	}
}

// TestInitializedSnapshotSurvivesAnEmptyNetChange: the snapshot announcing
// initialization is delivered even when writes after it, before the
// subscriber reads, leave no net change (a key that appeared and vanished).
func TestInitializedSnapshotSurvivesAnEmptyNetChange(t *testing.T) {
	var m watchable.Map[string, int]
	done := m.RegisterInitializer("loader")
	sub := m.Subscribe(t.Context())
	if first := next(t, sub); first.Initialized {
		t.Fatalf("first snapshot says initialized while an initializer is pending")
	}
	done()
	m.Store("k", 1)
	m.Delete("k")
	got := next(t, sub)
	if !got.Initialized || len(got.Updates) != 0 {
		t.Fatalf("got %+v; want the initialization announced, with no updates", got)
	}
}

// TestInitializedFollowsTheRevision: whoever Initialized wakes reads the
// revision that published the initialization, never the one before it.
func TestInitializedFollowsTheRevision(t *testing.T) {
	for range 200 {
		var m watchable.Map[string, int]
		done := m.RegisterInitializer("loader")
		m.Store("a", 1)
		ready := m.Initialized()
		got := make(chan uint64)
		started := make(chan struct{})
		go func() {
			close(started)
			for !received(ready) { // spins, to read the revision the moment ready closes
			}
			got <- m.Revision()
		}()
		<-started
		done()
		if rev := <-got; rev != 2 {
			t.Fatalf("Revision read when Initialized closed = %d, want 2 (the store, then the initialization)", rev)
		}
	}
}
