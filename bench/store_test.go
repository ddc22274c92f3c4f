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
//
// Each N runs every library in turn, the peer, switchyard, then the floor,
// so that the figures a target divides are taken seconds apart: the
// peer's Store with none just before switchyard's (target 1), and the
// floor's just after switchyard's with subscribers (target 3). Run
// library by library, as it was until round forty-one, every other size
// came between them, 15 to 30 seconds of a report's Kubernetes-style line,
// and the floor's own Store moved from 1.2 to 4.1 µs between the report's
// runs. Each library fills its own map of each size once, as before (see
// filled).
func BenchmarkStore(b *testing.B) {
	ns := sizes(b)
	libs := withModel([]string{"peer", "switchyard", floorName})
	storeMatrix(b, libs, ints, ns, floorOr([]int{0}, subscriberCounts()), 0)
	storeMatrix(b, libs, protos, ns, floorOr([]int{0}, []int{0, 8}), 100000)
	storeMatrix(b, libs, services, ns, floorOr([]int{0, 8}, []int{0, 1, 8}), 0)
	dropFilled()
}

// floorOr returns the subscriber counts of a library: floor for the
// floor, others for the rest.
func floorOr(floor, others []int) func(lib string) []int {
	return func(lib string) []int {
		if lib == floorName {
			return floor
		}
		return others
	}
}

// storeMatrix runs benchStore for every N of ns, library of libs and S of
// counts(lib), in that order; when subscribedUpTo is not zero, S other
// than 0 runs only up to that N.
func storeMatrix[V any](b *testing.B, libs []string, vk valueKind[V], ns []int, counts func(lib string) []int, subscribedUpTo int) {
	for _, n := range ns {
		for _, lib := range libs {
			b.Run(fmt.Sprintf("lib=%s/val=%s/N=%d", lib, vk.name, n), func(b *testing.B) {
				for _, s := range counts(lib) {
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
	}
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
