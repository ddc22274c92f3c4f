package bench

import (
	"fmt"
	"testing"
)

// BenchmarkStore measures the publisher: one Store into a map of N entries
// while S subscribers read every snapshot as fast as they can. Allocations
// count every goroutine's, so the peer's per-subscriber copies show in B/op.
//
// Integers run the whole N×S matrix; the realistic values run at N up to
// 10,000 with S of 0 and 8, where the per-value copying cost shows most.
func BenchmarkStore(b *testing.B) {
	ns := sizes(b)
	forEachLib(b, func(b *testing.B, lib string) {
		storeMatrix(b, lib, ints, ns, subscriberCounts())
		storeMatrix(b, lib, protos, upTo(ns, 10000), []int{0, 8})
		storeMatrix(b, lib, services, upTo(ns, 10000), []int{0, 8})
	})
}

func storeMatrix[V any](b *testing.B, lib string, vk valueKind[V], ns, ss []int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				for _, s := range ss {
					b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
						benchStore(b, newKV[V](lib), vk, n, s)
					})
				}
			})
		}
	})
}

func benchStore[V any](b *testing.B, m kv[V], vk valueKind[V], n, s int) {
	keys, ring := keysFor(n), vk.ring()
	defer m.Close()
	fill(m, keys, vk)
	stop := subscribers(m, s, nil)
	defer stop()

	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		m.Store(keys[i%n], ring[i%ringSize])
	}
	b.StopTimer()
}
