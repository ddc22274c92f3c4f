package watchable_test

import (
	"context"
	"maps"
	"runtime"
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

func TestUpdatesSince(t *testing.T) {
	var m watchable.Map[string, *endpoint]
	ep := func(addr string) *endpoint {
		return &endpoint{Addr: addr, Labels: map[string]string{"zone": "a"}}
	}
	m.Store("a", ep("10.0.0.1"))
	m.Store("b", ep("10.0.0.2"))
	m.Store("c", ep("10.0.0.3"))
	first := m.State()

	// Since the zero State: every entry.
	all := first.UpdatesSince(watchable.State[string, *endpoint]{})
	if diff := cmp.Diff(map[string]bool{"a": false, "b": false, "c": false}, keysOf(all)); diff != "" {
		t.Fatalf("since the zero State (-want +got):\n%s", diff)
	}
	if got := first.UpdatesSince(first); len(got) != 0 {
		t.Fatalf("a State since itself lists %v", got)
	}

	m.Store("a", ep("10.0.0.1")) // equal: not a change
	m.Store("b", ep("10.0.0.9")) // changed
	m.Store("c", ep("10.0.0.4")) // changed, then changed back
	m.Store("c", ep("10.0.0.3"))
	m.Delete("d")                // absent: nothing
	m.Store("d", ep("10.0.0.5")) // added
	m.Store("e", ep("10.0.0.6")) // added, then deleted
	m.Delete("e")
	second := m.State()
	m.Delete("a")
	third := m.State()

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

// TestUpdatesSinceLazyReader runs a writer and a reader that follows the
// map with Notify, State and UpdatesSince, concurrently; under -race this
// checks that the States it compares never change under it while the
// writer changes the map in place.
func TestUpdatesSinceLazyReader(t *testing.T) {
	const keys, writes = 500, 20_000
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
