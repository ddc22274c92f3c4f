package watchable_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// placed is a value placed on a node, compared whole.
type placed struct {
	Node string
	Addr string
}

func TestPartitionsNotify(t *testing.T) {
	var m watchable.Map[string, placed]
	m.Store("p1", placed{Node: "n1"})
	m.Store("p2", placed{Node: "n2"})
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ string, v placed) string { return v.Node })
	ctx, cancel := context.WithCancel(t.Context())
	n1, n2, n3 := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	parts.Notify(ctx, "n1", n1)
	parts.Notify(ctx, "n2", n2)
	parts.Notify(ctx, "n3", n3) // no entries yet
	if n := m.Notifiers(); n != 3 {
		t.Fatalf("Notifiers = %d with three registrations; want 3", n)
	}
	pending := func() string {
		s := ""
		for i, ch := range []chan struct{}{n1, n2, n3} {
			if received(ch) {
				s += fmt.Sprintf("n%d ", i+1)
			}
		}
		return s
	}
	if got := pending(); got != "" {
		t.Fatalf("signalled before any write: %s", got)
	}
	for _, step := range []struct {
		name  string
		write func()
		want  string
	}{
		{"a new entry in n1", func() { m.Store("p3", placed{Node: "n1"}) }, "n1 "},
		{"a new value within n1", func() { m.Store("p3", placed{Node: "n1", Addr: "a1"}) }, "n1 "},
		{"an equal value within n1", func() { m.Store("p3", placed{Node: "n1", Addr: "a1"}) }, ""},
		{"a move from n1 to n3", func() { m.Store("p1", placed{Node: "n3"}) }, "n1 n3 "},
		{"a delete from n2", func() { m.Delete("p2") }, "n2 "},
		{"a write to a partition nobody follows", func() { m.Store("p9", placed{Node: "n9"}) }, ""},
		{"a Batch touching n2 and n3", func() {
			m.Batch(func(b *watchable.Batch[string, placed]) {
				b.Store("p2", placed{Node: "n2"})
				b.Delete("p1")
			})
		}, "n2 n3 "},
	} {
		step.write()
		if got := pending(); got != step.want {
			t.Fatalf("after %s, signalled %q; want %q", step.name, got, step.want)
		}
	}

	cancel()
	awaitNotifiers(t, m.Notifiers, 0, "cancel")
	m.Store("p5", placed{Node: "n1"})
	if got := pending(); got != "" {
		t.Fatalf("signalled after cancel: %s", got)
	}
}

// TestPartitionsNotifySilentMove checks the silent Stores, of a value equal
// by its Equal method: one that moves an entry between partitions signals
// both, one within a partition signals none.
func TestPartitionsNotifySilentMove(t *testing.T) {
	var m watchable.Map[string, moving]
	m.Store("x", moving{ID: 1, Zone: "a"})
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ string, v moving) string { return v.Zone })
	a, b := make(chan struct{}, 1), make(chan struct{}, 1)
	parts.Notify(t.Context(), "a", a)
	parts.Notify(t.Context(), "b", b)
	m.Store("x", moving{ID: 1, Zone: "b"}) // equal by Equal, but in another partition
	if !received(a) || !received(b) {
		t.Fatal("a silent Store that moves partitions did not signal both")
	}
	if got := parts.State("b").UpdatesSince(watchable.State[string, moving]{}); len(got) != 1 || got[0].Value.Zone != "b" {
		t.Fatalf("partition b's State lists %+v; want x in zone b", got)
	}
	if a := parts.State("a"); a.Len() != 0 {
		t.Fatalf("partition a's State holds %d entries after x left; want 0", a.Len())
	}

	// A silent Store within b, in a Batch made effective by a Store into c,
	// signals c alone.
	c := make(chan struct{}, 1)
	parts.Notify(t.Context(), "c", c)
	m.Batch(func(bt *watchable.Batch[string, moving]) {
		bt.Store("x", moving{ID: 1, Zone: "b"})
		bt.Store("y", moving{ID: 2, Zone: "c"})
	})
	if received(a) || received(b) || !received(c) {
		t.Fatal("a Batch of a silent Store within b and a Store into c did not signal c alone")
	}
}

func TestPartitionsNotifyNilChannel(t *testing.T) {
	var m watchable.Map[int, int]
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_, v int) int { return v })
	defer func() {
		if recover() == nil {
			t.Fatal("Notify with a nil channel did not panic")
		}
	}()
	parts.Notify(t.Context(), 1, nil)
}

func TestPartitionsNotifySignalsInitialization(t *testing.T) {
	var m watchable.Map[string, int]
	done := m.RegisterInitializer("loader")
	parts := watchable.PartitionBy(t.Context(), m.View(), func(_ string, v int) int { return v })
	ch, other := make(chan struct{}, 1), make(chan struct{}, 1)
	parts.Notify(t.Context(), 1, ch)
	parts.Notify(t.Context(), 2, other)
	m.Store("b", 2)
	if received(ch) {
		t.Fatal("signalled for another partition while initializing")
	}
	if !received(other) {
		t.Fatal("not signalled for an entry entering the partition while initializing")
	}
	done()
	if !received(ch) || !received(other) {
		t.Fatal("not signalled when the map became initialized")
	}
}

// TestPartitionsNotifyEnds checks that registrations end with the index, and
// with the map, each removed and never signalled again; and that one for a
// partition no table can find again (NaN) still ends with its context.
func TestPartitionsNotifyEnds(t *testing.T) {
	var m watchable.Map[int, float64]
	ctx, cancel := context.WithCancel(t.Context())
	parts := watchable.PartitionBy(ctx, m.View(), func(_ int, v float64) float64 { return v })
	one, nan := make(chan struct{}, 1), make(chan struct{}, 1)
	parts.Notify(t.Context(), 1, one)
	nanCtx, nanCancel := context.WithCancel(t.Context())
	parts.Notify(nanCtx, math.NaN(), nan)
	nanCancel()
	awaitNotifiers(t, m.Notifiers, 1, "the NaN registration's cancel")
	m.Store(1, 1)
	if !received(one) {
		t.Fatal("partition 1 not signalled after the NaN registration ended")
	}

	cancel() // the index ends
	awaitNotifiers(t, m.Notifiers, 0, "the index ended")
	m.Store(2, 1)
	if received(one) {
		t.Fatal("signalled after the index ended")
	}
	parts.Notify(t.Context(), 1, one) // too late: registers nothing
	if n := m.Notifiers(); n != 0 {
		t.Fatalf("Notifiers = %d after Notify on an ended index; want 0", n)
	}
	// State still answers, from the map itself.
	if got := parts.State(1).Map(); !cmp.Equal(got, map[int]float64{1: 1, 2: 1}) {
		t.Fatalf("State(1) after the index ended = %v", got)
	}
	if got := parts.State(7); got.Len() != 0 || got.Revision() != m.Revision() {
		t.Fatalf("State(7) after the index ended: %d entries at revision %d; want none at %d", got.Len(), got.Revision(), m.Revision())
	}

	var m2 watchable.Map[int, int]
	parts2 := watchable.PartitionBy(t.Context(), m2.View(), func(_, v int) int { return v })
	ch := make(chan struct{}, 1)
	parts2.Notify(t.Context(), 1, ch)
	m2.Close()
	if n := m2.Notifiers(); n != 0 {
		t.Fatalf("Notifiers = %d after the map closed; want 0", n)
	}
}

// TestPartitionsState checks that a partition's State holds exactly its
// entries at the map's revision, never changes afterwards (whether it was
// built or shared with a Subscribe subscriber's view), and that
// UpdatesSince between two of them is the partition's net change.
func TestPartitionsState(t *testing.T) {
	for _, shared := range []bool{false, true} {
		t.Run(fmt.Sprintf("subscribed=%v", shared), func(t *testing.T) {
			var m watchable.Map[string, placed]
			m.Store("p1", placed{Node: "n1"})
			m.Store("p2", placed{Node: "n2"})
			m.Store("p3", placed{Node: "n1"})
			parts := watchable.PartitionBy(t.Context(), m.View(), func(_ string, v placed) string { return v.Node })
			var sub <-chan watchable.Snapshot[string, placed]
			if shared {
				sub = parts.Subscribe(t.Context(), "n1")
				next(t, sub)
			}
			// A write the subscriber has not read: its view now changes in
			// place, until State shares it.
			m.Store("p3", placed{Node: "n1", Addr: "a1"})
			first := parts.State("n1")
			if first.Revision() != m.Revision() {
				t.Fatalf("State's revision %d; the map's %d", first.Revision(), m.Revision())
			}
			want1 := map[string]placed{"p1": {Node: "n1"}, "p3": {Node: "n1", Addr: "a1"}}
			if diff := cmp.Diff(want1, first.Map()); diff != "" {
				t.Fatalf("first State (-want +got):\n%s", diff)
			}

			m.Store("p3", placed{Node: "n1", Addr: "a5"}) // changes within n1, first: in place unless shared
			m.Store("p1", placed{Node: "n2"})             // leaves n1
			m.Store("p4", placed{Node: "n1"})             // enters n1
			m.Store("p2", placed{Node: "n2", Addr: "a9"}) // elsewhere
			if shared {
				next(t, sub) // the subscriber's view has changed since
			}
			if diff := cmp.Diff(want1, first.Map()); diff != "" {
				t.Fatalf("first State after writes (-want +got):\n%s", diff)
			}
			second := parts.State("n1")
			want2 := map[string]placed{"p3": {Node: "n1", Addr: "a5"}, "p4": {Node: "n1"}}
			if diff := cmp.Diff(want2, second.Map()); diff != "" {
				t.Fatalf("second State (-want +got):\n%s", diff)
			}
			got := map[string]watchable.Update[string, placed]{}
			for _, u := range second.UpdatesSince(first) {
				got[u.Key] = u
			}
			want := map[string]watchable.Update[string, placed]{
				"p1": {Key: "p1", Delete: true, Value: placed{Node: "n1"}},
				"p3": {Key: "p3", Value: placed{Node: "n1", Addr: "a5"}},
				"p4": {Key: "p4", Value: placed{Node: "n1"}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("UpdatesSince (-want +got):\n%s", diff)
			}
			if empty := parts.State("n7"); empty.Len() != 0 || empty.Revision() != m.Revision() {
				t.Fatalf("State of a partition without entries: %d entries at revision %d", empty.Len(), empty.Revision())
			}
		})
	}
}

// TestPartitionsLazyReaders runs random writes (Stores, Deletes and
// Batches of them) against lazy readers of every partition, each reading at
// random moments, with and without a Subscribe subscriber on one partition
// whose State is then shared (read at random moments too), and checks what
// each reader relies on: a write that changes its partition signals it,
// the updates it claims take the partition from the contents it last read
// to its current ones, and a State it took never changes.
func TestPartitionsLazyReaders(t *testing.T) {
	for _, subscribed := range []bool{false, true} {
		t.Run(fmt.Sprintf("subscribed=%v", subscribed), func(t *testing.T) {
			lazyReaders(t, subscribed)
		})
	}
}

func lazyReaders(t *testing.T, subscribed bool) {
	r := rand.New(rand.NewPCG(3, 4))
	var m watchable.Map[int, int]
	const parts, keys = 5, 40
	partOf := func(_, v int) int { return v % parts }
	idx := watchable.PartitionBy(t.Context(), m.View(), partOf)
	type reader struct {
		ch       chan struct{}
		last     watchable.State[int, int]
		lastSeen map[int]int // what last held when it was taken
		seen     map[int]int // what the reader holds: last, updated by its claims
	}
	readers := make([]*reader, parts)
	for p := range readers {
		rd := &reader{ch: make(chan struct{}, 1), seen: map[int]int{}}
		idx.Notify(t.Context(), p, rd.ch)
		readers[p] = rd
	}
	var sub <-chan watchable.Snapshot[int, int]
	if subscribed {
		sub = idx.Subscribe(t.Context(), 0) // partition 0's States are its view
	}
	want := func(p int) map[int]int {
		out := map[int]int{}
		for k, v := range m.State().All() {
			if partOf(k, v) == p {
				out[k] = v
			}
		}
		return out
	}
	for step := range 3000 {
		before := make([]map[int]int, parts)
		for p := range before {
			before[p] = want(p)
		}
		switch r.IntN(5) {
		case 0:
			m.Delete(r.IntN(keys))
		case 1:
			m.Batch(func(b *watchable.Batch[int, int]) {
				for range 1 + r.IntN(4) {
					if r.IntN(3) == 0 {
						b.Delete(r.IntN(keys))
					} else {
						b.Store(r.IntN(keys), r.IntN(3*parts))
					}
				}
			})
		default:
			m.Store(r.IntN(keys), r.IntN(3*parts))
		}
		if sub != nil && r.IntN(2) == 0 {
			select {
			case <-sub:
			default:
			}
		}
		for p, rd := range readers {
			changed := !cmp.Equal(before[p], want(p))
			if changed && len(rd.ch) == 0 {
				t.Fatalf("step %d: partition %d changed and has no signal pending", step, p)
			}
			if rd.lastSeen != nil && !cmp.Equal(rd.last.Map(), rd.lastSeen) {
				t.Fatalf("step %d: partition %d: a State taken earlier changed", step, p)
			}
			if r.IntN(3) != 0 {
				continue
			}
			if received(rd.ch) {
				cur := idx.State(p)
				for _, u := range cur.UpdatesSince(rd.last) {
					if u.Delete {
						if old, ok := rd.seen[u.Key]; !ok || old != u.Value {
							t.Fatalf("step %d: partition %d: delete of %d carrying %d, where the reader held %d (%v)", step, p, u.Key, u.Value, old, ok)
						}
						delete(rd.seen, u.Key)
					} else {
						rd.seen[u.Key] = u.Value
					}
				}
				rd.last, rd.lastSeen = cur, cur.Map()
			}
			if len(rd.ch) == 0 {
				// No signal pending: nothing changed since the reader read.
				if diff := cmp.Diff(want(p), rd.seen); diff != "" {
					t.Fatalf("step %d: partition %d, no signal pending, reader holds (-want +got):\n%s", step, p, diff)
				}
			}
		}
	}
}

// awaitNotifiers waits until notifiers reports want: registrations are
// removed by a goroutine that context.AfterFunc starts.
func awaitNotifiers(t *testing.T, notifiers func() int, want int, after string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for notifiers() != want {
		if time.Now().After(deadline) {
			t.Fatalf("Notifiers = %d a minute after %s; want %d", notifiers(), after, want)
		}
		time.Sleep(time.Millisecond)
	}
}
