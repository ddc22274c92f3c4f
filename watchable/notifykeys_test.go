package watchable_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

func TestNotifyKeys(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	m.View().NotifyKeys(ctx, ch, "a", "z", "a")
	if n, s := m.Notifiers(), m.Subscribers(); n != 1 || s != 0 {
		t.Fatalf("with one NotifyKeys registration: Notifiers = %d, Subscribers = %d; want 1, 0", n, s)
	}
	if received(ch) {
		t.Fatal("signalled before any write")
	}

	m.Store("b", 2)
	m.Delete("b")
	m.Batch(func(b *watchable.Batch[string, int]) { b.Store("c", 3) })
	m.Store("a", 1) // equal: not a change
	m.Delete("z")   // missing: not a change
	if received(ch) {
		t.Fatal("signalled for writes that did not change its keys")
	}

	for _, write := range []struct {
		name string
		do   func()
	}{
		{"Store", func() { m.Store("a", 2) }},
		{"Store of a new key", func() { m.Store("z", 26) }},
		{"Delete", func() { m.Delete("z") }},
		{"Batch", func() { m.Batch(func(b *watchable.Batch[string, int]) { b.Store("c", 4); b.Store("a", 3) }) }},
		{"Replace", func() { m.Replace(map[string]int{"a": 4, "c": 4}) }},
		{"CompareAndSwap", func() { m.CompareAndSwap("a", 4, 5) }},
		{"LoadAndDelete", func() { m.LoadAndDelete("a") }},
		{"LoadOrStore", func() { m.LoadOrStore("a", 6) }},
	} {
		write.do()
		if !received(ch) {
			t.Fatalf("no signal after %s of its key", write.name)
		}
		if received(ch) {
			t.Fatalf("%s queued more than one signal in a buffer of one", write.name)
		}
	}
	// A write that is effective for another key, but silent for its own.
	m.Batch(func(b *watchable.Batch[string, int]) { b.Store("a", 6); b.Store("c", 5) })
	if received(ch) {
		t.Fatal("signalled for an equal value stored in an effective Batch")
	}

	cancel()
	// The registration is removed by a goroutine context.AfterFunc starts;
	// wait until a write no longer signals.
	deadline := time.Now().Add(time.Minute)
	for {
		m.Store("a", int(m.Revision())+100)
		if !received(ch) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still signalled a minute after its context was cancelled")
		}
	}
	if n := m.Notifiers(); n != 0 {
		t.Fatalf("Notifiers after cancel = %d; want 0", n)
	}

	m.NotifyKeys(t.Context(), ch, "a")
	m.Close()
	if n := m.Notifiers(); n != 0 {
		t.Fatalf("Notifiers after Close = %d; want 0", n)
	}
	m.Store("a", 1)
	if received(ch) {
		t.Fatal("signalled after Close")
	}
	m.NotifyKeys(t.Context(), ch, "a") // on a closed map: nothing
	if n := m.Notifiers(); n != 0 {
		t.Fatalf("Notifiers after NotifyKeys on a closed map = %d; want 0", n)
	}
}

// TestNotifyKeysShared registers several readers on overlapping keys, one
// channel twice, and checks that each write signals exactly the channels
// of its key, and that cancelling one registration leaves the others.
func TestNotifyKeysShared(t *testing.T) {
	var m watchable.Map[string, int]
	a, ab, twice := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
	m.NotifyKeys(t.Context(), a, "a")
	m.NotifyKeys(t.Context(), ab, "a", "b")
	ctx, cancel := context.WithCancel(t.Context())
	m.NotifyKeys(ctx, twice, "b")
	m.NotifyKeys(t.Context(), twice, "b", "c")
	none := make(chan struct{}, 1)
	m.NotifyKeys(t.Context(), none) // no keys: only the initialization signals it

	check := func(when string, want map[string]bool) {
		t.Helper()
		got := map[string]bool{"a": received(a), "ab": received(ab), "twice": received(twice), "none": received(none)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("signalled after %s (-want +got):\n%s", when, diff)
		}
	}
	m.Store("a", 1)
	check("a store to a", map[string]bool{"a": true, "ab": true, "twice": false, "none": false})
	m.Store("b", 1)
	check("a store to b", map[string]bool{"a": false, "ab": true, "twice": true, "none": false})
	m.Store("c", 1)
	check("a store to c", map[string]bool{"a": false, "ab": false, "twice": true, "none": false})

	cancel() // one of the two registrations of twice on b
	deadline := time.Now().Add(time.Minute)
	for m.Notifiers() != 4 {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled registration was not removed in a minute")
		}
		time.Sleep(time.Millisecond)
	}
	m.Store("b", 2)
	check("a store to b after one registration of twice is cancelled", map[string]bool{"a": false, "ab": true, "twice": true, "none": false})
}

// TestNotifyKeysSilentStore stores a value whose Equal ignores a field: the
// map keeps it, but it changes nothing, so it signals nobody, even in a
// Batch that is effective because of another key.
func TestNotifyKeysSilentStore(t *testing.T) {
	var m watchable.Map[string, heartbeat]
	m.Store("a", heartbeat{N: 1, At: 1})
	ch := make(chan struct{}, 1)
	m.NotifyKeys(t.Context(), ch, "a")
	m.Store("a", heartbeat{N: 1, At: 2})
	m.Batch(func(b *watchable.Batch[string, heartbeat]) {
		b.Store("a", heartbeat{N: 1, At: 3})
		b.Store("c", heartbeat{N: 1})
	})
	if received(ch) {
		t.Fatal("signalled for silent stores of its key")
	}
	if v, _ := m.Load("a"); v.At != 3 {
		t.Fatalf("the map holds %+v; want the last heartbeat kept", v)
	}
	m.Store("a", heartbeat{N: 2, At: 4})
	if !received(ch) {
		t.Fatal("no signal for a change of its key")
	}
}

// TestNotifyNilChannel checks that Notify and NotifyKeys refuse a nil
// channel with a panic that names the method, and register nothing.
func TestNotifyNilChannel(t *testing.T) {
	var m watchable.Map[string, int]
	for name, register := range map[string]func(){
		"Notify":     func() { m.Notify(t.Context(), nil) },
		"NotifyKeys": func() { m.NotifyKeys(t.Context(), nil, "a") },
	} {
		func() {
			defer func() {
				if p, _ := recover().(string); !strings.Contains(p, name+" with a nil channel") {
					t.Errorf("%s(nil) panicked with %q; want it to name %s and the nil channel", name, p, name)
				}
			}()
			register()
		}()
	}
	if n := m.Notifiers(); n != 0 {
		t.Fatalf("Notifiers after the refused registrations = %d; want 0", n)
	}
	m.Store("a", 1) // the map still works
}

func TestNotifyKeysSignalsInitialization(t *testing.T) {
	var m watchable.Map[string, int]
	done := m.RegisterInitializer("loader")
	ch, none := make(chan struct{}, 1), make(chan struct{}, 1)
	m.NotifyKeys(t.Context(), ch, "a")
	m.NotifyKeys(t.Context(), none)
	m.Store("b", 1)
	if received(ch) || received(none) {
		t.Fatal("signalled for another key while initializing")
	}
	done()
	if !received(ch) || !received(none) {
		t.Fatal("not signalled when the map became initialized")
	}
}

func TestKeyUpdatesSince(t *testing.T) {
	first, _, third := endpointStates()
	var zero watchable.State[string, *endpoint]
	keys := func(updates []watchable.Update[string, *endpoint]) []string {
		var out []string
		for _, u := range updates {
			if u.Delete {
				out = append(out, "-"+u.Key)
			} else {
				out = append(out, u.Key+"="+u.Value.Addr)
			}
		}
		return out
	}
	if diff := cmp.Diff([]string{"c=10.0.0.3", "a=10.0.0.1"}, keys(first.KeyUpdatesSince(zero, "c", "x", "a", "c"))); diff != "" {
		t.Fatalf("since the zero State, in the order of keys (-want +got):\n%s", diff)
	}
	if got := first.KeyUpdatesSince(first, "a", "b"); len(got) != 0 {
		t.Fatalf("a State since itself lists %v", got)
	}
	if got := first.KeyUpdatesSince(zero); len(got) != 0 {
		t.Fatalf("no keys list %v", got)
	}

	all := []string{"e", "d", "c", "b", "a", "x"}
	if diff := cmp.Diff([]string{"d=10.0.0.5", "b=10.0.0.9", "-a"}, keys(third.KeyUpdatesSince(first, all...))); diff != "" {
		t.Fatalf("third since first (-want +got):\n%s", diff)
	}
	del := third.KeyUpdatesSince(first, "a")
	if len(del) != 1 || del[0].Value.Addr != "10.0.0.1" {
		t.Fatalf("a delete carries %v, want the value first held", del)
	}
	if diff := cmp.Diff([]string{"b=10.0.0.2", "a=10.0.0.1", "-d"}, keys(first.KeyUpdatesSince(third, "b", "a", "d"))); diff != "" {
		t.Fatalf("backwards (-want +got):\n%s", diff)
	}

	// Many keys, with repeats: counted once, in the order of first mention.
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("k%d", i%12), "b")
	}
	many = append(many, "d")
	if diff := cmp.Diff([]string{"b=10.0.0.9", "d=10.0.0.5"}, keys(third.KeyUpdatesSince(first, many...))); diff != "" {
		t.Fatalf("many keys with repeats (-want +got):\n%s", diff)
	}
}

// TestKeyUpdatesSinceAgreesWithUpdatesSince checks KeyUpdatesSince against
// UpdatesSince restricted to the same keys, on random States of one map and
// random sets of keys (with repeats and keys the map never held).
func TestKeyUpdatesSinceAgreesWithUpdatesSince(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var m watchable.Map[string, int]
	key := func() string { return fmt.Sprintf("k%d", r.IntN(60)) }
	var states []watchable.State[string, int]
	for range 200 {
		for range r.IntN(20) {
			switch r.IntN(3) {
			case 0:
				m.Delete(key())
			default:
				m.Store(key(), r.IntN(3))
			}
		}
		states = append(states, m.State())
	}
	for range 2000 {
		old, cur := states[r.IntN(len(states))], states[r.IntN(len(states))]
		keys := make([]string, r.IntN(20))
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", r.IntN(70))
		}
		want := map[string]watchable.Update[string, int]{}
		for _, u := range cur.UpdatesSince(old) {
			for _, k := range keys {
				if u.Key == k {
					want[k] = u
				}
			}
		}
		got := map[string]watchable.Update[string, int]{}
		for _, u := range cur.KeyUpdatesSince(old, keys...) {
			if _, dup := got[u.Key]; dup {
				t.Fatalf("keys %v: %q listed twice", keys, u.Key)
			}
			got[u.Key] = u
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("keys %v, revision %d since %d: KeyUpdatesSince (+) differs from UpdatesSince (-):\n%s", keys, cur.Revision(), old.Revision(), diff)
		}
	}
}

// TestNotifyKeysLazyReaders runs a writer while many lazy readers, each on
// a few keys, follow the map with NotifyKeys, State and KeyUpdatesSince,
// and some of them stop early (their registrations go while the writer
// runs). Each rebuilds its keys' entries from the
// updates and must end with what the map holds for them. Run with -race.
func TestNotifyKeysLazyReaders(t *testing.T) {
	const keys, readers, writes = 200, 40, 20_000
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	name := func(i int) string { return fmt.Sprintf("node-%d", i%keys) }

	var m watchable.Map[string, *endpoint]
	var wg sync.WaitGroup
	writerDone := make(chan struct{})
	for i := range readers {
		own := []string{name(i * 5), name(i*5 + 1), name(i * 5)}
		rctx, stop := context.WithCancel(ctx)
		ch := make(chan struct{}, 1)
		m.NotifyKeys(rctx, ch, own...) // before the first State
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer stop()
			var last watchable.State[string, *endpoint]
			seen := map[string]*endpoint{}
			read := func() {
				cur := m.State()
				seen = applyUpdates(t, seen, cur.KeyUpdatesSince(last, own...))
				last = cur
				want := map[string]*endpoint{}
				for _, k := range own {
					if v, ok := cur.Get(k); ok {
						want[k] = v
					}
				}
				if diff := cmp.Diff(want, seen); diff != "" {
					t.Errorf("reader of %v: rebuilt from KeyUpdatesSince (+) differs from State (-):\n%s", own, diff)
				}
			}
			read()
			for reads := 0; ; reads++ {
				if i%4 == 0 && reads == 10 {
					return // stops early: its registration goes
				}
				select {
				case <-ch:
					read()
				case <-writerDone:
					read() // after the last write: seen must be the map's final entries for own
					return
				case <-ctx.Done():
					t.Error("the writer did not finish in time")
					return
				}
			}
		}()
	}
	go func() {
		defer close(writerDone)
		r := rand.New(rand.NewPCG(3, 4))
		for i := range writes {
			k := name(r.IntN(keys))
			if i%5 == 0 {
				m.Delete(k)
			} else {
				m.Store(k, &endpoint{Addr: fmt.Sprint(i % 7)})
			}
		}
	}()
	wg.Wait()
	<-writerDone
	deadline := time.Now().Add(time.Minute)
	for m.Notifiers() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("Notifiers = %d a minute after every reader stopped; want 0", m.Notifiers())
		}
		time.Sleep(time.Millisecond)
	}
}
