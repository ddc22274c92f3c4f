package watchable_test

import (
	"context"
	"sync"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// TestConcurrentUse runs writers, readers, subscribers that come and go, and
// a Close in the middle, all at once. It asserts under -race that nothing
// races, panics, deadlocks or leaks, and that every subscriber's view rebuilt
// from Updates equals the State it was delivered with.
func TestConcurrentUse(t *testing.T) {
	var m watchable.Map[int, int]
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	const writers, subscribers, writes = 4, 6, 3000

	halfway := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range writes {
				if w == 0 && i == writes/2 {
					close(halfway)
				}
				k := (i*7 + w) % 64
				switch i % 5 {
				case 0, 1:
					m.Store(k, i)
				case 2:
					m.Delete(k)
				case 3:
					m.Batch(func(b *watchable.Batch[int, int]) { b.Store(k, -i); b.Delete(k + 1) })
				case 4:
					m.Load(k)
					m.State().Len()
				}
			}
		}()
	}

	errs := make(chan string, subscribers*10)
	for s := range subscribers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := 0; ; round++ {
				subCtx, stop := context.WithCancel(ctx)
				var ch <-chan watchable.Snapshot[int, int]
				if s%2 == 0 {
					ch = m.Subscribe(subCtx)
				} else {
					ch = m.SubscribeSubset(subCtx, func(k, _ int) bool { return k%3 == 0 })
				}
				seen := map[int]int{}
				reads := 0
				for snap := range ch {
					for _, u := range snap.Updates {
						if u.Delete {
							delete(seen, u.Key)
						} else {
							seen[u.Key] = u.Value
						}
					}
					if len(seen) != snap.State.Len() {
						errs <- "rebuilt view and State differ in size"
					}
					for k, v := range snap.State.All() {
						if seen[k] != v {
							errs <- "rebuilt view and State differ"
						}
					}
					if reads++; reads == 50 {
						stop() // leave early, racing the writers
					}
				}
				stop()
				if ctx.Err() != nil || round > 1000 {
					return
				}
			}
		}()
	}

	// Close while everything runs; subscribers then see closed channels and
	// writers' calls become no-ops.
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-halfway
		m.Close()
		cancel()
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if n := m.Subscribers(); n != 0 {
		t.Fatalf("Subscribers after Close = %d", n)
	}
}

// TestSubscribeCloseCancelRace races Subscribe, Notify, ctx cancellation,
// writes and two Closes on fresh maps, many times. Every channel must end
// closed, with any snapshot before the close consistent, and nothing may be
// left subscribed.
func TestSubscribeCloseCancelRace(t *testing.T) {
	const rounds, subscribers = 200, 4
	for range rounds {
		var m watchable.Map[int, int]
		m.Store(0, 0)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		start := make(chan struct{})
		bad := make(chan string, subscribers)
		for s := range subscribers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				var ch <-chan watchable.Snapshot[int, int]
				if s%2 == 0 {
					ch = m.Subscribe(ctx)
				} else {
					ch = m.SubscribeSubset(ctx, func(k, _ int) bool { return k%2 == 0 })
				}
				m.Notify(ctx, make(chan struct{}, 1))
				seen := map[int]int{}
				for snap := range ch { // must end: ctx is cancelled and the map closed
					for _, u := range snap.Updates {
						if u.Delete {
							delete(seen, u.Key)
						} else {
							seen[u.Key] = u.Value
						}
					}
					if len(seen) != snap.State.Len() {
						bad <- "rebuilt view and State differ in size"
						return
					}
				}
			}()
		}
		wg.Add(3)
		go func() { defer wg.Done(); <-start; m.Store(1, 1); m.Delete(0); m.Store(2, 2) }()
		go func() { defer wg.Done(); <-start; cancel() }()
		go func() { defer wg.Done(); <-start; m.Close() }()
		close(start)
		m.Close()
		wg.Wait()
		close(bad)
		for b := range bad {
			t.Fatal(b)
		}
		if n := m.Subscribers(); n != 0 {
			t.Fatalf("Subscribers after Close = %d", n)
		}
	}
}
