package watchable

import (
	"context"
	"testing"
	"time"
)

// TestKeyedRoutersLeaveWithTheirLast checks that SubscribeKeys' and
// NotifyKeys' indexes stay while any registration is left, leave the map
// with the last one, so that its writes consult no router at all, and come
// back, working, with the next.
func TestKeyedRoutersLeaveWithTheirLast(t *testing.T) {
	for _, kind := range []string{"SubscribeKeys", "NotifyKeys"} {
		t.Run(kind, func(t *testing.T) {
			var m Map[string, int]
			m.Store("a", 1)
			// register follows "a" until ctx ends, and returns a
			// function that reports whether a write to "a" reached it
			// since the previous call.
			register := func(ctx context.Context) func() bool {
				if kind == "NotifyKeys" {
					ch := make(chan struct{}, 1)
					m.NotifyKeys(ctx, ch, "a")
					return func() bool {
						select {
						case <-ch:
							return true
						default:
							return false
						}
					}
				}
				ch := m.SubscribeKeys(ctx, "a")
				<-ch // the first snapshot
				return func() bool {
					select {
					case s := <-ch:
						return len(s.Updates) == 1 && s.Updates[0].Key == "a"
					default:
						return false
					}
				}
			}
			registered := func() int { return m.Subscribers() + m.Notifiers() }
			routers := func() int {
				m.mu.Lock()
				defer m.mu.Unlock()
				return len(m.routers)
			}
			index := func() bool {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.keys != nil || m.keyNotes != nil
			}

			ctx1, cancel1 := context.WithCancel(t.Context())
			ctx2, cancel2 := context.WithCancel(t.Context())
			defer cancel2()
			first, second := register(ctx1), register(ctx2)
			if n := routers(); n != 1 || !index() {
				t.Fatalf("two registrations: %d routers (index kept: %v); want 1, kept", n, index())
			}

			cancel1()
			awaitRegistered(t, registered, 1)
			if n := routers(); n != 1 || !index() {
				t.Fatalf("one registration left: %d routers (index kept: %v); want 1, kept", n, index())
			}
			m.Store("a", 2)
			if !second() {
				t.Fatal("the registration left was not told of a write to its key")
			}
			if first() {
				t.Fatal("the ended registration was told of a write to its key")
			}

			cancel2()
			awaitRegistered(t, registered, 0)
			if n := routers(); n != 0 || index() {
				t.Fatalf("none left: %d routers (index kept: %v); want none", n, index())
			}
			m.Store("a", 3) // nobody to tell

			third := register(t.Context())
			if n := routers(); n != 1 || !index() {
				t.Fatalf("a registration after the index left: %d routers (index kept: %v); want 1, kept", n, index())
			}
			m.Store("a", 4)
			if !third() {
				t.Fatal("a registration after the index left was not told of a write to its key")
			}
			if v, _ := m.Load("a"); v != 4 {
				t.Fatalf("a = %d; want 4", v)
			}
		})
	}
}

// awaitRegistered waits until registered reports want, as the removals
// context.AfterFunc starts run in goroutines of their own.
func awaitRegistered(t *testing.T, registered func() int, want int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for registered() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d registrations a minute on; want %d", registered(), want)
		}
		time.Sleep(time.Millisecond)
	}
}
