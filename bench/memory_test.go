package bench

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// memoryStores is how many Stores the memory scenario makes after the
// subscribers attach, so that each holds a snapshot from after some writes,
// as long-running subscribers do.
const memoryStores = 100

// BenchmarkMemory measures the live heap (heap-MB, 10^6 bytes, after a full
// collection) of a map filled with N entries and S subscribers attached,
// each having read up to a snapshot taken after memoryStores more Stores and
// keeping it, as a real subscriber keeps its latest snapshot. Its ns/op is
// the time to build all that and means little. heap-B/entry is the heap
// divided by N.
func BenchmarkMemory(b *testing.B) {
	dropFilled()
	ns := sizes(b)
	forLibs(b, withModel(libNames), func(b *testing.B, lib string) {
		memoryMatrix(b, lib, ints, ns)
		memoryMatrix(b, lib, services, upTo(ns, 100000))
	})
}

func memoryMatrix[V any](b *testing.B, lib string, vk valueKind[V], ns []int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				for _, s := range []int{0, 1, 8} {
					if n > 100000 && s > 0 {
						continue // the peer would copy a million entries per subscriber per Store
					}
					b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
						benchMemory(b, lib, vk, n, s)
					})
				}
			})
		}
	})
}

func benchMemory[V any](b *testing.B, lib string, vk valueKind[V], n, s int) {
	keys, ring := keysFor(n), vk.ring()
	var heap int64
	for range b.N {
		before := liveHeap()
		m := newKV[V](lib)
		fill(m, keys, vk)

		last := memoryStores - 1
		lastKey, lastVal := keys[last%n], ring[last]
		caught := make([]bool, s)
		var all sync.WaitGroup
		all.Add(s)
		stop := subscribers(m, s, func(sub int, v view[V]) {
			if got, ok := v.Get(lastKey); !caught[sub] && ok && vk.rev(got) == vk.rev(lastVal) {
				caught[sub] = true
				all.Done()
			}
		})
		for i := range memoryStores {
			m.Store(keys[i%n], ring[i])
		}
		all.Wait()

		heap = liveHeap() - before
		runtime.KeepAlive(m)
		stop()
		m.Close()
	}
	b.ReportMetric(float64(heap)/1e6, "heap-MB")
	b.ReportMetric(float64(heap)/float64(n), "heap-B/entry")
}
