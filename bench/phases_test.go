package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// BenchmarkLatencyPhases splits switchyard's Store-to-subscriber latency
// (BenchmarkLatency: the same values, keys, subscriber and loop) into
// where it goes, to tell the writer's part from the delivery's:
//
//   - store-ns: the Store call;
//   - deliver-ns: from the Store's return until the subscriber's goroutine
//     has the snapshot;
//   - get-ns: the subscriber's lookup of the key in the snapshot's State;
//   - wake-ns: from the end of that lookup until the publisher runs again.
//
// Each is the median of that phase over the run's Stores, and total-ns the
// median of the whole (the medians of the phases need not add up to it);
// ns/op is the mean of the whole. With -gccycles the Stores are timed over
// whole garbage-collection cycles, as the report times BenchmarkLatency.
// switchyard only: the peer's delivery has no such seams.
func BenchmarkLatencyPhases(b *testing.B) {
	ns := sizes(b)
	b.Run("lib="+libNames[0], func(b *testing.B) {
		phasesMatrix(b, ints, ns)
		phasesMatrix(b, services, ns)
	})
}

func phasesMatrix[V any](b *testing.B, vk valueKind[V], ns []int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				benchPhases(b, filled(libNames[0], vk, n), vk, n)
			})
		}
	})
}

func benchPhases[V any](b *testing.B, m kv[V], vk valueKind[V], n int) {
	w := newWatcher(keysFor(n), vk.ring(), vk)
	w.stamps = true
	stop := subscribers(m, 1, w.check)
	defer stop()

	var store, deliver, get, wake, total []time.Duration
	step := func(i int, timed bool) {
		k, v := w.value(i)
		w.expect(i)
		start := time.Now()
		m.Store(k, v)
		stored := time.Now()
		w.wait(b)
		end := time.Now()
		if timed {
			store = append(store, stored.Sub(start))
			deliver = append(deliver, w.recv.Sub(stored))
			get = append(get, w.got.Sub(w.recv))
			wake = append(wake, end.Sub(w.got))
			total = append(total, end.Sub(start))
		}
	}
	if *gcCyclesFlag > 0 {
		overCycles(b, m, *gcCyclesFlag, step)
	} else {
		first := ops(m, 0)
		i := first
		b.ReportAllocs()
		for b.Loop() {
			step(i, true)
			i++
		}
		ops(m, i-first)
	}
	for _, p := range []struct {
		unit string
		d    []time.Duration
	}{{"store-ns", store}, {"deliver-ns", deliver}, {"get-ns", get}, {"wake-ns", wake}, {"total-ns", total}} {
		b.ReportMetric(float64(median(p.d).Nanoseconds()), p.unit)
	}
}

// median returns the median of d, which it sorts.
func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}
