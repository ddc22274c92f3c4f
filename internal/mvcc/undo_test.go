package mvcc

import (
	"fmt"
	"math/bits"
	"runtime"
	"testing"
	"unsafe"
	"weak"
)

// TestUndoEntriesHoldTheirValues replaces pointers in a Batch while a
// snapshot is held, and collects inside the batch: until the batch ends,
// its undo log is all that holds the values it replaced, and the
// snapshot and Load read them there. Were the log's blocks allocated
// without pointers, the collector would free the values, the weak
// pointers would read nil and the reads would find reused memory.
func TestUndoEntriesHoldTheirValues(t *testing.T) {
	const keys = 300 // more than one block of the log
	tb := New[string, *payload](0)
	key := func(i int) string { return fmt.Sprint("k", i) }
	olds := make([]weak.Pointer[payload], keys)
	for i := range keys {
		p := newPayload(uint64(i), nil)
		olds[i] = weak.Make(p)
		tb.Store(key(i), p)
	}
	s := tb.Snapshot()
	tb.Batch(func(b Batch[string, *payload]) {
		for i := range keys {
			b.Store(key(i), newPayload(uint64(keys+i), nil))
		}
		runtime.GC()
		runtime.GC()
		for i := range keys {
			if olds[i].Value() == nil {
				t.Fatalf("inside the batch the value it replaced at %s was freed", key(i))
			}
			for _, read := range []func(string) (*payload, bool){s.Get, tb.Load} {
				p, ok := read(key(i))
				if !ok || p.id != uint64(i) || !p.intact(uint64(i)) {
					t.Fatalf("inside the batch a read of %s found %+v, %v; want payload %d, whole", key(i), p, ok, i)
				}
			}
		}
	})
	for i := range keys {
		if p, ok := s.Get(key(i)); !ok || p.id != uint64(i) {
			t.Fatalf("after the batch the held snapshot reads %s as %+v, %v; want payload %d", key(i), p, ok, i)
		}
		if p, _ := tb.Load(key(i)); p.id != uint64(keys+i) {
			t.Fatalf("after the batch Load(%s) = payload %d, want %d", key(i), p.id, keys+i)
		}
	}
	runtime.KeepAlive(s)
}

// TestUndoLogKnowsTheArrayItBeganIn grows the table inside a batch, and
// checks which entries the log gives as slots of the array the batch
// began in, and which slots: the writer keeps and puts back only those.
func TestUndoLogKnowsTheArrayItBeganIn(t *testing.T) {
	tb := New[string, uint64](0)
	key := func(i int) string { return fmt.Sprint("k", i) }
	for i := range 10 {
		tb.Store(key(i), 1)
	}
	began := tb.meta.Load().arr
	var before []int // the slots of the first ten keys, in the first array
	for i := range 10 {
		s, _, _ := tb.find(began.slots, key(i))
		before = append(before, s.index(began.slots))
	}
	tb.Batch(func(b Batch[string, uint64]) {
		for i := range 100 {
			b.Store(key(i), 2)
		}
		if tb.meta.Load().arr == began {
			t.Fatal("the table did not grow inside the batch")
		}
		x := 0
		tb.undo.each(func(_ *undo, slot int, first bool) {
			switch {
			case x < 10 && (!first || slot != before[x]):
				t.Errorf("entry %d is slot %d, first array %v; want slot %d of the first array", x, slot, first, before[x])
			case x >= 10 && first:
				// The table grows when a new key would fill it: the
				// first new keys may still go into the first array.
				if tb.undo.grew != noGrowth && uint64(x) >= tb.undo.grew {
					t.Errorf("entry %d, past the growth at %d, is given as a slot of the first array", x, tb.undo.grew)
				}
			}
			x++
		})
		if x != 100 || tb.undo.grew == noGrowth || tb.undo.grew < 10 {
			t.Errorf("the log has %d entries and grew at %d; want 100, and a growth after the first ten", x, tb.undo.grew)
		}
	})
}

// TestUndoLogGrowsItsListInPlace fills a log of 400 blocks and measures
// what it allocated besides the blocks and the slot indexes: the list of
// blocks, which must grow by appending (about 16 bytes and a 24-byte
// header a block), not by a copy of the whole list per block (2,400
// bytes a block on average at 400 blocks).
func TestUndoLogGrowsItsListInPlace(t *testing.T) {
	const blocks = 400
	const n = blocks * undoBlockSize
	tb := New[string, uint64](0)
	tb.Store("k", 1)
	arr := tb.meta.Load().arr
	s, _, _ := tb.find(arr.slots, "k")
	var l undoLog
	l.slots = make([]uint32, 0, n) // measured apart, below
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l.begin(1, arr)
	for range n {
		l.add(arr, s, 0, raw{}, false)
	}
	runtime.ReadMemStats(&after)
	if got := l.room(); got != n {
		t.Fatalf("the log has room for %d entries after %d; want %d", got, n, n)
	}
	blockBytes := uint64(blocks * unsafe.Sizeof(undoBlock{}))
	extra := int64(after.TotalAlloc-before.TotalAlloc) - int64(blockBytes)
	if extra > 64*blocks {
		t.Errorf("%d entries allocated %d bytes besides the blocks: %d a block; want at most 64",
			n, extra, extra/blocks)
	}
	l.end(1, false)

	// The slot indexes grow by doubling, about nine arrays from 256 to
	// 102,400 entries, where append's growth by a quarter at that length
	// makes over twenty and allocates about five times the final array.
	l.slots = nil
	l.begin(1, arr)
	arrays, last := 0, (*uint32)(nil)
	for range n {
		l.add(arr, s, 0, raw{}, false)
		if p := unsafe.SliceData(l.slots); p != last {
			arrays, last = arrays+1, p
		}
	}
	if limit := bits.Len(n/undoBlockSize) + 1; arrays > limit {
		t.Errorf("the slot indexes of %d entries took %d arrays; want at most %d", n, arrays, limit)
	}
	l.end(1, false)
}
