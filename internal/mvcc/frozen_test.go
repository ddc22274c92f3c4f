package mvcc

import (
	"fmt"
	"runtime"
	"testing"
)

// TestFrozenBatchesServeOlderSnapshots holds a snapshot, then has two
// batches overwrite every key, and Stores and Deletes replace half of the
// keys again. The snapshot reads its values throughout: those the batches
// replaced from their frozen logs, and, for the keys written since, from
// what each Store thawed of both logs into the slot's list. A snapshot
// taken between the batches reads its own. Each log goes once no snapshot
// older than its batch is held, though a later one is.
func TestFrozenBatchesServeOlderSnapshots(t *testing.T) {
	const keys = 100
	tb, first := filledAndHeld(keys, 1)
	overwrite := func(v uint64) {
		tb.Batch(func(b Batch[int, uint64]) {
			for i := range keys {
				b.Store(i, v)
			}
		})
	}
	frozen := func() int {
		if fp := tb.meta.Load().arr.frozen.Load(); fp != nil {
			return len(*fp)
		}
		return 0
	}
	overwrite(2)
	if n := frozen(); n != 1 {
		t.Fatalf("after a batch under a held snapshot the table has %d frozen logs; want 1", n)
	}
	checkKept(t, "after the first batch", tb, keys, first, keys, 1)
	between := tb.Snapshot()
	overwrite(3)
	if n := frozen(); n != 2 {
		t.Fatalf("after two batches the table has %d frozen logs; want 2", n)
	}
	for i := range keys / 2 {
		if i%5 == 0 {
			tb.Delete(i)
		} else {
			tb.Store(i, 4)
		}
	}
	for i := range keys {
		if got, ok := first.Get(i); got != 1 || !ok {
			t.Fatalf("the snapshot from before both batches reads %d, %v at %d; want 1, true", got, ok, i)
		}
		if got, ok := between.Get(i); got != 2 || !ok {
			t.Fatalf("the snapshot from between the batches reads %d, %v at %d; want 2, true", got, ok, i)
		}
	}

	runtime.KeepAlive(first) // and no longer: the collector may end it
	waitFor(t, func() bool { tb.Trim(); return frozen() == 1 })
	for i := range keys {
		if got, ok := between.Get(i); got != 2 || !ok {
			t.Fatalf("once the first log went, the snapshot from between the batches reads %d, %v at %d; want 2, true", got, ok, i)
		}
	}
	runtime.KeepAlive(between)
	waitFor(t, func() bool { tb.Trim(); return frozen() == 0 })
}

// TestSettlingFrozenBatchesWithNoneSpent checks that settling a list of
// frozen batches none of which is to be dropped leaves the list as it is
// and allocates nothing, as every batch that ends under a held snapshot
// settles it.
func TestSettlingFrozenBatchesWithNoneSpent(t *testing.T) {
	const keys = 100
	tb, first := filledAndHeld(keys, 1)
	held := []Snapshot[int, uint64]{first}
	for v := uint64(2); v <= 4; v++ {
		tb.Batch(func(b Batch[int, uint64]) {
			for i := range keys {
				b.Store(i, v)
			}
		})
		held = append(held, tb.Snapshot()) // reads what the next batch replaces
	}
	arr := tb.meta.Load().arr
	fp := arr.frozen.Load()
	if fp == nil || len(*fp) != 3 {
		t.Fatalf("three batches, each under a snapshot held from before it, left frozen logs %v; want 3", fp)
	}
	if n := testing.AllocsPerRun(10, func() { tb.settleFrozen(arr) }); n != 0 {
		t.Errorf("settling frozen batches with none to drop allocated %v times; want 0", n)
	}
	if arr.frozen.Load() != fp {
		t.Error("settling frozen batches with none to drop replaced the list")
	}
	for j, s := range held {
		for i := range keys {
			if got, ok := s.Get(i); got != uint64(j+1) || !ok {
				t.Fatalf("snapshot %d reads %d, %v at %d; want %d, true", j, got, ok, i, j+1)
			}
		}
	}
}

// TestBatchWithoutHeldSnapshotsFreezesNothing checks that a batch that no
// snapshot is held across leaves no frozen log, and keeps its undo log's
// blocks for the next batch.
func TestBatchWithoutHeldSnapshotsFreezesNothing(t *testing.T) {
	tb := New[int, uint64](0)
	for i := range 100 {
		tb.Store(i, 1)
	}
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range 100 {
			b.Store(i, 2)
		}
	})
	if fp := tb.meta.Load().arr.frozen.Load(); fp != nil {
		t.Errorf("a batch with no snapshot held froze %d logs", len(*fp))
	}
	if tb.undo.room() < 100 {
		t.Errorf("the undo log kept room for %d entries after a batch of 100; want them kept for the next", tb.undo.room())
	}
}

// TestFrozenBatchesStayFewUnderAHeldSnapshot holds one snapshot while
// batches overwrite the keys again and again, all of them and then
// overlapping halves, with Stores between: the snapshot reads its values
// throughout, the table keeps exactly those, and the frozen batches alive
// hold at most freezeShare entries for each, rather than one batch's log
// for every batch made.
func TestFrozenBatchesStayFewUnderAHeldSnapshot(t *testing.T) {
	keepRecords(t) // it counts older values, which a page copy would count as one
	const keys = 100
	tb, held := filledAndHeld(keys, 1)
	arr := tb.meta.Load().arr
	check := func(when string) {
		t.Helper()
		tb.Trim() // drops what a Store kept that nobody reads
		checkKept(t, when, tb, keys, held, keys, 1)
		entries := 0
		if fp := arr.frozen.Load(); fp != nil {
			for _, f := range *fp {
				entries += len(f.olds)
			}
		}
		if live := arr.frozenCount(); entries > freezeShare*live {
			t.Fatalf("%s the frozen batches hold %d entries for %d values read; want at most %d each", when, entries, live, freezeShare)
		}
	}
	g := uint64(1)
	for round := range 20 {
		g++
		tb.Batch(func(b Batch[int, uint64]) {
			for i := range keys {
				b.Store(i, g)
			}
		})
		check(fmt.Sprintf("after batch %d over every key", round))
	}
	for round := range 20 {
		g++
		from := round * keys / 4
		tb.Batch(func(b Batch[int, uint64]) {
			for i := range keys / 2 {
				b.Store((from+i)%keys, g)
			}
		})
		check(fmt.Sprintf("after batch %d over half the keys", round))
		if round%3 == 0 {
			tb.Store((from+7)%keys, g)
			check(fmt.Sprintf("after a Store following batch %d", round))
		}
	}
	// A batch that a second snapshot reads a few values of keeps those in
	// records, after what the frozen batches hold of their keys.
	g++
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, g)
		}
	})
	check("after a batch over every key")
	mid, at := tb.Snapshot(), g
	for i := range keys - 10 {
		tb.Store(i, g+1)
	}
	g += 2
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, g)
		}
	})
	tb.Trim()
	for i := keys - 10; i < keys; i++ {
		if got, ok := mid.Get(i); got != at || !ok {
			t.Fatalf("the second snapshot reads %d, %v at %d; want %d, true", got, ok, i, at)
		}
	}
	runtime.KeepAlive(mid)
	waitFor(t, func() bool { tb.Trim(); return tb.History() == keys })
	check("after a batch the second snapshot read a tenth of")
	if arr != tb.meta.Load().arr {
		t.Fatal("the table grew: the test reads the first array's frozen batches")
	}
}
