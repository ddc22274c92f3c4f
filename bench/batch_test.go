package bench

import (
	"fmt"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

const (
	batchSize = 10000  // Stores per batch
	batchMap  = 100000 // entries in the map they go into
)

// BenchmarkBatch measures 10,000 Stores into a map of 100,000 int entries,
// applied together: switchyard's Batch (one revision, one notification),
// the floor's writes under one hold of its lock, and the peer, which has no
// batches, with 10,000 Stores. One op is the whole batch; there are no
// subscribers.
func BenchmarkBatch(b *testing.B) {
	forLibs(b, withFloor, func(b *testing.B, lib string) {
		b.Run(fmt.Sprintf("val=%s/N=%d/k=%d", ints.name, batchMap, batchSize), func(b *testing.B) {
			benchBatch(b, lib)
		})
	})
}

func benchBatch(b *testing.B, lib string) {
	keys, ring := keysFor(batchMap), ints.ring()
	m := filled(lib, ints, batchMap)
	first := ops(m, b.N*batchSize)
	bk, bv := make([]string, batchSize), make([]int, batchSize)

	b.ReportAllocs()
	b.ResetTimer()
	for op := range b.N {
		b.StopTimer()
		for j := range batchSize {
			i := first + op*batchSize + j
			bk[j], bv[j] = keys[i%batchMap], ring[i%ringSize]
		}
		b.StartTimer()
		switch m := m.(type) {
		case *ours[int]:
			m.m.Batch(func(tx *watchable.Batch[string, int]) {
				for j, k := range bk {
					tx.Store(k, bv[j])
				}
			})
		case *floor[int]:
			m.StoreBatch(bk, bv)
		default:
			for j, k := range bk {
				m.Store(k, bv[j])
			}
		}
	}
	b.StopTimer()
}
