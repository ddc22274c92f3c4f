package bench

import (
	"fmt"
	"testing"
)

// BenchmarkLatency measures one Store until a subscriber has it: the
// publisher stores, then waits until the subscriber's goroutine finds the
// new value in a snapshot. ns/op is the Store-to-subscriber latency.
func BenchmarkLatency(b *testing.B) {
	ns := sizes(b)
	forEachLib(b, func(b *testing.B, lib string) {
		latencyMatrix(b, lib, ints, ns)
		latencyMatrix(b, lib, services, upTo(ns, 10000))
	})
}

func latencyMatrix[V any](b *testing.B, lib string, vk valueKind[V], ns []int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				benchLatency(b, newKV[V](lib), vk, n)
			})
		}
	})
}

func benchLatency[V any](b *testing.B, m kv[V], vk valueKind[V], n int) {
	keys := keysFor(n)
	w := newWatcher(keys, vk.ring(), vk)
	defer m.Close()
	fill(m, keys, vk)
	stop := subscribers(m, 1, w.check)
	defer stop()

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k, v := w.value(i)
		w.expect(i)
		m.Store(k, v)
		w.wait(b)
	}
	b.StopTimer()
}
