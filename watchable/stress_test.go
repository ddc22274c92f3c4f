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
