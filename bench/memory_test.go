package bench

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
)

// memoryStores returns how many Stores the memory scenario makes after
// the subscribers attach to a map of n entries, so that each holds a
// snapshot from after some writes, as long-running subscribers do: a
// hundred, and ten from 100,000 entries on. There the peer's Store copies
// the whole map for each subscriber, and with eight a hundred Stores took
// 28 s of the report for Kubernetes-style values and 18 s for integers,
// where ten take 12 and 2.5, and leave either library's heap within 0.3%
// of what a hundred left. (Not ten everywhere: at N=100 a hundred Stores
// rewrite every key, and switchyard's map then held 1.14 kB an entry with
// eight subscribers, against 0.47 after ten.)
func memoryStores(n int) int {
	if n >= 100000 {
		return 10
	}
	return 100
}

// BenchmarkMemory measures the live heap (heap-MB, 10^6 bytes, after a full
// collection) of a map filled with N entries and S subscribers attached,
// each having read up to a snapshot taken after memoryStores(N) more Stores and
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
	heapAfter(b, lib, vk, n, s, memoryStores(n), 0)
}

// heapAfter fills a map of lib with n entries, attaches s subscribers,
// makes stores Stores, the i-th of ring[i] at keys[i], keys and ring taken
// round, waits until every subscriber has read the last, and reports the
// live heap the map and the subscribers' snapshots hold then. With batch
// above 0 it makes them in batches of that many (Map.Batch, or the
// floor's StoreBatch), which stores must be a multiple of.
func heapAfter[V any](b *testing.B, lib string, vk valueKind[V], n, s, stores, batch int) {
	keys, ring := keysFor(n), vk.ring()
	var heap int64
	for range b.N {
		before := liveHeap()
		m := newKV[V](lib)
		fill(m, keys, vk)

		last := stores - 1
		lastKey, lastVal := keys[last%n], ring[last%ringSize]
		caught := make([]bool, s)
		var all sync.WaitGroup
		all.Add(s)
		stop := subscribers(m, s, func(sub int, v view[V]) {
			if got, ok := v.Get(lastKey); !caught[sub] && ok && vk.rev(got) == vk.rev(lastVal) {
				caught[sub] = true
				all.Done()
			}
		})
		if batch > 0 {
			storeBatches(m, keys, ring, stores, batch)
		} else {
			for i := range stores {
				m.Store(keys[i%n], ring[i%ringSize])
			}
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

// BenchmarkMemoryAfterPass measures the live heap (after a full
// collection) of a map of 100,000 Kubernetes-style entries after one Store
// to every key while S subscribers read every snapshot, once each has read
// the last and kept it: what a map whose subscribers keep up holds once
// every value was replaced under their snapshots, where BenchmarkMemory's
// few Stores replace a few. heap-B/entry is the heap divided by N. The
// floor's subscribers are told of each Store and read nothing; it holds
// the map alone. The peer is left out: each of its Stores copies the map
// for each subscriber.
func BenchmarkMemoryAfterPass(b *testing.B) {
	dropFilled()
	const n = 100000
	forLibs(b, []string{"switchyard", floorName}, func(b *testing.B, lib string) {
		b.Run("val="+services.name, func(b *testing.B) {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				for _, s := range []int{0, 1, 8} {
					b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
						heapAfter(b, lib, services, n, s, n, 0)
					})
				}
			})
		})
	})
}

// afterBatchesSize is how many Stores each batch of
// BenchmarkMemoryAfterBatches makes.
const afterBatchesSize = 1000

// BenchmarkMemoryAfterBatches is BenchmarkMemoryAfterPass with the Stores
// made in batches of 1,000, as a provider's relist makes them, each batch
// replacing values under the snapshots the subscribers hold: what the map
// holds once every value was replaced by batches. It is not in the
// report, which it would lengthen by ten seconds; docs/benchmarks.md gives
// its figures from when batches kept the values they replaced until a
// trim.
func BenchmarkMemoryAfterBatches(b *testing.B) {
	dropFilled()
	const n = 100000
	forLibs(b, []string{"switchyard", floorName}, func(b *testing.B, lib string) {
		b.Run("val="+services.name, func(b *testing.B) {
			b.Run(fmt.Sprintf("N=%d/k=%d", n, afterBatchesSize), func(b *testing.B) {
				for _, s := range []int{0, 1, 8} {
					b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
						heapAfter(b, lib, services, n, s, n, afterBatchesSize)
					})
				}
			})
		})
	})
}

// storeBatches makes stores Stores into m in batches of batch, the i-th of
// ring[i] at keys[i], keys and ring taken round.
func storeBatches[V any](m kv[V], keys []string, ring []V, stores, batch int) {
	n := len(keys)
	bk, bv := make([]string, batch), make([]V, batch)
	for i := 0; i < stores; i += batch {
		for j := range batch {
			bk[j], bv[j] = keys[(i+j)%n], ring[(i+j)%ringSize]
		}
		storeBatch(m, bk, bv)
	}
}
