package bench

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

const (
	// churnKeys is how many keys the churn scenario writes over and over.
	churnKeys = 100
	// churnWrites is how many writes a churn sample makes, and churnFirst
	// how many of them come before the first measure of the heap.
	churnWrites, churnFirst = 1_000_000, 100_000
	// churnGCEvery is how many writes go between two collections: the map
	// learns that a State is gone when the collector finds it so, as a
	// program allocating more than this loop does would be collected.
	churnGCEvery = 10_000
)

// BenchmarkMemoryAfterChurn measures whether a map written for long under
// readers keeps memory it no longer needs: churnWrites writes of integers
// cycled over churnKeys keys, each a change, with one reader of each kind
// (reader=):
//
//   - none: no reader;
//   - subscribe: a Subscribe channel read as fast as it can be, each
//     snapshot kept until the next;
//   - lazy: a Notify registration whose goroutine, at each signal, takes
//     the newest State and its UpdatesSince the one it held, then holds it;
//   - state: the writer itself takes the newest State after every write
//     and holds it until the next.
//
// heap-MB is the live heap (10^6 bytes, after a full collection) that the
// map and its reader hold at the end, once the reader has read the last
// write; growth-B/write is how much that heap grew from the first
// churnFirst writes to the end, divided by the writes in between. A map
// that keeps what its readers hold and nothing more grows by about
// nothing. Until round forty-four the table's record blocks chained each
// other alive, and here the subscribe, lazy and state readers grew the
// heap by 0.35, 0.59 and 2.2 bytes a write, for good (0.4, 0.7 and 5.3 MB
// at the end, against 0.05, 0.08 and 0.85 after). switchyard only; the
// collector runs every churnGCEvery writes.
// ns/op is the time of a whole sample and means little.
func BenchmarkMemoryAfterChurn(b *testing.B) {
	dropFilled()
	b.Run("lib=switchyard/val=int", func(b *testing.B) {
		b.Run("N=100", func(b *testing.B) {
			for _, reader := range []string{"none", "subscribe", "lazy", "state"} {
				b.Run("reader="+reader, func(b *testing.B) {
					var heap, growth int64
					for range b.N {
						heap, growth = churn(b, reader)
					}
					b.ReportMetric(float64(heap)/1e6, "heap-MB")
					b.ReportMetric(float64(growth)/float64(churnWrites-churnFirst), "growth-B/write")
				})
			}
		})
	})
}

// churn makes one churn sample with a reader of the given kind and returns
// the live heap at its end, relative to before the map was made, and how
// much it grew from the first churnFirst writes to the end.
func churn(b *testing.B, reader string) (heap, growth int64) {
	keys := keysFor(churnKeys)
	before := liveHeap()
	m := new(watchable.Map[string, int])
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// seen is the revision of the newest State the reader has read; the
	// writer waits for it to reach the map's before each measure, so that
	// the reader holds the State of the last write, as a reader that
	// keeps up does.
	var seen atomic.Uint64
	var held watchable.State[string, int] // the state reader's
	done := make(chan struct{})
	switch reader {
	case "none", "state":
		close(done)
	case "subscribe":
		ch := m.Subscribe(ctx)
		go func() {
			defer close(done)
			var last watchable.Snapshot[string, int]
			for s := range ch {
				last = s
				seen.Store(s.State.Revision())
			}
			runtime.KeepAlive(last)
		}()
	case "lazy":
		signal := make(chan struct{}, 1)
		m.Notify(ctx, signal)
		go func() {
			defer close(done)
			last := m.State()
			for {
				select {
				case <-signal:
					st := m.State()
					_ = st.UpdatesSince(last)
					last = st
					seen.Store(st.Revision())
				case <-ctx.Done():
					runtime.KeepAlive(last)
					return
				}
			}
		}()
	default:
		b.Fatalf("no churn reader %q", reader)
	}

	write := func(from, to int) {
		for i := from; i < to; i++ {
			m.Store(keys[i%churnKeys], i)
			if reader == "state" {
				held = m.State()
			}
			if (i+1)%churnGCEvery == 0 {
				runtime.GC()
			}
		}
	}
	caughtUp := func() {
		if reader == "none" || reader == "state" {
			return
		}
		want := m.Revision()
		deadline := time.Now().Add(blockedAfter)
		for seen.Load() < want {
			if time.Now().After(deadline) {
				b.Fatalf("reader=%s read up to revision %d in %v; the map is at %d", reader, seen.Load(), blockedAfter, want)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}

	write(0, churnFirst)
	caughtUp()
	first := liveHeap()
	write(churnFirst, churnWrites)
	caughtUp()
	last := liveHeap()
	runtime.KeepAlive(held)
	cancel()
	<-done
	return last - before, last - first
}
