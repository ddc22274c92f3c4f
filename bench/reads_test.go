package bench

import (
	"fmt"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// BenchmarkLoad measures Load of one key (a deep copy of its value) from a
// map of N entries, the keys cycled over the whole map: integers (whose
// copy is free, so the lookup is all there is), and Kubernetes-style
// objects. The floor is a Go map lookup under a mutex, plus the same copy.
func BenchmarkLoad(b *testing.B) {
	ns := sizes(b)
	forLibs(b, withModel(withFloor), func(b *testing.B, lib string) {
		readMatrix(b, lib, ints, ns, benchLoad[int])
		readMatrix(b, lib, services, upTo(ns, 100000), benchLoad[*Service])
	})
}

func benchLoad[V any](b *testing.B, m kv[V], keys []string) {
	// Each run goes on from where the previous one on the same map
	// stopped, as Store's do, so that runs shorter than the map (200,000
	// Loads from a million entries) do not all read the same keys, which
	// the cache would then hold.
	first := ops(m, 0)
	i := first
	for b.Loop() {
		if _, ok := m.Load(keys[i%len(keys)]); !ok {
			b.Fatalf("Load(%q) found nothing", keys[i%len(keys)])
		}
		i++
	}
	ops(m, i-first)
}

// BenchmarkLoadAll measures LoadAll (a deep copy of every entry) of a map of
// N Kubernetes-style objects.
func BenchmarkLoadAll(b *testing.B) {
	ns := upTo(sizes(b), 100000)
	forEachLib(b, func(b *testing.B, lib string) {
		readMatrix(b, lib, services, ns, func(b *testing.B, m kv[*Service], keys []string) {
			for b.Loop() {
				if got := m.LoadAll(); len(got) != len(keys) {
					b.Fatalf("LoadAll returned %d entries, want %d", len(got), len(keys))
				}
			}
		})
	})
}

// BenchmarkState measures switchyard's State: a consistent view of the whole
// map that copies nothing. The peer has no equivalent; the report sets it
// against the peer's LoadAll, the only way to get a consistent view there.
func BenchmarkState(b *testing.B) {
	lib := libNames[0]
	ns := upTo(sizes(b), 100000)
	b.Run("lib="+lib, func(b *testing.B) {
		readMatrix(b, lib, services, ns, func(b *testing.B, m kv[*Service], keys []string) {
			s := m.(interface {
				State() watchable.State[string, *Service]
			})
			for b.Loop() {
				if got := s.State().Len(); got != len(keys) {
					b.Fatalf("State has %d entries, want %d", got, len(keys))
				}
			}
		})
	})
}

// BenchmarkRange measures reading every entry of a map of N integers once:
// switchyard's State().All(), against the floor's range over its Go map
// (under its lock). The peer has no way to range without copying.
//
// How switchyard's map was made shows here, and nowhere else as much: with
// fill=batch it was filled by one Batch, as every scenario's map is (see
// filled), which lays its nodes out in about the order All visits them;
// with fill=stores by one Store after another, which scatters them over
// the heap, as a map long churned by Stores ends up. The floor's map is
// filled by one Store after another either way.
func BenchmarkRange(b *testing.B) {
	ns := sizes(b)
	forLibs(b, withModel([]string{libNames[0], floorName}), func(b *testing.B, lib string) {
		b.Run("val="+ints.name, func(b *testing.B) {
			for _, n := range ns {
				b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
					// switchyard's map filled by one Store after another,
					// made once for all the samples of fill=stores (-count):
					// a million Stores take over a second.
					var byStores kv[int]
					defer func() {
						if byStores != nil {
							byStores.Close()
						}
					}()
					for _, how := range []string{"batch", "stores"} {
						b.Run("fill="+how, func(b *testing.B) {
							var m kv[int]
							if how == "stores" && lib != floorName {
								if byStores == nil {
									dropFilled()
									byStores = newKV[int](lib)
									for i, k := range keysFor(n) {
										byStores.Store(k, ints.make(i, 0))
									}
								}
								m = byStores
							} else {
								m = filled(lib, ints, n)
							}
							b.ReportAllocs()
							b.ResetTimer()
							rangeOver(b, m)
						})
					}
				})
			}
		})
	})
}

// rangeOver reads every entry of m once per iteration of b.Loop.
func rangeOver(b *testing.B, m kv[int]) {
	sum := 0
	for b.Loop() {
		switch m := m.(type) {
		case *ours[int]:
			for _, v := range m.m.State().All() {
				sum += v
			}
		case *floor[int]:
			m.Range(func(_ string, v int) { sum += v })
		case *model[int]:
			m.t.Snapshot().All(func(_ string, v int) bool {
				sum += v
				return true
			})
		}
	}
	sinkInt += sum
}

var sinkInt int

func readMatrix[V any](b *testing.B, lib string, vk valueKind[V], ns []int, read func(*testing.B, kv[V], []string)) {
	b.Run("val="+vk.name, func(b *testing.B) {
		for _, n := range ns {
			b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
				keys := keysFor(n)
				m := filled(lib, vk, n)
				b.ReportAllocs()
				b.ResetTimer()
				read(b, m, keys)
			})
		}
	})
}
