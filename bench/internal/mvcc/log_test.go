package mvcc

import (
	"fmt"
	"sync"
	"testing"
)

// TestLogGivesEachSnapshotItsStores reads the change log up to each
// snapshot and checks that it gives exactly the Stores made since the
// last read, in order, across several of the log's blocks.
func TestLogGivesEachSnapshotItsStores(t *testing.T) {
	tb := New[uint64](50)
	cur := tb.Cursor()
	defer cur.Close()
	var made []Entry[uint64] // every Store, in order
	read := 0
	for i := range 3 * chunkSize {
		k := fmt.Sprint("k", i%50)
		tb.Store(k, uint64(i+1))
		made = append(made, Entry[uint64]{Key: k, Val: uint64(i + 1)})
		if i%7 != 0 {
			continue // several Stores to one version, sometimes
		}
		s := tb.Snapshot()
		cur.Read(s.Version(), func(e Entry[uint64]) {
			if read >= len(made) || e.Key != made[read].Key || e.Val != made[read].Val {
				t.Fatalf("entry %d read is %s=%d, want %v", read, e.Key, e.Val, made[min(read, len(made)-1)])
			}
			if e.Ver > s.Version() {
				t.Fatalf("entry %d has version %d, newer than the snapshot's %d", read, e.Ver, s.Version())
			}
			read++
		})
		if read != len(made) {
			t.Fatalf("after %d Stores the log gave %d up to the snapshot", len(made), read)
		}
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
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var last uint64 // Store n stores n+1 at key n%keys
		for fails := 0; fails < 5; {
			select {
			case <-done:
				return
			default:
			}
			s := tb.Snapshot()
			cur.Read(s.Version(), func(e Entry[uint64]) {
				if e.Val != last+1 && fails < 5 {
					fails++
					t.Errorf("the log gave %d after %d", e.Val, last)
				}
				last = e.Val
			})
			if last == 0 {
				continue
			}
			if v, _ := s.Get(key(last - 1)); v != last && fails < 5 {
				fails++
				t.Errorf("the log's last entry up to snapshot %d is %d, the snapshot holds %d at its key", s.Version(), last, v)
			}
			// The next Store's key: the snapshot must not hold it if
			// the log has not given it.
			if v, _ := s.Get(key(last)); v > last && fails < 5 {
				fails++
				t.Errorf("snapshot %d holds Store %d, which the log did not give up to it", s.Version(), v)
			}
		}
	}()
	for n := range uint64(stores) {
		tb.Store(key(n), n+1)
	}
	close(done)
	wg.Wait()
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
