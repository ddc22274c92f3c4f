package bench

import (
	"runtime/metrics"
	"slices"
	"testing"
)

// markedN is the size of the map BenchmarkMarkedHeap writes: small enough
// for a collection cycle every few thousand Stores, so that a sample of a
// couple of hundred cycles lasts seconds.
const markedN = 10_000

// BenchmarkMarkedHeap measures the heap the collector marks, cycle by
// cycle, while a writer keeps Storing Kubernetes-style values, keys cycled
// over a map of markedN entries, that eight subscribers read as fast as
// they can. Each op is one collection cycle: the writer Stores until one
// ends, and the heap it marked is read then (/gc/heap/live:bytes). A map
// whose replaced values die in the cycle that finds their snapshots gone
// marks about the same heap every cycle, the map and what the cycle's own
// Stores allocated while it marked; one whose writer brings dead values
// back marks more in some (internal/mvcc, collector.go: until round
// forty-five, 10% of the cycles marked 1.6 times the others).
//
// median-MB and max-MB are the median and the largest heap marked in a
// cycle (10^6 bytes), max÷median their quotient, and spikes-% the share of
// cycles that marked more than 1.3 times the median. The floor's eight
// subscribers are told of each Store and read nothing; it keeps no older
// values, so its figures are what the collector's own timing varies by.
// ns/op is the time of a cycle and means little.
func BenchmarkMarkedHeap(b *testing.B) {
	dropFilled()
	for _, lib := range []string{"switchyard", floorName} {
		b.Run("lib="+lib+"/val=k8s/N=10000/S=8", func(b *testing.B) {
			m := newKV[*Service](lib)
			defer m.Close()
			keys, ring := keysFor(markedN), services.ring()
			fill(m, keys, services)
			stop := subscribers(m, 8, nil)
			defer stop()
			live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var marked []float64
			i := 0
			for b.Loop() {
				for c := gcCount(); ; {
					for range pollEvery {
						m.Store(keys[i%markedN], ring[i%ringSize])
						i++
					}
					if gcCount() != c {
						break
					}
				}
				metrics.Read(live)
				marked = append(marked, float64(live[0].Value.Uint64())/1e6)
			}
			slices.Sort(marked)
			med, top := marked[len(marked)/2], marked[len(marked)-1]
			spikes := 0
			for _, x := range marked {
				if x > 1.3*med {
					spikes++
				}
			}
			b.ReportMetric(med, "median-MB")
			b.ReportMetric(top, "max-MB")
			b.ReportMetric(top/med, "max÷median")
			b.ReportMetric(100*float64(spikes)/float64(len(marked)), "spikes-%")
		})
	}
}
