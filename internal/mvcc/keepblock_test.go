package mvcc

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"weak"
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

// TestReadsBringBackNoBlock checks that a held snapshot, read over and
// over while the collector marks, does not keep alive the keep block of a
// page copy older than every snapshot held: a read that finds its value
// in a newer record must not reach the copy's block, for a weak pointer
// made strong during marking keeps its block, and every block chained
// after it, through the cycle. Here that block alone holds the first
// value of a key, which must go in the cycle that finds the snapshot that
// read it unreachable. Reads that reached the block kept it for 1 to 21
// cycles (3 of 20 runs freed it in one), so each of a few rounds must
// free it in at most two.
func TestReadsBringBackNoBlock(t *testing.T) {
	copyPages(t)
	// A heap to mark, so that marking lasts while the reader reads.
	ballast := make([]*payload, 1<<18)
	for i := range ballast {
		ballast[i] = &payload{id: uint64(i)}
	}
	for round := range 3 {
		if cycles := cyclesToFreeUnread(t); cycles > 2 {
			t.Fatalf("round %d: the first value of a key outlived the snapshot that read it by %d collection cycles while another snapshot was read; want it freed in the first", round, cycles)
		}
	}
	runtime.KeepAlive(ballast)
}

// cyclesToFreeUnread makes a table of pointers whose first value of a key
// only a page copy keeps, drops the snapshot that read it, and counts the
// collection cycles until that value is freed (at most 50), while a
// goroutine reads, in a snapshot still held, a key of the same page whose
// value a record newer than the copy holds.
func cyclesToFreeUnread(t *testing.T) int {
	t.Helper()
	copyAfter = 0
	tb := New[int, *payload](0)
	const keys = 64
	for k := range keys {
		tb.Store(k, newPayload(uint64(k), nil))
	}
	// A key and another in the same page; a third key anywhere.
	arr := tb.meta.Load().arr
	key, others := pageMates(t, tb, keys, 1)
	other := others[0]
	third := (other + 1) % keys
	if third == key {
		third = (third + 1) % keys
	}
	p, _ := tb.Load(key)
	gone := weak.Make(p)
	p = nil
	first := tb.Snapshot()
	tb.Store(third, newPayload(uint64(third), nil)) // starts the next version
	tb.Store(key, newPayload(1000, nil))            // in place: copies the page, as of first
	if n := arr.copies(); n != 1 {
		t.Fatalf("the table keeps %d page copies; want 1, for the test to mean anything", n)
	}
	copyAfter = math.MaxInt // records from here on
	tb.Store(other, newPayload(1001, nil))
	held := tb.Snapshot()
	tb.Store(other, newPayload(1002, nil)) // keeps 1001 in a record, newer than the copy
	if tb.meta.Load().arr != arr {
		t.Fatal("the table made a new array; want the one whose page was copied")
	}
	if v, ok := first.Get(key); !ok || !v.intact(uint64(key)) {
		t.Fatalf("the first snapshot reads %v, %v at key %d; want its value, intact", v, ok, key)
	}
	runtime.KeepAlive(first) // from here only the page copy lists the key's first value

	var reads atomic.Int64
	var failed atomic.Bool
	cycles := 0
	whileWriting(1, func(int) {
		for range 100 {
			if v, ok := held.Get(other); (!ok || !v.intact(1001)) && !failed.Swap(true) {
				t.Errorf("the held snapshot reads %v, %v at key %d; want the value of 1001, intact", v, ok, other)
				return
			}
		}
		reads.Add(100)
		runtime.Gosched() // for one P
	}, func() {
		for reads.Load() == 0 {
			runtime.Gosched()
		}
		for gone.Value() != nil && cycles < 50 {
			runtime.GC() // returns once swept: the weak pointer of what it freed is nil
			cycles++
		}
	})
	if t.Failed() {
		t.FailNow()
	}
	runtime.KeepAlive(held)
	return cycles
}

// TestNilValuesKeepTheirBlocks checks that a keep block whose values are
// all nil, as a page copy's of keys that hold nil, stays chained for the
// snapshots that read it: relink skips only blocks nobody lists a value
// of, and a nil value is listed as any other.
func TestNilValuesKeepTheirBlocks(t *testing.T) {
	copyPages(t)
	tb := New[int, *payload](0)
	tb.Store(0, nil)
	tb.Store(1, nil)
	held := tb.Snapshot()
	tb.Store(1, nil) // starts the next version
	tb.Store(0, nil) // in place: copies the page, nil values alone, for held
	if n := tb.meta.Load().arr.copies(); n != 1 {
		t.Fatalf("the table keeps %d page copies; want 1, for the test to mean anything", n)
	}
	later := tb.Snapshot() // holds the copy's block, for a while
	tb.Store(1, nil)
	tb.Store(1, nil)
	runtime.KeepAlive(later)
	for range 2 { // the first finds later gone, the second relinks
		tb.Trim()
		collect()
	}
	for k := range 2 {
		if v, ok := held.Get(k); !ok || v != nil {
			t.Fatalf("the held snapshot reads %v, %v at key %d; want nil, true", v, ok, k)
		}
	}
}

// TestHeldPointersHoldUnderAWriter is TestBoxedValuesWholeUnderAWriter for
// values that keep blocks hold: pointers, nil among them, with deletes and
// batches, and collections the writer starts, each way of keeping older
// values alone and mixed. Readers take snapshots, hold a few of them over
// many passes, and read each held one again every pass: each key must
// give the same pointer or absence every time, and the payload intact.
func TestHeldPointersHoldUnderAWriter(t *testing.T) {
	for _, way := range []struct {
		name string
		set  func(testing.TB)
	}{
		{"records", keepRecords},
		{"pages", copyPages},
		{"mixed", func(testing.TB) {}},
	} {
		t.Run(way.name, func(t *testing.T) {
			way.set(t)
			heldPointersUnderAWriter(t)
		})
	}
}

func heldPointersUnderAWriter(t *testing.T) {
	const keys, ops, hold = 64, 30000, 3
	tb := New[int, *payload](0)
	var failures atomic.Int32
	fail := func(format string, args ...any) {
		if failures.Add(1) < 5 {
			t.Errorf(format, args...)
		}
	}
	type read struct {
		p  *payload
		ok bool
	}
	type heldSnap struct {
		s     Snapshot[int, *payload]
		reads []read
	}
	readAll := func(s Snapshot[int, *payload]) []read {
		reads := make([]read, keys)
		for k := range keys {
			p, ok := s.Get(k)
			if ok && p != nil && !p.intact(p.id) {
				fail("snapshot %d reads a payload at key %d that is not whole", s.Version(), k)
			}
			reads[k] = read{p, ok}
		}
		return reads
	}
	helds := make([][]heldSnap, 2)
	passes := make([]int, 2)
	whileWriting(2, func(r int) {
		s := tb.Snapshot()
		reads := readAll(s)
		if passes[r]++; passes[r]%20 == 1 {
			if len(helds[r]) == hold {
				helds[r] = helds[r][1:]
			}
			helds[r] = append(helds[r], heldSnap{s, reads})
		}
		for _, h := range helds[r] {
			for k, now := range readAll(h.s) {
				if was := h.reads[k]; now != was {
					fail("snapshot %d read %p, %v at key %d, then %p, %v", h.s.Version(), was.p, was.ok, k, now.p, now.ok)
				}
			}
		}
	}, func() {
		rng := rand.New(rand.NewPCG(3, 4))
		deadline := time.Now().Add(500 * time.Millisecond)
		id := uint64(0)
		op := func(store func(int, *payload), del func(int) bool) {
			k := rng.IntN(keys)
			switch n := rng.IntN(10); {
			case n == 0:
				del(k)
			case n == 1:
				store(k, nil)
			default:
				id++
				store(k, newPayload(id, nil))
			}
		}
		for i := 0; i < ops && time.Now().Before(deadline); i++ {
			switch {
			case i%1000 == 999:
				runtime.GC()
			case i%20 == 0:
				tb.Batch(func(b Batch[int, *payload]) {
					for range 5 {
						op(b.Store, b.Delete)
					}
				})
			default:
				op(tb.Store, tb.Delete)
			}
		}
	})
}
