package mvcc

import (
	"runtime"
	"testing"
	"weak"
)

// TestUnlinkedRecordsLetTheirBlocksGo checks that the blocks of records a
// table takes its lists' records from are freed once trims have unlinked
// their records, while a reader keeps taking snapshots, as a subscriber
// that keeps up does. A block holds records of every key, and a record
// still listed keeps its whole block alive; until round forty-four a
// record a trim unlinked still led to the one after it, so each block
// kept an older one alive, and that one an older still: a map of 100
// keys grew by about 27 bytes a Store, for good.
func TestUnlinkedRecordsLetTheirBlocksGo(t *testing.T) {
	t.Run("int", func(t *testing.T) {
		unlinkedRecordsLetTheirBlocksGo(t, New[int, int](0), func(i int) int { return i })
	})
	t.Run("pointer", func(t *testing.T) {
		unlinkedRecordsLetTheirBlocksGo(t, New[int, *payload](0), func(i int) *payload { return newPayload(uint64(i), nil) })
	})
}

func unlinkedRecordsLetTheirBlocksGo[V any](t *testing.T, tb *Table[int, V], value func(int) V) {
	const keys, stores = 100, 50_000
	for k := range keys {
		tb.Store(k, value(k))
	}
	var blocks []weak.Pointer[record]
	var s Snapshot[int, V]
	for i := range stores {
		tb.Store(i%keys, value(keys+i))
		s = tb.Snapshot() // as a subscriber that keeps up: held until the next
		if len(tb.slab) == cap(tb.slab) && len(tb.slab) == 63 {
			blocks = append(blocks, weak.Make(&tb.slab[0])) // a block begun
		}
		if i%1000 == 999 {
			// The table learns that snapshots are gone when the
			// collector finds them so; its trims follow.
			runtime.GC()
		}
	}
	runtime.KeepAlive(s)
	collect()
	if len(blocks) < stores/64/2 {
		t.Fatalf("began %d blocks of records; want about %d, for the test to mean anything", len(blocks), stores/64)
	}
	alive := 0
	for _, b := range blocks {
		if b.Value() != nil {
			alive++
		}
	}
	// What the lists still hold, the records kept since the last trim
	// (about a thousand here), holds a few dozen blocks.
	if alive > len(blocks)/8 {
		t.Fatalf("%d blocks of records of %d are alive, with %d values in the lists; want a few dozen", alive, len(blocks), tb.History())
	}
}
