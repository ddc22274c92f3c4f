package bench

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// blockedAfter is how long the publisher may make no progress at all before
// the idle scenario reports it as blocked instead of hanging.
const blockedAfter = 10 * time.Second

// BenchmarkIdleSubscriber measures publisher throughput without (idle=0) and
// with (idle=1) one subscriber that never reads its channel, and for
// switchyard with one lazy reader that never reads (idle=lazy): registered
// with Notify and holding the State it took first, as a reader of
// State.UpdatesSince does between two reads. With -model, the model runs
// too, its lazy reader told of Stores and holding a snapshot (it would
// learn the changes by comparing it with the next, Cursor.Changes without
// a log).
//
// With a reader (idle=lazy and idle=1), each sample also times the same
// Stores into a second map of the library without one, filled alike, in
// blocks of pairedBlock Stores alternating with the reader's map: ns/op is
// the reader's map's Stores alone, and idle0-ns/op the other's, taken over
// the same fraction of a second. Target 5 divides the two. Samples of
// idle=0 and idle=lazy taken one after the other, 20 ms apart, put the
// quotient anywhere from 0.9 to 2.7 on this machine (round forty-one), and
// the median of five such rounds from +4% to +17% an hour apart.
//
// retained-MB (10^6 bytes) is how much more live heap there is after the
// b.N Stores than before them, after a full GC: what a never-reading
// subscriber makes the map hold on to. It depends on b.N, so compare runs
// with the same -benchtime (a paired sample makes half of them into the
// reader's map). A publisher that
// stops making progress is reported as blocked=1 and the benchmark is
// skipped, rather than hanging the suite.
func BenchmarkIdleSubscriber(b *testing.B) {
	dropFilled()
	ns := upTo(sizes(b), 10000)
	forLibs(b, withModel(libNames), func(b *testing.B, lib string) {
		b.Run("val="+ints.name, func(b *testing.B) {
			for _, n := range ns {
				b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
					// The lazy reader runs right after idle=0, the figure
					// target 5 divides it by, so that the two samples of
					// a round (bench/cmd/compare) are taken moments apart.
					for _, idle := range []string{"0", "lazy", "1"} {
						if idle == "lazy" && lib != "switchyard" && lib != modelName {
							continue // the peer has no such reader
						}
						b.Run("idle="+idle, func(b *testing.B) {
							benchIdle(b, lib, ints, n, idle)
						})
					}
				})
			}
		})
	})
}

func benchIdle[V any](b *testing.B, lib string, vk valueKind[V], n int, idle string) {
	keys, ring := keysFor(n), vk.ring()
	m := newKV[V](lib)
	defer m.Close()
	fill(m, keys, vk)
	// plain is the paired map without a reader, if this sample has one.
	var plain kv[V]
	if idle != "0" {
		plain = newKV[V](lib)
		defer plain.Close()
		fill(plain, keys, vk)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	switch idle {
	case "1":
		m.SubscribeIdle(ctx)
	case "lazy":
		var held any
		switch m := m.(type) {
		case *ours[V]:
			held = m.WatchLazily(ctx)
		case *model[V]:
			held = m.WatchLazily(ctx)
		}
		defer runtime.KeepAlive(held)
	}
	before := liveHeap()

	var progress atomic.Int64
	tt := newTurns(plain != nil) // the reader's map is side 0, the plain map side 1
	done := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		defer close(done)
		// Each map gets the same keys and values in the same order.
		maps := [2]kv[V]{m, plain}
		for op := range b.N {
			i := tt.next()
			maps[tt.side].Store(keys[i%n], ring[i%ringSize])
			progress.Store(int64(op + 1))
			tt.done()
		}
		tt.stop()
	}()
	if !waitProgress(done, &progress) {
		b.ReportMetric(1, "blocked")
		// Ending the subscription may free the publisher; if it does not,
		// the leak check at the end of the run will say so.
		cancel()
		b.Skipf("publisher blocked after %d of %d stores with a never-reading subscriber", progress.Load(), b.N)
	}
	b.StopTimer()
	tt.report(b, "idle0-ns/op")
	b.ReportMetric(float64(liveHeap()-before)/1e6, "retained-MB")
}

// waitProgress waits for done, and reports false if the counter stood still
// for blockedAfter first.
func waitProgress(done <-chan struct{}, progress *atomic.Int64) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last, since := int64(-1), time.Now()
	for {
		select {
		case <-done:
			return true
		case <-tick.C:
			if p := progress.Load(); p != last {
				last, since = p, time.Now()
			} else if time.Since(since) > blockedAfter {
				return false
			}
		}
	}
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
