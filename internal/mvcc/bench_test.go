package mvcc

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkPassAfterSnapshot times one pass of Stores over every key of a
// table of n int values, fresh for each op, with no snapshot (held=no)
// and with one taken just before the pass and held through it (held=yes):
// the first write to each key after a snapshot keeps the value it
// replaces for the snapshot, which a lazy reader, or each of several
// readers, makes the writer pay once a pass. ns/store is the time of a
// Store; the difference between the two is what keeping the older value
// costs. The filling, and a collection, are outside the timer.
func BenchmarkPassAfterSnapshot(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("key-%08d", i)
		}
		for _, held := range []string{"no", "yes"} {
			b.Run(fmt.Sprintf("N=%d/held=%s", n, held), func(b *testing.B) {
				var s Snapshot[string, int]
				for range b.N {
					b.StopTimer()
					t := New[string, int](0)
					for i, k := range keys {
						t.Store(k, i)
					}
					if held == "yes" {
						s = t.Snapshot()
					}
					runtime.GC()
					b.StartTimer()
					for i, k := range keys {
						t.Store(k, i+1)
					}
				}
				b.StopTimer()
				if held == "yes" && s.Len() != n {
					b.Fatalf("the held snapshot has %d keys, want %d", s.Len(), n)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/store")
			})
		}
	}
}
