package bench

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkLatency measures one Store until a subscriber has it: the
// publisher stores, then waits until the subscriber's goroutine finds the
// new value in a snapshot. ns/op is the mean Store-to-subscriber latency;
// p50-ns and p99-ns are percentiles over the run's Stores.
//
// Keys are cycled over the whole map and every Store stores a value the
// map deep-copies, so at large N each Store meets cold nodes, as a real
// map's writes do. With -gccycles the Stores are timed over whole
// garbage-collection cycles (cycles_test.go), and the percentiles are over
// the span's Stores.
//
// The floor (lib=floor) is a Go map under a mutex whose subscriber is told
// of each Store and reads the key from the map itself: what a plain map's
// latency grows by with N, which has no snapshots to make. It runs the
// Kubernetes-style values only.
func BenchmarkLatency(b *testing.B) {
	ns := sizes(b)
	forLibs(b, withModel(withFloor), func(b *testing.B, lib string) {
		if lib != floorName {
			// The floor's Stores of integers allocate nothing, so
			// -gccycles, which ends a span at a collection, cannot
			// time them; target 4 asks about Kubernetes-style values.
			latencyMatrix(b, lib, ints, ns)
		}
		latencyMatrix(b, lib, services, ns)
	})
}

func latencyMatrix[V any](b *testing.B, lib string, vk valueKind[V], ns []int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				if lib == "peer" && n > 100000 {
					b.Skip("the peer copies the whole map on every Store: too slow at this N")
				}
				benchLatency(b, filled(lib, vk, n), vk, n)
			})
		}
	})
}

func benchLatency[V any](b *testing.B, m kv[V], vk valueKind[V], n int) {
	keys := keysFor(n)
	w := newWatcher(keys, vk.ring(), vk)
	stop := subscribers(m, 1, w.check)
	defer stop()
	if *gcCyclesFlag > 0 {
		// Sized for the count asked for; the span's writes past it grow
		// the slice, about 16 bytes per write on the 2.5 kB of a k8s
		// Store.
		took := make([]time.Duration, 0, loopCount(1024))
		overCycles(b, m, *gcCyclesFlag, func(i int, timed bool) {
			start := time.Now()
			k, v := w.value(i)
			w.expect(i)
			m.Store(k, v)
			w.wait(b)
			if timed {
				took = append(took, time.Since(start))
			}
		})
		reportPercentiles(b, took)
		return
	}
	first := ops(m, 0)
	took := make([]time.Duration, 0, loopCount(1024))
	i := first
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		k, v := w.value(i)
		w.expect(i)
		m.Store(k, v)
		w.wait(b)
		took = append(took, time.Since(start))
		i++
	}
	ops(m, i-first)
	reportPercentiles(b, took)
}

// reportPercentiles reports the median and the 99th percentile of took.
func reportPercentiles(b *testing.B, took []time.Duration) {
	b.ReportMetric(float64(median(took).Nanoseconds()), "p50-ns") // sorts took
	b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
}
