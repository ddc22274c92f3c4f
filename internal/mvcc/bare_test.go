package mvcc

import (
	"runtime"
	"testing"
)

// TestStoresKeepNothingWithoutOlderSnapshots fills a table by a Batch, so
// that every slot holds a value of an older version than the current one,
// and overwrites every key: with no snapshot held, nothing is kept. A
// snapshot taken then makes the next pass keep what it reads, and it reads
// it. Once the collector has ended that snapshot, passes keep nothing
// again.
func TestStoresKeepNothingWithoutOlderSnapshots(t *testing.T) {
	const keys = 500 // fewer than a trim waits for (trimAt): the count is what was kept
	keepRecords(t)   // one a key, rather than copies of pages
	tb := New[int, uint64](0)
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, 1)
		}
	})
	pass := func(v uint64) {
		for i := range keys {
			tb.Store(i, v)
		}
	}
	pass(2)
	if n := tb.History(); n != 0 {
		t.Fatalf("overwriting a batch's keys with no snapshot held kept %d older values; want 0", n)
	}

	s := tb.Snapshot()
	pass(3)
	if n := tb.History(); n != keys {
		t.Fatalf("overwriting every key under a held snapshot kept %d older values; want %d", n, keys)
	}
	for i := range keys {
		if got, ok := s.Get(i); got != 2 || !ok {
			t.Fatalf("the held snapshot reads %d, %v at %d; want 2, true", got, ok, i)
		}
	}
	if got, _ := tb.Load(0); got != 3 {
		t.Fatalf("Load reads %d; want 3", got)
	}
	runtime.KeepAlive(s) // and no longer: the collector may end it
	waitFor(t, func() bool { tb.Trim(); return tb.History() == 0 })

	// The writer saw a snapshot held at its last look; now that it is
	// gone, Stores keep nothing again, after a Batch as before it.
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, 1)
		}
	})
	pass(4)
	if n := tb.History(); n != 0 {
		t.Fatalf("overwriting every key once the snapshot went kept %d older values; want 0", n)
	}
	for i := range keys {
		if got, ok := tb.Load(i); got != 4 || !ok {
			t.Fatalf("Load reads %d, %v at %d; want 4, true", got, ok, i)
		}
	}
}

// TestSnapshotTakenInABareVersionIsKeptFor takes snapshots, one version
// after another, while the writer overwrites keys it filled by a Batch:
// each Store after a snapshot writes a new version and keeps, even where
// the version before was one in which nothing was kept.
func TestSnapshotTakenInABareVersionIsKeptFor(t *testing.T) {
	const keys = 64
	tb := New[int, uint64](0)
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, 0)
		}
	})
	var held []Snapshot[int, uint64]
	for round := uint64(1); round <= 4; round++ {
		for i := range keys / 2 { // the first half: bare, or kept for the snapshot before
			tb.Store(i, round)
		}
		held = append(held, tb.Snapshot())
		for i := keys / 2; i < keys; i++ {
			tb.Store(i, round)
		}
	}
	for r, s := range held {
		round := uint64(r + 1)
		for i := range keys {
			want := round
			if i >= keys/2 {
				want = round - 1
			}
			if got, ok := s.Get(i); got != want || !ok {
				t.Fatalf("the snapshot of round %d reads %d, %v at %d; want %d, true", round, got, ok, i, want)
			}
		}
	}
}
