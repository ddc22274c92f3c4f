package mvcc

import (
	"fmt"
	"math"
	"runtime"
	"testing"
)

// keepRecords makes Stores keep a record of each value they replace, as
// in a version few Stores have written, until the test ends: for tests
// that count records, or watch them freed.
func keepRecords(t testing.TB) {
	was := copyAfter
	copyAfter = math.MaxInt
	t.Cleanup(func() { copyAfter = was })
}

// copyPages makes every Store in place keep what it replaces by a copy of
// its page, until the test ends.
func copyPages(t testing.TB) {
	was := copyAfter
	copyAfter = 0
	t.Cleanup(func() { copyAfter = was })
}

// TestHistoryWays runs the tests of what snapshots read with every Store
// in place copying pages, and with every Store keeping records: each
// alone, as well as mixed as the number of Stores in a version picks (the
// other tests).
func TestHistoryWays(t *testing.T) {
	for _, way := range []struct {
		name string
		set  func(testing.TB)
	}{{"pages", copyPages}, {"records", keepRecords}} {
		t.Run(way.name, func(t *testing.T) {
			way.set(t)
			t.Run("model", TestModelAgreesWithAMap)
			t.Run("generic", TestGenericModelAgreesWithAMap)
			t.Run("under a writer", TestSnapshotsHoldUnderAWriter)
			t.Run("changes", TestChangesAreTheNetChange)
			t.Run("diff under a writer", TestDiffUnderAWriter)
			t.Run("ends", TestHistoryEndsWithItsSnapshots)
			t.Run("batches", TestBatchesAreWhole)
			t.Run("seals", TestSealsUnderReaders)
		})
	}
}

func pageKey(i int) string { return fmt.Sprint("k", i) }

// TestPageCopiesKeepWhatSnapshotsRead holds a snapshot through a pass of
// Stores over every key, in place, and another through a second pass:
// each must read what it held, the writer must have kept a copy per page
// rather than a record per key, and the trims after each snapshot goes
// must cut the copies only it read.
func TestPageCopiesKeepWhatSnapshotsRead(t *testing.T) {
	copyPages(t)
	const keys = 3000
	tb := New[string, uint64](0)
	for i := range keys {
		tb.Store(pageKey(i), 1)
	}
	pages := (len(tb.meta.Load().arr.slots) + pageSize - 1) / pageSize
	first := tb.Snapshot()
	for i := range keys {
		tb.Store(pageKey(i), 2)
	}
	// The pass's first Store writes the version after the frozen one,
	// not in place, and keeps a record; the others copy pages.
	if h := tb.History(); h == 0 || h > pages+1 {
		t.Fatalf("a pass under one snapshot kept %d older values, want a record and a copy for each of at most %d pages", h, pages)
	}
	second := tb.Snapshot()
	for i := range keys {
		tb.Store(pageKey(i), 3)
	}
	read := func(s Snapshot[string, uint64], want uint64) {
		t.Helper()
		for i := range keys {
			if v, ok := s.Get(pageKey(i)); !ok || v != want {
				t.Fatalf("the snapshot of version %d reads %d, %v for %s, want %d", s.Version(), v, ok, pageKey(i), want)
			}
		}
		if n := s.Len(); n != keys {
			t.Fatalf("the snapshot of version %d has %d keys, want %d", s.Version(), n, keys)
		}
	}
	read(first, 1)
	read(second, 2)
	both := tb.History() // first is not used again: the collector may end it
	waitFor(t, func() bool { tb.Trim(); return tb.History() < both })
	if h := tb.History(); h == 0 || h > pages+1 {
		t.Fatalf("with the second snapshot alone the table keeps %d older values, want at most %d", h, pages+1)
	}
	read(second, 2) // and second not after this
	waitFor(t, func() bool { tb.Trim(); return tb.History() == 0 })
	if tb.meta.Load().arr.pages.Load() != nil {
		t.Fatal("with no snapshot held the table keeps its page heads")
	}
}

// TestRecordsAndCopiesInOneVersion keeps records for the first Stores of
// a version and copies pages for the rest, to keys of the same pages: a
// copy then holds slots already written in the version, and a snapshot of
// the version before must read those from their records, and the others
// from the copies.
func TestRecordsAndCopiesInOneVersion(t *testing.T) {
	const keys = 500
	tb := New[string, uint64](0)
	for i := range keys {
		tb.Store(pageKey(i), 1)
	}
	held := tb.Snapshot()
	was := copyAfter
	copyAfter = math.MaxInt
	for i := 0; i < keys; i += 2 {
		tb.Store(pageKey(i), 2) // records
	}
	records := tb.History()
	copyAfter = 0
	for i := 1; i < keys; i += 2 {
		tb.Store(pageKey(i), 2) // copies, of pages holding the even keys' new values
	}
	copyAfter = was
	if tb.History() == records {
		t.Fatal("the second half of the pass copied no page")
	}
	for i := range keys {
		if v, _ := held.Get(pageKey(i)); v != 1 {
			t.Fatalf("the held snapshot reads %d for %s, want 1", v, pageKey(i))
		}
		if v, _ := tb.Load(pageKey(i)); v != 2 {
			t.Fatalf("Load reads %d for %s, want 2", v, pageKey(i))
		}
	}
	// A key stored after the copies, and a key deleted: the held
	// snapshot has the first's absence and the second's value.
	tb.Store("new", 7)
	tb.Delete(pageKey(3))
	if _, ok := held.Get("new"); ok {
		t.Fatal("the held snapshot reads a key stored after it")
	}
	if v, ok := held.Get(pageKey(3)); !ok || v != 1 {
		t.Fatalf("the held snapshot reads %d, %v for a key deleted after it, want 1", v, ok)
	}
	runtime.KeepAlive(held)
}

// TestCopiedValuesAreFreed holds a snapshot of pointer values through a
// pass that copies pages, lets it go, and trims: the values only the
// copies held must be freed.
func TestCopiedValuesAreFreed(t *testing.T) {
	copyPages(t)
	const keys = 300
	tb := New[string, *[4]int](0) // not the tiny allocator's: a cleanup each
	freed := make(chan struct{}, keys)
	for i := range keys {
		v := new([4]int)
		runtime.AddCleanup(v, func(ch chan struct{}) { ch <- struct{}{} }, freed)
		tb.Store(pageKey(i), v)
	}
	held := tb.Snapshot()
	for i := range keys {
		tb.Store(pageKey(i), new([4]int))
	}
	if tb.meta.Load().arr.copies() == 0 {
		t.Fatal("the pass copied no page")
	}
	if v, _ := held.Get(pageKey(0)); v == nil {
		t.Fatal("the held snapshot lost a value")
	}
	n := 0 // held is not used again
	waitFor(t, func() bool {
		tb.Trim()
		for {
			select {
			case <-freed:
				n++
				continue
			default:
			}
			return n == keys
		}
	})
}

// TestPagesCopiedAfterAFewRecords checks the writer's choice: through a
// pass under one held snapshot, each page keeps at most copyAfter records
// before one copy keeps the rest; in versions that write copyAfter keys
// of a page in place, under snapshots of each, the page is not copied,
// and in one that writes one key more, it is, once. (The first Store
// after a snapshot writes the version after the frozen one, not in
// place.)
func TestPagesCopiedAfterAFewRecords(t *testing.T) {
	const keys = 3000
	tb := New[string, uint64](0)
	for i := range keys {
		tb.Store(pageKey(i), 1)
	}
	arr := tb.meta.Load().arr
	pages := (len(arr.slots) + pageSize - 1) / pageSize
	held := tb.Snapshot()
	for i := range keys {
		tb.Store(pageKey(i), 2)
	}
	records, copies := arr.count(), arr.copies()
	if copies == 0 || copies > pages || records > pages*copyAfter+1 {
		t.Fatalf("a pass under one snapshot kept %d records and %d copies over %d pages, want at most %d records a page and a copy", records, copies, pages, copyAfter)
	}
	for i := range keys {
		if v, _ := held.Get(pageKey(i)); v != 1 {
			t.Fatalf("the held snapshot reads %d for %s, want 1", v, pageKey(i))
		}
	}
	byPage := map[int][]string{}
	for i := range keys {
		s, _, _ := tb.find(arr.slots, pageKey(i))
		p := s.index(arr.slots) / pageSize
		byPage[p] = append(byPage[p], pageKey(i))
	}
	var page []string // a page with keys to spare
	for _, ks := range byPage {
		if len(ks) >= copyAfter+2 {
			page = ks
			break
		}
	}
	if page == nil {
		t.Fatalf("no page of %d holds %d keys", pages, copyAfter+2)
	}
	var all []Snapshot[string, uint64]
	for round := range 3 {
		all = append(all, tb.Snapshot())
		for _, k := range page[:copyAfter+1] {
			tb.Store(k, uint64(3+round))
		}
	}
	if n := arr.copies(); n != copies {
		t.Fatalf("versions that each wrote %d keys of a page made %d copies, want none", copyAfter, n-copies)
	}
	all = append(all, tb.Snapshot())
	for _, k := range page[:copyAfter+2] {
		tb.Store(k, 9)
	}
	if n := arr.copies(); n != copies+1 {
		t.Fatalf("a version that wrote %d keys of a page made %d copies, want one", copyAfter+1, n-copies)
	}
	for i := range keys {
		if v, _ := all[0].Get(pageKey(i)); v != 2 {
			t.Fatalf("the snapshot before those versions reads %d for %s, want 2", v, pageKey(i))
		}
	}
	runtime.KeepAlive(held)
	runtime.KeepAlive(all)
}

// pageMates returns a key of tb, among its first n, and mates keys that
// share its slot page, for tests whose Stores to other keys must copy the
// key's page. With n keys over the pages of a table tb made for them, some
// page holds a good share of them.
func pageMates(t *testing.T, tb *Table[int, *payload], n, mates int) (int, []int) {
	t.Helper()
	arr := tb.meta.Load().arr
	byPage := map[int][]int{}
	for k := range n {
		sl, _, _ := tb.find(arr.slots, k)
		p := sl.index(arr.slots) / pageSize
		if byPage[p] = append(byPage[p], k); len(byPage[p]) > mates {
			return byPage[p][0], byPage[p][1:]
		}
	}
	t.Fatalf("no page holds %d of the %d keys", mates+1, n)
	return 0, nil
}

// TestHeldReadsTheCopyATrimKeeps makes a trim unlink a page copy, and let
// go of its values, while a held snapshot is about to read a key from
// the page's copies. Two copies hold the value the snapshot reads: the
// one made as of its version, which the trim keeps, and a newer one,
// made as of a version no snapshot holds any more, in which the key was
// not written since. The reader must read the first: the newer one's value
// is gone once the trim lets go of it.
func TestHeldReadsTheCopyATrimKeeps(t *testing.T) {
	copyPages(t)
	tb := New[int, *payload](0)
	const keys = 64
	for k := range keys {
		tb.Store(k, newPayload(uint64(k), nil))
	}
	key, others := pageMates(t, tb, keys, 2)
	// copyAt copies key's page as of the version of a new snapshot,
	// by a Store in place to another key of the page, and returns the
	// snapshot.
	copyAt := func(other int) Snapshot[int, *payload] {
		s := tb.Snapshot()
		tb.Store(others[1-other], newPayload(uint64(others[1-other]), nil)) // starts the next version
		tb.Store(others[other], newPayload(uint64(others[other]), nil))     // in place: copies the page
		return s
	}
	held := copyAt(0)
	later := copyAt(1)
	tb.Store(key, newPayload(1000, nil)) // in the version of the second copy: nothing more kept
	if n := tb.meta.Load().arr.copies(); n != 2 {
		t.Fatalf("the table keeps %d page copies; want 2, for the test to mean anything", n)
	}
	runtime.KeepAlive(later) // from here no snapshot reads the second copy

	trimmed := false
	inRead = func(step int) {
		if step != 4 {
			return
		}
		inRead = nil
		collect() // later is gone
		tb.Trim()
		trimmed = true
	}
	t.Cleanup(func() { inRead = nil })
	v, ok := held.Get(key)
	if !trimmed {
		t.Fatal("the held snapshot read its key without reading a page copy; want it to, for the test to mean anything")
	}
	if n := tb.meta.Load().arr.copies(); n != 1 {
		t.Errorf("the trim left %d page copies; want 1, the held snapshot's", n)
	}
	if !ok || !v.intact(uint64(key)) {
		t.Fatalf("the held snapshot reads %v, %v at key %d across the trim; want its value, intact", v, ok, key)
	}
}
