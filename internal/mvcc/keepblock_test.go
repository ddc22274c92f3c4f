package mvcc

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// TestKeptValuesDieWithTheirSnapshots checks that an older value that only
// snapshots read is freed once they are unreachable, by the collector
// alone: no trim, no later write. A subscriber that keeps up takes a
// snapshot at every Store; had the table kept the values it replaced
// until its next trim, each would have outlived its snapshots by a whole
// collection cycle. Only the current keep block, which the table holds,
// may keep some until then.
func TestKeptValuesDieWithTheirSnapshots(t *testing.T) {
	const stores = 1000
	var freed atomic.Int32
	tb := New[int, *payload](0)
	tb.Store(0, newPayload(0, &freed))
	for i := 1; i <= stores; i++ {
		s := tb.Snapshot()
		tb.Store(0, newPayload(uint64(i), &freed))
		if v, ok := s.Get(0); !ok || !v.intact(uint64(i-1)) {
			t.Fatalf("the snapshot before store %d reads %v, %v; want the value of %d, intact", i, v, ok, i-1)
		}
	}
	if tb.kept != stores || tb.History() != stores {
		t.Fatalf("kept %d and %d in the lists; want %d, untrimmed, for the test to mean anything", tb.kept, tb.History(), stores)
	}
	// Every value but the last was replaced, and its snapshot let go of.
	awaitFreed(t, &freed, stores, stores-keepBlockLen)
	if v, ok := tb.Load(0); !ok || !v.intact(stores) {
		t.Fatalf("Load reads %v, %v; want the value of %d, intact", v, ok, stores)
	}
}

// TestPageCopyValuesDieWithTheirSnapshots is
// TestKeptValuesDieWithTheirSnapshots for the values a Store in place
// keeps by a copy of its page: each round holds a snapshot, lets a pass
// of Stores over one page replace every value in place (the first keeps
// a record, the next a copy of the page), and lets the snapshot go. A
// copy that held its values itself would keep them until a trim unlinked
// it: a map of a hundred values with eight subscribers that lag kept
// thousands that way.
func TestPageCopyValuesDieWithTheirSnapshots(t *testing.T) {
	copyPages(t)
	const rounds = 100
	var freed atomic.Int32
	tb := New[int, *payload](0)
	id := func(round, k int) uint64 { return uint64(round*pageSize + k) }
	for k := range pageSize {
		tb.Store(k, newPayload(id(0, k), &freed))
	}
	for r := 1; r <= rounds; r++ {
		s := tb.Snapshot()
		for k := range pageSize {
			tb.Store(k, newPayload(id(r, k), &freed))
		}
		for _, k := range []int{0, pageSize - 1} {
			if v, ok := s.Get(k); !ok || !v.intact(id(r-1, k)) {
				t.Fatalf("the snapshot of round %d reads %v, %v for %d; want the value of round %d, intact", r, v, ok, k, r-1)
			}
		}
	}
	if n := tb.meta.Load().arr.copies(); n < rounds-1 {
		t.Fatalf("the table keeps %d page copies; want one a round, %d, untrimmed, for the test to mean anything", n, rounds)
	}
	// Every round's values but the last were replaced, and the
	// snapshots that read them let go of; the current keep block holds
	// the last round's copy.
	awaitFreed(t, &freed, rounds*pageSize, (rounds-1)*pageSize)
	loadsRound(t, tb, pageSize, rounds, id)
}

// TestFrozenBatchValuesDieWithTheirSnapshots is
// TestKeptValuesDieWithTheirSnapshots for the values a Batch replaced
// under a held snapshot, which the batch keeps by freezing its undo log:
// each round holds a snapshot, replaces every value in one Batch, and
// lets the snapshot go. A frozen batch that held its values itself kept
// them until a trim dropped it: a map of 10,000 Kubernetes-style values
// with a subscriber, written by batches of 1,000, held three to five
// times its values.
func TestFrozenBatchValuesDieWithTheirSnapshots(t *testing.T) {
	const keys, rounds = 256, 40
	var freed atomic.Int32
	tb := New[int, *payload](0)
	id := func(round, k int) uint64 { return uint64(round*keys + k) }
	for k := range keys {
		tb.Store(k, newPayload(id(0, k), &freed))
	}
	frozen := 0
	for r := 1; r <= rounds; r++ {
		s := tb.Snapshot()
		tb.Batch(func(b Batch[int, *payload]) {
			for k := range keys {
				b.Store(k, newPayload(id(r, k), &freed))
			}
		})
		if fp := tb.meta.Load().arr.frozen.Load(); fp != nil {
			frozen = max(frozen, len(*fp))
		}
		for _, k := range []int{0, keys - 1} {
			if v, ok := s.Get(k); !ok || !v.intact(id(r-1, k)) {
				t.Fatalf("the snapshot of round %d reads %v, %v for %d; want the value of round %d, intact", r, v, ok, k, r-1)
			}
		}
	}
	if frozen < 2 {
		t.Fatalf("at most %d frozen batches at once; want several, untrimmed, for the test to mean anything", frozen)
	}
	// Every round's values but the last were replaced, and the
	// snapshots that read them let go of.
	awaitFreed(t, &freed, rounds*keys, (rounds-1)*keys)
	loadsRound(t, tb, keys, rounds, id)
}

// awaitFreed collects garbage until freed has counted want of the made
// values a test replaced, or two seconds have passed, and fails t if it
// has not: no trim ran, so the collector alone freed them.
func awaitFreed(t *testing.T, freed *atomic.Int32, made, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for int(freed.Load()) < want && time.Now().Before(deadline) {
		collect()
	}
	if n := freed.Load(); int(n) < want {
		t.Fatalf("%d of %d replaced values were freed without a trim; want at least %d", n, made, want)
	}
}

// loadsRound checks that tb's Load reads, at each of its first keys keys,
// the value that round stored, intact; id names the value of a round and
// key.
func loadsRound(t *testing.T, tb *Table[int, *payload], keys, round int, id func(round, k int) uint64) {
	t.Helper()
	for k := range keys {
		if v, ok := tb.Load(k); !ok || !v.intact(id(round, k)) {
			t.Fatalf("Load reads %v, %v for %d; want the value of round %d, intact", v, ok, k, round)
		}
	}
}

// TestKeepBlocksOfDroppedValuesGo checks that a snapshot held for long
// keeps alive the values it reads, and not every keep block made since:
// the trims drop the values nobody reads, and relink chains the blocks
// past those left empty.
func TestKeepBlocksOfDroppedValuesGo(t *testing.T) {
	const keys, stores = 10, 50_000
	tb := New[int, *payload](0)
	for k := range keys {
		tb.Store(k, newPayload(uint64(k), nil))
	}
	old := tb.Snapshot()
	made := 0
	for i := range stores {
		s := tb.Snapshot() // as a subscriber that keeps up
		if tb.blocks.used == keepBlockLen {
			made++
		}
		tb.Store(i%keys, newPayload(uint64(keys+i), nil))
		runtime.KeepAlive(s)
	}
	// A trim drops what the snapshots let go of read, once their
	// cleanups ran; the next, after a collection, forgets the blocks
	// gone.
	deadline := time.Now().Add(2 * time.Second)
	for alive(tb) > 8 && time.Now().Before(deadline) {
		tb.Trim()
		collect()
	}
	if made < stores/keepBlockLen/2 {
		t.Fatalf("made %d keep blocks; want about %d, for the test to mean anything", made, stores/keepBlockLen)
	}
	if n := alive(tb); n > 8 {
		t.Fatalf("%d keep blocks are alive of %d made, with one snapshot held; want a few", n, made)
	}
	for k := range keys {
		if v, ok := old.Get(k); !ok || !v.intact(uint64(k)) {
			t.Fatalf("the held snapshot reads %v, %v for %d; want its value, intact", v, ok, k)
		}
	}
}

// alive is the number of keep blocks of tb that the collector has not
// found unreachable.
func alive[K comparable, V any](tb *Table[K, V]) int {
	n := 0
	for _, b := range tb.blocks.all {
		if b.Value() != nil {
			n++
		}
	}
	return n
}
