package mvcc

import (
	"fmt"
	"testing"
)

// TestLogGivesEachSnapshotItsStores reads the change log up to each
// snapshot and checks that it gives exactly the Stores the snapshot holds
// since the last read, in order, across several of the log's blocks, and
// none of a later version: after each snapshot one more Store is made,
// into the next version, before the log is read.
func TestLogGivesEachSnapshotItsStores(t *testing.T) {
	tb := New[uint64](50)
	cur := tb.Cursor()
	defer cur.Close()
	var made []Entry[uint64] // every Store, in order
	store := func(i int) {
		k := fmt.Sprint("k", i%50)
		tb.Store(k, uint64(i+1))
		made = append(made, Entry[uint64]{Key: k, Val: uint64(i + 1)})
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
		cur.Read(s.Version(), func(e Entry[uint64]) {
			if read >= len(made)-1 || e.Key != made[read].Key || e.Val != made[read].Val {
				t.Fatalf("entry %d read is %s=%d; want %v, and no more than %d entries", read, e.Key, e.Val, made[min(read, len(made)-1)], len(made)-1)
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
	tb := New[uint64](4)
	tb.Store("a", 1)
	var cur *Cursor[uint64]
	lastRead := func(upTo uint64) (last Entry[uint64], n int) {
		n = cur.Read(upTo, func(e Entry[uint64]) { last = e })
		return last, n
	}
	looked := 0
	inChange = func() {
		looked++
		if e, n := lastRead(tb.Version()); n != 1 || e.Key != "b" || e.Val != 2 {
			t.Errorf("inside the change in place the log gave %d entries, the last %v; want the Store of b=2", n, e)
		}
	}
	beforePublish = func() {
		looked++
		if _, n := lastRead(tb.Version()); n != 0 {
			t.Errorf("before the next version is published the log gave %d entries up to the current one, want 0", n)
		}
		if e, n := lastRead(tb.Version() + 1); n != 1 || e.Key != "c" || e.Val != 3 || e.Ver != tb.Version()+1 {
			t.Errorf("before the next version is published the log gave %d entries up to it, the last %v; want the Store of c=3 at version %d", n, e, tb.Version()+1)
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
	tb := New[uint64](1)
	cur := tb.Cursor()
	cur.Close()
	for name, f := range map[string]func(){
		"a second Close": cur.Close,
		"a Read":         func() { cur.Read(1, func(Entry[uint64]) {}) },
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
	tb := New[uint64](keys)
	key := func(i uint64) string { return fmt.Sprint("k", i%keys) }
	cur := tb.Cursor()
	defer cur.Close()
	var last uint64 // Store n stores n+1 at key n%keys
	fails := 0
	whileWriting(1, func(int) {
		s := tb.Snapshot()
		cur.Read(s.Version(), func(e Entry[uint64]) {
			if e.Val != last+1 && fails < 5 {
				fails++
				t.Errorf("the log gave %d after %d", e.Val, last)
			}
			last = e.Val
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
	tb := New[uint64](4)
	tb.Store("a", 1)
	if n := tb.log.tail.Load().n.Load(); n != 0 {
		t.Errorf("with no cursor the log holds %d entries, want 0", n)
	}
	cur := tb.Cursor()
	tb.Store("b", 2)
	var got []string
	cur.Read(tb.Snapshot().Version(), func(e Entry[uint64]) { got = append(got, e.Key) })
	cur.Close()
	tb.Store("c", 3)
	if fmt.Sprint(got) != "[b]" {
		t.Errorf("the cursor read %v, want [b]", got)
	}
	if n := tb.log.tail.Load().n.Load(); n != 1 {
		t.Errorf("after the cursor closed the log holds %d entries, want 1", n)
	}
}
