package watchable_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchyard-go/switchyard/watchable"
)

// describe prints a snapshot's updates in key order.
func describe(s watchable.Snapshot[string, int]) {
	var parts []string
	for _, u := range s.Updates {
		if u.Delete {
			parts = append(parts, fmt.Sprintf("-%s", u.Key))
		} else {
			parts = append(parts, fmt.Sprintf("%s=%d", u.Key, u.Value))
		}
	}
	slices.Sort(parts)
	fmt.Printf("revision %d, %d entries, updates [%s]\n", s.Revision, s.State.Len(), strings.Join(parts, " "))
}

func ExampleMap_Subscribe() {
	var m watchable.Map[string, int]
	m.Store("a", 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := m.Subscribe(ctx)
	describe(<-sub) // the first snapshot lists everything

	// Writes made while the subscriber is busy are coalesced into one
	// snapshot holding the net change per key.
	m.Store("b", 2)
	m.Store("b", 3)
	m.Store("c", 4)
	m.Delete("c") // appeared and vanished: not listed
	m.Delete("a")
	describe(<-sub)

	m.Close()
	_, open := <-sub
	fmt.Println("open:", open)
	// Output:
	// revision 1, 1 entries, updates [a=1]
	// revision 6, 1 entries, updates [-a b=3]
	// open: false
}

func ExampleMap_SubscribeSubset() {
	var m watchable.Map[string, int]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	positive := m.SubscribeSubset(ctx, func(_ string, v int) bool { return v > 0 })
	describe(<-positive)

	m.Store("a", 1)
	m.Store("b", -1) // never matches: not seen
	describe(<-positive)

	m.Store("a", -5) // stops matching: seen as a delete
	describe(<-positive)
	// Output:
	// revision 0, 0 entries, updates []
	// revision 1, 1 entries, updates [a=1]
	// revision 3, 0 entries, updates [-a]
}

func ExampleMap_Batch() {
	var m watchable.Map[string, int]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := m.Subscribe(ctx)
	<-sub

	// One revision and one notification for all three writes.
	m.Batch(func(b *watchable.Batch[string, int]) {
		b.Store("x", 1)
		b.Store("y", 2)
		b.Store("z", 3)
	})
	describe(<-sub)
	// Output:
	// revision 1, 3 entries, updates [x=1 y=2 z=3]
}

func ExampleMap_Replace() {
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := m.Subscribe(ctx)
	<-sub

	// A provider re-lists its source: only what changed is published.
	m.Replace(map[string]int{"a": 1, "c": 3})
	describe(<-sub)
	// Output:
	// revision 2, 2 entries, updates [-b c=3]
}

func ExampleMap_State() {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	s := m.State() // O(1), and never changes
	m.Store("a", 2)
	v, _ := s.Get("a")
	now, _ := m.State().Get("a")
	fmt.Println(v, now)
	// Output: 1 2
}

// A reader that follows a map at its own pace: Notify tells it that
// something changed, and it claims the changes when it is ready. However far
// it falls behind, its writers pay it no more than a signal and what the
// State it holds costs.
func ExampleState_UpdatesSince() {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	m.Store("b", 2)

	changed := make(chan struct{}, 1)
	m.Notify(context.Background(), changed) // before the first State: no write is missed
	last := m.State()

	m.Store("a", 10)
	m.Store("a", 11) // writes between two reads come as one net change
	m.Delete("b")
	m.Store("c", 3)
	m.Store("d", 4)
	m.Delete("d") // added and removed again: no change

	<-changed
	cur := m.State()
	var parts []string
	for _, u := range cur.UpdatesSince(last) {
		if u.Delete {
			parts = append(parts, "-"+u.Key)
		} else {
			parts = append(parts, fmt.Sprintf("%s=%d", u.Key, u.Value))
		}
	}
	slices.Sort(parts)
	fmt.Println(parts) // the next read asks for the updates since cur
	// Output: [-b a=11 c=3]
}

// One subscriber per key: a handler that cares about one node sees that
// node's changes and nothing else, and a write costs the same however many
// such handlers there are.
func ExampleMap_SubscribeKeys() {
	var m watchable.Map[string, int]
	m.Store("node-a", 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := m.SubscribeKeys(ctx, "node-a")
	describe(<-a) // its first snapshot lists its key, if present

	m.Store("node-b", 7) // not its key: nothing for it
	m.Store("node-a", 2)
	describe(<-a) // the State holds only its keys too
	// Output:
	// revision 1, 1 entries, updates [node-a=1]
	// revision 3, 1 entries, updates [node-a=2]
}

// One lazy reader per key, for a fan-out to many readers: NotifyKeys wakes
// a reader only when one of its keys changes, and the reader claims the net
// change of its keys when it is ready. A write costs the readers it does
// not concern nothing, however many there are, and a reader that falls
// behind costs its writers only a signal.
func ExampleMap_NotifyKeys() {
	var m watchable.Map[string, int]
	m.Store("node-a", 1)

	changed := make(chan struct{}, 1)
	m.NotifyKeys(context.Background(), changed, "node-a") // before the first State
	last := m.State()

	m.Store("node-b", 7) // not its key: no signal
	select {
	case <-changed:
		fmt.Println("woken by another key")
	default:
	}

	m.Store("node-a", 2)
	m.Store("node-a", 3) // writes between two reads come as one net change
	<-changed
	cur := m.State()
	for _, u := range cur.KeyUpdatesSince(last, "node-a") {
		fmt.Printf("%s=%d\n", u.Key, u.Value)
	}
	// Output: node-a=3
}

// A component that owns a map writes it and hands out its View: readers
// can load, take States and subscribe, but have no way to write.
func ExampleMap_View() {
	var m watchable.Map[string, int]
	var v watchable.View[string, int] = m.View()

	m.Store("a", 1)
	got, ok := v.Load("a")
	fmt.Println(got, ok, v.Len(), v.Revision())
	// Output: 1 true 1 1
}

// A provider registers before anything waits on the map, loads its initial
// contents, then says it is done; consumers wait for Initialized instead of
// acting on a partial picture.
func ExampleMap_RegisterInitializer() {
	var m watchable.Map[string, int]
	done := m.RegisterInitializer("file provider")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := m.Subscribe(ctx)
	fmt.Println("initialized:", (<-sub).Initialized, "waiting for", m.PendingInitializers())

	m.Batch(func(b *watchable.Batch[string, int]) { // the initial load
		b.Store("a", 1)
		b.Store("b", 2)
	})
	done()
	<-m.Initialized()

	// The subscriber had not read in between: the load and the end of
	// initialization come as one snapshot.
	s := <-sub
	fmt.Println("initialized:", s.Initialized, "entries:", s.State.Len())
	// Output:
	// initialized: false waiting for [file provider]
	// initialized: true entries: 2
}
