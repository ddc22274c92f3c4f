package bench

import (
	"fmt"
	"testing"
)

// BenchmarkStore measures the publisher: one Store into a map of N entries
// while S subscribers read every snapshot as fast as they can. Allocations
// count every goroutine's, so the peer's per-subscriber copies show in B/op.
// The floor (lib=floor) is a Go map under a mutex storing the same
// deep-copied values: what the targets measure Stores against. It
// runs S=0 and, for Kubernetes-style values, S=8, whose subscribers are
// told of each Store and read nothing (see floor): what eight readers on
// the machine's cores cost a plain map's writer.
//
// Keys are cycled over the whole map, so at large N every Store meets cold
// nodes. Integers run the whole N×S matrix; Kubernetes-style pointers run S
// of 0, 1 and 8 at every N; protos S of 0 and 8 up to N=100,000, and S=0
// beyond. N=1,000,000 runs only when -sizes asks for it, and the peer is
// skipped there with subscribers: each of its Stores would copy the whole
// map per subscriber. With -gccycles the Stores are timed over whole
// garbage-collection cycles (cycles_test.go); the report does so for the
// Kubernetes-style values.
func BenchmarkStore(b *testing.B) {
	ns := sizes(b)
	forLibs(b, withModel(withFloor), func(b *testing.B, lib string) {
		ss, few, ptr := subscriberCounts(), []int{0, 8}, []int{0, 1, 8}
		if lib == floorName {
			ss, few, ptr = []int{0}, []int{0}, []int{0, 8}
		}
		storeMatrix(b, lib, ints, ns, ss, 0)
		storeMatrix(b, lib, protos, ns, few, 100000)
		storeMatrix(b, lib, services, ns, ptr, 0)
	})
}

// storeMatrix runs benchStore for every N of ns and S of ss; when
// subscribedUpTo is not zero, S other than 0 runs only up to that N.
func storeMatrix[V any](b *testing.B, lib string, vk valueKind[V], ns, ss []int, subscribedUpTo int) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				for _, s := range ss {
					if s > 0 && subscribedUpTo > 0 && n > subscribedUpTo {
						continue
					}
					b.Run(fmt.Sprintf("S=%d", s), func(b *testing.B) {
						if lib == "peer" && n > 100000 && s > 0 {
							b.Skip("the peer copies the whole map per subscriber on every Store: too slow at this N")
						}
						benchStore(b, filled(lib, vk, n), vk, n, s)
					})
				}
			})
		}
	})
}

func benchStore[V any](b *testing.B, m kv[V], vk valueKind[V], n, s int) {
	keys, ring := keysFor(n), vk.ring()
	stop := subscribers(m, s, nil)
	defer stop()
	if *gcCyclesFlag > 0 {
		storeCycles(b, m, keys, ring, *gcCyclesFlag)
		return
	}
	first := ops(m, 0)
	i := first
	b.ReportAllocs()
	for b.Loop() {
		m.Store(keys[i%n], ring[i%ringSize])
		i++
	}
	ops(m, i-first)
}
