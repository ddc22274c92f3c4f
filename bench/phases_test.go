package bench

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLatencyPhases splits switchyard's Store-to-subscriber latency
// (BenchmarkLatency: the same values, keys and loop, one subscriber) into
// where it goes, to tell the writer's part from the delivery's:
//
//   - store-ns: the Store call;
//   - deliver-ns: from the Store's return until the subscriber's goroutine
//     holds the snapshot;
//   - get-ns: the subscriber's lookup of the key in the snapshot's State;
//   - wake-ns: from the subscriber's signal until the publisher runs again.
//
// Each is the median of that phase over the run's Stores, and total-ns the
// median of the whole (the medians of the phases need not add up to it);
// ns/op is the mean of the whole. With -gccycles the Stores are timed over
// whole garbage-collection cycles, as the report times BenchmarkLatency.
// switchyard only: the peer's delivery has no such seams.
func BenchmarkLatencyPhases(b *testing.B) {
	ns := sizes(b)
	b.Run("lib=switchyard", func(b *testing.B) {
		phasesMatrix(b, ints, ns)
		phasesMatrix(b, services, ns)
	})
}

func phasesMatrix[V any](b *testing.B, vk valueKind[V], ns []int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				benchPhases(b, filled(libNames[0], vk, n).(*ours[V]), vk, n)
			})
		}
	})
}

// phaseTimes is what the subscriber of BenchmarkLatencyPhases tells the
// publisher: which Store it waits for, and when the subscriber had it.
type phaseTimes struct {
	want      atomic.Int64 // i+1 for the i-th Store awaited; 0 for none
	recv, got time.Time    // written before seen is sent
	seen      chan struct{}
}

func benchPhases[V any](b *testing.B, o *ours[V], vk valueKind[V], n int) {
	keys, ring := keysFor(n), vk.ring()
	ctx, cancel := context.WithCancel(context.Background())
	ch := o.m.Subscribe(ctx)
	<-ch // the first snapshot, every entry
	pt := &phaseTimes{seen: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for s := range ch {
			recv := time.Now()
			want := pt.want.Load()
			if want == 0 {
				continue
			}
			i := int(want - 1)
			got, ok := s.State.Get(keys[i%n])
			if ok && vk.rev(got) == vk.rev(ring[i%ringSize]) && pt.want.CompareAndSwap(want, 0) {
				pt.recv, pt.got = recv, time.Now()
				pt.seen <- struct{}{}
			}
		}
	}()
	defer func() {
		cancel()
		<-done
	}()

	var store, deliver, get, wake, total []time.Duration
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	step := func(i int, timed bool) {
		k, v := keys[i%n], ring[i%ringSize]
		pt.want.Store(int64(i) + 1)
		start := time.Now()
		o.m.Store(k, v)
		stored := time.Now()
		timer.Reset(awaitLimit)
		select {
		case <-pt.seen:
		case <-timer.C:
			b.Fatalf("subscriber never saw store %d", i)
		}
		end := time.Now()
		if timed {
			store = append(store, stored.Sub(start))
			deliver = append(deliver, pt.recv.Sub(stored))
			get = append(get, pt.got.Sub(pt.recv))
			wake = append(wake, end.Sub(pt.got))
			total = append(total, end.Sub(start))
		}
	}
	if *gcCyclesFlag > 0 {
		overCycles(b, o, *gcCyclesFlag, step)
	} else {
		first := ops(o, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for j := range b.N {
			step(first+j, true)
		}
		b.StopTimer()
	}
	for _, m := range []struct {
		unit string
		d    []time.Duration
	}{{"store-ns", store}, {"deliver-ns", deliver}, {"get-ns", get}, {"wake-ns", wake}, {"total-ns", total}} {
		b.ReportMetric(float64(median(m.d).Nanoseconds()), m.unit)
	}
}

// median returns the median of d, which it sorts.
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
