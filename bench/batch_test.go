package bench

import (
	"fmt"
	"testing"

	"github.com/switchyard-go/switchyard/internal/mvcc"
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
// subscribers. Every Store overwrites a key present, so switchyard's batch
// is made in place; in the scenario with /held=State a State of the map is
// taken before each batch (outside the timer), as a reader would, and the
// batch keeps what it replaces for that State (a frozen copy of its undo
// log: internal/mvcc/frozen.go). The floor and the peer have no States:
// their two scenarios are the same. With -model, the model runs too, its
// batch published as one version, and with /held=State a
// snapshot taken before each batch.
func BenchmarkBatch(b *testing.B) {
	forLibs(b, withModel(withFloor), func(b *testing.B, lib string) {
		name := fmt.Sprintf("val=%s/N=%d/k=%d", ints.name, batchMap, batchSize)
		b.Run(name, func(b *testing.B) { benchBatch(b, lib, false) })
		b.Run(name+"/held=State", func(b *testing.B) { benchBatch(b, lib, true) })
	})
}

func benchBatch(b *testing.B, lib string, held bool) {
	keys, ring := keysFor(batchMap), ints.ring()
	m := filled(lib, ints, batchMap)
	first := ops(m, 0)
	bk, bv := make([]string, batchSize), make([]int, batchSize)

	b.ReportAllocs()
	op := 0
	for ; b.Loop(); op++ {
		b.StopTimer()
		for j := range batchSize {
			i := first + op*batchSize + j
			bk[j], bv[j] = keys[i%batchMap], ring[i%ringSize]
		}
		if o, ok := m.(*ours[int]); ok && held {
			sinkState = o.m.State()
		}
		if o, ok := m.(*model[int]); ok && held {
			sinkSnapshot = o.t.Snapshot()
		}
		b.StartTimer()
		storeBatch(m, bk, bv)
	}
	ops(m, op*batchSize)
	sinkState = watchable.State[string, int]{}
	sinkSnapshot = mvcc.Snapshot[string, int]{}
}

// storeBatch stores values[i] at keys[i] into m in one batch: Map.Batch
// for switchyard, StoreBatch for the floor and the model, and one Store
// after another for the peer, which has no batch.
func storeBatch[V any](m kv[V], keys []string, values []V) {
	switch m := m.(type) {
	case *ours[V]:
		m.m.Batch(func(tx *watchable.Batch[string, V]) {
			for j, k := range keys {
				tx.Store(k, values[j])
			}
		})
	case interface{ StoreBatch([]string, []V) }:
		m.StoreBatch(keys, values)
	default:
		for j, k := range keys {
			m.Store(k, values[j])
		}
	}
}

// sinkState and sinkSnapshot hold the State or snapshot a benchmark took,
// as a reader would.
var (
	sinkState    watchable.State[string, int]
	sinkSnapshot mvcc.Snapshot[string, int]
)
