package bench

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
)

// TestLibrariesAgree checks that both adapters do what the scenarios assume,
// on the same inputs: a Store is visible to Load, LoadAll and a subscriber.
func TestLibrariesAgree(t *testing.T) {
	for _, lib := range withFloor {
		t.Run(lib, func(t *testing.T) {
			m := newKV[*Service](lib)
			defer m.Close()
			keys := keysFor(3)
			fill(m, keys, services)

			got, ok := m.Load(keys[1])
			if !ok {
				t.Fatalf("Load(%q) found nothing after fill", keys[1])
			}
			if diff := cmp.Diff(newService(1, 0), got); diff != "" {
				t.Errorf("Load(%q) (-want +got):\n%s", keys[1], diff)
			}
			if all := m.LoadAll(); len(all) != len(keys) {
				t.Errorf("LoadAll has %d entries, want %d", len(all), len(keys))
			}

			w := newWatcher(keys, services.ring(), services)
			stop := subscribers(m, 1, w.check)
			defer stop()
			k, v := w.value(4)
			w.expect(4)
			m.Store(k, v)
			waitSeen(t, w)
		})
	}
}

// TestFillOfManyKeys checks a fill large enough that a second goroutine
// makes its values: every key holds the value made for it, whatever the
// library.
func TestFillOfManyKeys(t *testing.T) {
	keys := keysFor(3*fillAhead + 5)
	for _, lib := range slices.Concat(withFloor, []string{modelName}) {
		t.Run(lib, func(t *testing.T) {
			m := newKV[*Service](lib)
			defer m.Close()
			fill(m, keys, services)
			for i, k := range keys {
				got, ok := m.Load(k)
				if !ok {
					t.Fatalf("Load(%q) found nothing after fill", k)
				}
				if want := newService(i, 0); got.Name != want.Name || got.Spec.ClusterIP != want.Spec.ClusterIP {
					t.Fatalf("Load(%q) = %s %s, want %s %s", k, got.Name, got.Spec.ClusterIP, want.Name, want.Spec.ClusterIP)
				}
			}
		})
	}
}

func waitSeen[V any](t *testing.T, w *watcher[V]) {
	t.Helper()
	select {
	case <-w.seen:
	case <-time.After(time.Minute):
		t.Fatal("the subscriber never saw the store")
	}
}

// TestEveryStoreChanges checks the property the scenarios rely on to make
// every Store a change for both libraries: cycling through the ring never
// stores the value a key already has.
func TestEveryStoreChanges(t *testing.T) {
	for _, n := range []int{burstKeys, 100, 10000, 100000} {
		if n%ringSize == 0 {
			t.Errorf("N=%d is a multiple of ringSize %d: the ring would store unchanged values", n, ringSize)
		}
	}
}

// TestValueKinds checks that each kind's rev survives the value and that
// the libraries' deep copies of the realistic values are equal but separate.
func TestValueKinds(t *testing.T) {
	if got := ints.rev(ints.make(3, 7)); got != 7 {
		t.Errorf("ints: rev = %d, want 7", got)
	}
	if got := services.rev(services.make(3, 7)); got != 7 {
		t.Errorf("services: rev = %d, want 7", got)
	}
	if got := protos.rev(protos.make(3, 7)); got != 7 {
		t.Errorf("protos: rev = %d, want 7", got)
	}

	s := newService(3, 7)
	c := s.DeepCopy()
	if diff := cmp.Diff(s, c); diff != "" {
		t.Errorf("Service.DeepCopy differs (-orig +copy):\n%s", diff)
	}
	c.Labels["app"] = "changed"
	c.Spec.Ports[0].Port = 1
	c.Status.Conditions[0].Reason = "changed"
	if diff := cmp.Diff(newService(3, 7), s); diff != "" {
		t.Errorf("mutating the copy changed the original (-want +got):\n%s", diff)
	}
	var nilService *Service
	if nilService.DeepCopy() != nil {
		t.Error("DeepCopy of a nil *Service is not nil")
	}

	if diff := cmp.Diff(newProto(3, 7), newProto(3, 7), protocmp.Transform()); diff != "" {
		t.Errorf("newProto is not deterministic (-a +b):\n%s", diff)
	}
}

// TestIdleSubscriberDoesNotHang checks that a never-reading subscriber can
// be attached and ended with either library.
func TestIdleSubscriberDoesNotHang(t *testing.T) {
	for _, lib := range libNames {
		t.Run(lib, func(t *testing.T) {
			m := newKV[int](lib)
			defer m.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			m.SubscribeIdle(ctx)
			for i := range 10 {
				m.Store("k", i+1)
			}
			if got, _ := m.Load("k"); got != 10 {
				t.Errorf("Load = %d, want 10", got)
			}
		})
	}
}

// TestFloorSubscribersLeave checks that a floor subscriber is told of
// Stores while it lasts and is no longer signalled once its ctx is done.
func TestFloorSubscribersLeave(t *testing.T) {
	f := newKV[int](floorName).(*floor[int])
	seen := make(chan int, 16)
	stop := subscribers[int](f, 2, func(sub int, v view[int]) {
		if x, ok := v.Get("k"); ok {
			seen <- x
		}
	})
	f.Store("k", 7)
	for range 2 { // one call each: their first calls came before the Store
		select {
		case got := <-seen:
			if got != 7 {
				t.Errorf("a subscriber read %d, want 7", got)
			}
		case <-time.After(time.Minute):
			t.Fatal("a subscriber was never told of the Store")
		}
	}
	stop()
	f.mu.Lock()
	n := len(f.subs)
	f.mu.Unlock()
	if n != 0 {
		t.Errorf("%d subscribers still signalled after their ctx ended, want 0", n)
	}
}

// TestModelAdapter checks the model's adapter as TestLibrariesAgree checks
// the libraries', that what its subscribers hold stays readable while the
// table trims its older values (each call reads its snapshot twice, with
// Stores in between, and must read the same), and that once they are gone
// the table lets go of what they held.
func TestModelAdapter(t *testing.T) {
	m := newKV[*Service](modelName)
	defer m.Close()
	keys := keysFor(3)
	fill(m, keys, services)
	if got, ok := m.Load(keys[1]); !ok || got.ResourceVersion != 0 {
		t.Fatalf("Load(%q) = %v, %v after fill; want revision 0", keys[1], got, ok)
	}
	if all := m.LoadAll(); len(all) != len(keys) || all[keys[2]] == nil {
		t.Fatalf("LoadAll = %v after fill, want the %d keys", all, len(keys))
	}
	var changed atomic.Int32
	stop := subscribers(m, 2, func(_ int, v view[*Service]) {
		var first [3]int64
		for i, k := range keys {
			if s, ok := v.Get(k); ok {
				first[i] = s.ResourceVersion
			}
		}
		time.Sleep(50 * time.Microsecond) // the writer stores, and trims, meanwhile
		for i, k := range keys {
			if s, ok := v.Get(k); !ok || s.ResourceVersion != first[i] {
				changed.Add(1)
			}
		}
		if v.Len() != len(keys) {
			changed.Add(1)
		}
	})
	ring := services.ring()
	for i := range 3000 { // enough older values kept for the table to trim
		m.Store(keys[i%3], ring[i%ringSize])
	}
	stop()
	// With nobody holding a snapshot, a trim leaves no older value.
	mm := m.(*model[*Service])
	deadline := time.Now().Add(10 * time.Second)
	for {
		mm.mu.Lock()
		mm.t.Trim()
		h := mm.t.History()
		mm.mu.Unlock()
		if h == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the table keeps %d older values after its subscribers ended, want 0", h)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	w := newWatcher(keys, ring, services)
	stop = subscribers(m, 1, w.check)
	defer stop()
	k, v := w.value(3003)
	w.expect(3003)
	m.Store(k, v)
	waitSeen(t, w)
	if n := changed.Load(); n != 0 {
		t.Errorf("a subscriber's snapshot read another value, or Len, on %d reads", n)
	}
	stop()
	mm.mu.Lock()
	defer mm.mu.Unlock()
	if len(mm.subs) != 0 {
		t.Errorf("%d subscribers still told of Stores after their ctx ended, want 0", len(mm.subs))
	}
}

// TestModelSubscribersGetUpdates checks that the model's subscriber
// receives the filled keys with its first snapshot, and then each Store as
// an update, once: 50 Stores of new values, each awaited, give 50 updates
// more. (That the updates are the net change between two snapshots is
// checked in internal/mvcc.)
func TestModelSubscribersGetUpdates(t *testing.T) {
	m := newKV[int](modelName)
	defer m.Close()
	keys := keysFor(10)
	fill(m, keys, ints)
	var updates atomic.Int64
	w := newWatcher(keys, ints.ring(), ints)
	stop := subscribers(m, 1, func(sub int, v view[int]) {
		updates.Add(int64(v.Updates()))
		w.check(sub, v)
	})
	defer stop()
	for i := range 50 {
		k, v := w.value(i)
		w.expect(i)
		m.Store(k, v)
		waitSeen(t, w)
	}
	if n := updates.Load(); n != int64(len(keys))+50 {
		t.Errorf("the subscriber received %d updates for %d keys and 50 Stores, want %d", n, len(keys), len(keys)+50)
	}
}
