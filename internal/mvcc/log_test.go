package mvcc

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
)

// TestLogGivesEachSnapshotItsStores reads the change log up to each
// snapshot and checks that it gives exactly the Stores the snapshot holds
// since the last read, in order, across several of the log's blocks, and
// none of a later version: after each snapshot one more Store is made,
// into the next version, before the log is read.
func TestLogGivesEachSnapshotItsStores(t *testing.T) {
	tb := New[string, uint64](50)
	cur := tb.Cursor()
	defer cur.Close()
	var made []string // every Store's key, in order
	store := func(i int) {
		k := fmt.Sprint("k", i%50)
		tb.Store(k, uint64(i+1))
		made = append(made, k)
	}
	read := 0
	for i := 0; i < 3*chunkSize; i++ {
		store(i)
		if i%7 != 0 {
			continue // several Stores to one version, sometimes
		}
		s := tb.Snapshot()
		i++
		store(i) // into the next version: not the snapshot's
		cur.read(s.Version(), func(e Entry[string]) {
			if read >= len(made)-1 || e.Key != made[read] {
				t.Fatalf("entry %d read is %s; want %v, and no more than %d entries", read, e.Key, made[min(read, len(made)-1)], len(made)-1)
			}
			read++
		})
		if read != len(made)-1 {
			t.Fatalf("the snapshot after %d Stores holds %d of them; the log gave %d up to it", len(made), len(made)-1, read)
		}
	}
}

// TestLogRecordsInsideTheChange looks at the log from inside Stores, as a
// reader on another goroutine could: a Store changing the current version
// in place has its entry in the log before the change ends (a snapshot of
// the version waits for that end), and one writing the next version has
// it there before the version is published, with that version.
func TestLogRecordsInsideTheChange(t *testing.T) {
	tb := New[string, uint64](4)
	tb.Store("a", 1)
	var cur *Cursor[string, uint64]
	lastRead := func(upTo uint64) (last Entry[string], n int) {
		n, _ = cur.read(upTo, func(e Entry[string]) { last = e })
		return last, n
	}
	looked := 0
	inChange = func() {
		looked++
		if e, n := lastRead(tb.Version()); n != 1 || e.Key != "b" || e.Ver != tb.Version() {
			t.Errorf("inside the change in place the log gave %d entries, the last %v; want the Store of b at version %d", n, e, tb.Version())
		}
	}
	beforePublish = func() {
		looked++
		if _, n := lastRead(tb.Version()); n != 0 {
			t.Errorf("before the next version is published the log gave %d entries up to the current one, want 0", n)
		}
		if e, n := lastRead(tb.Version() + 1); n != 1 || e.Key != "c" || e.Ver != tb.Version()+1 {
			t.Errorf("before the next version is published the log gave %d entries up to it, the last %v; want the Store of c at version %d", n, e, tb.Version()+1)
		}
	}
	defer func() { inChange, beforePublish = nil, nil }()
	cur = tb.Cursor()
	defer cur.Close()
	tb.Store("b", 2) // the version is open: in place
	tb.Snapshot()
	tb.Store("c", 3) // the version is frozen: the next one
	if looked != 2 {
		t.Errorf("the hooks ran %d times, want 2", looked)
	}
}

func TestCursorClosedOnce(t *testing.T) {
	tb := New[string, uint64](1)
	cur := tb.Cursor()
	cur.Close()
	for name, f := range map[string]func(){
		"a second Close": cur.Close,
		"a read":         func() { cur.read(1, func(Entry[string]) {}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s of a closed Cursor did not panic", name)
				}
			}()
			f()
		}()
	}
	if n := tb.log.readers.Load(); n != 0 {
		t.Errorf("%d readers counted after the only cursor closed, want 0", n)
	}
}

// TestLogKeepsUpWithSnapshots reads the log on another goroutine while the
// writer stores: each read up to a snapshot gives the Stores in order with
// none missing, and brings the reader exactly to what the snapshot holds.
func TestLogKeepsUpWithSnapshots(t *testing.T) {
	const keys, stores = 64, 20000
	tb := New[string, uint64](keys)
	key := func(i uint64) string { return fmt.Sprint("k", i%keys) }
	tb.log.limit = stores / chunkSize // keep every entry: this test reads them all
	cur := tb.Cursor()
	defer cur.Close()
	var last uint64 // Store n stores n+1 at key n%keys: the number of entries read
	fails := 0
	whileWriting(1, func(int) {
		s := tb.Snapshot()
		cur.read(s.Version(), func(e Entry[string]) {
			if e.Key != key(last) && fails < 5 {
				fails++
				t.Errorf("the log gave %s after %d entries, want %s", e.Key, last, key(last))
			}
			last++
		})
		if last == 0 {
			return
		}
		if v, _ := s.Get(key(last - 1)); v != last && fails < 5 {
			fails++
			t.Errorf("the log's last entry up to snapshot %d is %d, the snapshot holds %d at its key", s.Version(), last, v)
		}
		// The next Store's key: the snapshot must not hold it if the log
		// has not given it.
		if v, _ := s.Get(key(last)); v > last && fails < 5 {
			fails++
			t.Errorf("snapshot %d holds Store %d, which the log did not give up to it", s.Version(), v)
		}
	}, func() {
		for n := range uint64(stores) {
			tb.Store(key(n), n+1)
		}
	})
}

// TestNoCursorNoLog checks that Stores record nothing while no cursor is
// open, and that a cursor reads only what was stored after it opened.
func TestNoCursorNoLog(t *testing.T) {
	tb := New[string, uint64](4)
	tb.Store("a", 1)
	if n := tb.log.tail.Load().n.Load(); n != 0 {
		t.Errorf("with no cursor the log holds %d entries, want 0", n)
	}
	cur := tb.Cursor()
	tb.Store("b", 2)
	var got []string
	cur.read(tb.Snapshot().Version(), func(e Entry[string]) { got = append(got, e.Key) })
	cur.Close()
	tb.Store("c", 3)
	if fmt.Sprint(got) != "[b]" {
		t.Errorf("the cursor read %v, want [b]", got)
	}
	if n := tb.log.tail.Load().n.Load(); n != 1 {
		t.Errorf("after the cursor closed the log holds %d entries, want 1", n)
	}
}

// mirror is what a subscriber keeps: the table as it read it, by applying
// the changes Cursor.Changes gave it between its snapshots (mirrorOf, in
// types_test.go, for these tests' keys and values).
type mirror = mirrorOf[string, uint64]

// newMirror is a subscriber of tb that has read nothing yet.
func newMirror(tb *Table[string, uint64]) *mirror {
	return &mirror{m: map[string]uint64{}, cur: tb.Cursor(), same: func(a, b uint64) bool { return a == b }}
}

// catchUp takes a snapshot and applies the changes since the last one
// (see mirrorOf.catchUpTo).
func (m *mirrorOf[K, V]) catchUp(tb *Table[K, V]) string { return m.catchUpTo(tb.Snapshot()) }

// TestChangesAreTheNetChange runs random Stores and Deletes, from a table
// that grows, with a subscriber that catches up at random intervals, and
// checks that the changes it is given between two snapshots are each key
// whose value differs, once: applied to what it had, they give the
// snapshot. With a log of one block, a subscriber that lags finds its
// entries dropped and is given the changes from the table instead.
func TestChangesAreTheNetChange(t *testing.T) {
	for _, limit := range []int{0, 4} {
		for _, slide := range []bool{false, true} {
			for seed := range uint64(10) {
				t.Run(fmt.Sprint("limit=", limit, "/slide=", slide, "/seed=", seed), func(t *testing.T) {
					netChanges(t, seed, limit, slide)
				})
			}
		}
	}
}

// netChanges is one run of TestChangesAreTheNetChange: random Stores,
// Deletes and batches over 60 keys, which with slide move on by one every
// three steps, so that the table keeps growing and dropping the deleted.
func netChanges(t *testing.T, seed uint64, limit int, slide bool) {
	r := rand.New(rand.NewPCG(seed, 3))
	const keys = 60
	tb := New[string, uint64](0)
	tb.log.limit = limit
	sub := newMirror(tb)
	defer sub.cur.Close()
	key := func(step int) string {
		if slide {
			return fmt.Sprint("k", step/3+r.IntN(keys))
		}
		return fmt.Sprint("k", r.IntN(keys))
	}
	next := 0
	for step := range 5000 {
		k := key(step)
		switch op := r.IntN(20); {
		case op < 5:
			tb.Delete(k)
		case op == 5:
			tb.Batch(func(b Batch[string, uint64]) {
				for range 1 + r.IntN(6) {
					if r.IntN(3) == 0 {
						b.Delete(key(step))
					} else {
						b.Store(key(step), uint64(r.IntN(3)))
					}
				}
			})
		default:
			tb.Store(k, uint64(r.IntN(3))) // often the same value again
		}
		if r.IntN(5) == 0 {
			tb.Snapshot() // others' snapshots: the next Store makes a version
		}
		if step == next {
			if p := sub.catchUp(tb); p != "" {
				t.Fatalf("step %d: %s", step, p)
			}
			next += 1 + r.IntN(600)
		}
	}
}

// TestChangesAfterManyDeletesAndGrowth deletes more than a thousand keys,
// grows the table (which drops them from its new array) and stores on
// until the cursor's block of the log is dropped: the subscriber, reading
// the deletes from the log and then comparing its snapshots, must be told
// of each key once.
func TestChangesAfterManyDeletesAndGrowth(t *testing.T) {
	tb := New[string, uint64](0)
	tb.log.limit = 0
	key := func(i int) string { return fmt.Sprint("k", i) }
	for i := range 2000 {
		tb.Store(key(i), 1)
	}
	sub := newMirror(tb)
	defer sub.cur.Close()
	if p := sub.catchUp(tb); p != "" {
		t.Fatal(p)
	}
	arr := tb.meta.Load().arr
	for i := range 1500 {
		tb.Delete(key(i))
	}
	for i := 2000; tb.meta.Load().arr == arr; i++ {
		tb.Store(key(i), 2)
	}
	for i := range 3 * chunkSize {
		tb.Store(key(1500+i%500), 3)
	}
	s := tb.Snapshot()
	tb.Store(key(1999), 4) // after the snapshot it catches up to
	if p := sub.catchUpTo(s); p != "" {
		t.Fatal(p)
	}
	// It compared its snapshots: its next call reads the log from the
	// snapshot's version, not the one current when it compared.
	if sub.cur.since != sub.prev.ver {
		t.Errorf("after comparing its snapshots the cursor's log begins after version %d, want %d", sub.cur.since, sub.prev.ver)
	}
}

// TestChangesUnderAWriter catches a subscriber up on another goroutine
// while the writer stores and deletes, grows the table and drops blocks of
// the log: each time, the changes applied to what it had must give the
// snapshot.
func TestChangesUnderAWriter(t *testing.T) {
	const keys, stores = 200, 30000
	tb := New[string, uint64](0)
	tb.log.limit = 0
	sub := newMirror(tb)
	defer sub.cur.Close()
	var failures atomic.Int32
	whileWriting(1, func(int) {
		if p := sub.catchUp(tb); p != "" && failures.Add(1) < 5 {
			t.Error(p)
		}
	}, func() {
		r := rand.New(rand.NewPCG(7, 7))
		for n := range uint64(stores) {
			k := fmt.Sprint("k", r.IntN(keys))
			if n%5 == 0 {
				tb.Delete(k)
			} else {
				tb.Store(k, n)
			}
		}
	})
	if p := sub.catchUp(tb); p != "" {
		t.Error(p)
	}
}

// TestCursorOpenedDuringAStore opens a cursor from inside a Store into the
// next version, after the Store recorded its entry and before it published
// the version, as a subscriber on another goroutine could: the changes
// from a snapshot taken before the Store to one taken after must still
// hold it.
func TestCursorOpenedDuringAStore(t *testing.T) {
	tb := New[string, uint64](4)
	other := tb.Cursor() // so that Stores record entries
	defer other.Close()
	tb.Store("a", 1)
	tb.Store("b", 2) // the log's block holds entries before the cursor's place
	before := tb.Snapshot()
	var cur *Cursor[string, uint64]
	beforePublish = func() { cur = tb.Cursor() }
	tb.Store("a", 3) // into the next version
	beforePublish = nil
	defer cur.Close()
	var got []string
	cur.Changes(before, tb.Snapshot(), func(k string, v uint64, ok bool) {
		got = append(got, fmt.Sprint(k, "=", v))
	})
	if fmt.Sprint(got) != "[a=3]" {
		t.Errorf("the changes across the Store the cursor opened in are %v, want [a=3]", got)
	}
}

// TestLogForDiffOnDemand follows the log LogForDiff offers through its
// life: nothing is logged until a Diff walks the slots and asks; the
// writer's next change starts the log, and a Diff between two snapshots
// taken since reads it (one from before still walks); once a whole log's
// worth of Stores goes by with no Diff reading it, the writer stops, until
// a Diff asks again; and release stops it for good. Every Diff must give
// the keys that changed.
func TestLogForDiffOnDemand(t *testing.T) {
	was := logShare
	logShare = 0
	var viaLog atomic.Int64
	onLogDiff = func() { viaLog.Add(1) }
	t.Cleanup(func() { logShare, onLogDiff = was, nil })

	const keys = 1000
	tb := New[string, uint64](0)
	for i := range keys {
		tb.Store(diffKey(i), 0)
	}
	n := uint64(0)
	storeSome := func(count int) {
		for i := range count {
			n++
			tb.Store(diffKey(i*7%keys), n)
		}
	}
	diff := func(from, to Snapshot[string, uint64], want int, log bool, when string) {
		t.Helper()
		before := viaLog.Load()
		got := 0
		Diff(from, to, func(string, uint64, bool, uint64, bool) bool { got++; return true })
		if got != want {
			t.Fatalf("%s: Diff gave %d keys, want %d", when, got, want)
		}
		if read := viaLog.Load() > before; read != log {
			t.Fatalf("%s: Diff read the log: %v, want %v", when, read, log)
		}
	}
	release := tb.LogForDiff()
	a := tb.Snapshot()
	storeSome(10)
	b := tb.Snapshot()
	if tb.log.logging {
		t.Fatal("the table logs before any Diff asked")
	}
	diff(a, b, 10, false, "before the log")
	storeSome(1) // starts the log, before its change
	if !tb.log.logging {
		t.Fatal("the writer's change after a Diff asked did not start the log")
	}
	c := tb.Snapshot()
	storeSome(20)
	d := tb.Snapshot()
	diff(c, d, 20, true, "since the log began")
	diff(d, c, 20, true, "since the log began, backwards")
	diff(a, d, 20, false, "from before the log")

	// Far more Stores than the log holds, with no Diff reading it.
	storeSome((tb.log.limit + 2 + keys/4/chunkSize) * chunkSize * 3)
	if tb.log.logging {
		t.Fatal("the table still logs after a whole log's worth of entries nobody read")
	}
	e := tb.Snapshot()
	storeSome(5)
	f := tb.Snapshot()
	diff(e, f, 5, false, "after the log stopped")
	storeSome(1)
	g := tb.Snapshot()
	storeSome(3)
	diff(g, tb.Snapshot(), 3, true, "after a Diff asked again")
	// As many Stores again, read now and then: the log stays.
	last := tb.Snapshot()
	for i := range (tb.log.limit + 2 + keys/4/chunkSize) * 3 * 4 {
		storeSome(chunkSize / 4)
		next := tb.Snapshot()
		diff(last, next, chunkSize/4, true, fmt.Sprint("read after block ", i/4))
		last = next
	}

	release()
	storeSome(1)
	if tb.log.logging || tb.log.readers.Load() != 0 {
		t.Fatal("the table logs after LogForDiff was released")
	}
	defer func() {
		if recover() == nil {
			t.Error("a second release did not panic")
		}
	}()
	release()
}
