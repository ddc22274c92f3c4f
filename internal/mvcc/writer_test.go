package mvcc

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestZeroTable uses a Table that New did not make: before any Store it
// reads as empty everywhere, a Snapshot taken then stays empty after the
// first Stores, and afterwards it works as a table from New does.
func TestZeroTable(t *testing.T) {
	var tb Table[string, uint64]
	if v, ok := tb.Load("a"); ok || v != 0 {
		t.Errorf("Load of a zero table = %d, %v", v, ok)
	}
	if n := tb.Len(); n != 0 {
		t.Errorf("Len of a zero table = %d", n)
	}
	if s := tb.Stamp(); s != 0 {
		t.Errorf("Stamp of a zero table = %d", s)
	}
	empty := tb.Snapshot()
	tb.StoreStamped("a", 1, 7)
	tb.Store("", 2) // the empty key, at the first version a write may use
	for i := range 40 {
		tb.Store(fmt.Sprint("k", i), uint64(i)) // and growth
	}
	if v, ok := empty.Get("a"); ok || empty.Len() != 0 || empty.Stamp() != 0 {
		t.Errorf("the first snapshot reads a = %d, %v, Len %d, stamp %d; want it empty at stamp 0", v, ok, empty.Len(), empty.Stamp())
	}
	empty.All(func(k string, _ uint64) bool {
		t.Errorf("the first snapshot lists %q", k)
		return true
	})
	if v, ok := tb.Load(""); v != 2 || !ok {
		t.Errorf("Load of the empty key = %d, %v; want 2, true", v, ok)
	}
	if s := tb.Snapshot(); s.Len() != 42 || s.Stamp() != 7 || tb.Len() != 42 {
		t.Errorf("after 42 Stores: Len %d, snapshot's Len %d and stamp %d; want 42, 42, 7", tb.Len(), s.Len(), s.Stamp())
	}
}

// TestZeroTableSetUpUnderReaders has readers Load, Snapshot, Len and
// Stamp a zero table while its first writer stores: under -race it checks
// that setting the table up publishes what the readers read.
func TestZeroTableSetUpUnderReaders(t *testing.T) {
	for range 50 {
		var tb Table[string, *int]
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 20 {
					if p, ok := tb.Load("a"); ok && *p != 1 {
						t.Errorf("Load read %d", *p)
					}
					if s := tb.Snapshot(); s.Len() > 1 {
						t.Errorf("a snapshot of one key has Len %d", s.Len())
					}
					tb.Len()
					tb.Stamp()
				}
			}()
		}
		one := 1
		tb.Store("a", &one)
		wg.Wait()
	}
}

// TestFindThenChange looks a key up with Find and changes it through the
// Ref, inserting (also into a full table, which grows first), overwriting
// and deleting, and checks what Value says before each change and what
// the table holds after.
func TestFindThenChange(t *testing.T) {
	tb := New[string, uint64](0)
	want := map[string]uint64{}
	for i := range 100 {
		k := fmt.Sprint("k", i%60)
		var r Ref[string, uint64]
		tb.Find(k, &r)
		if r.Key() != k {
			t.Fatalf("Find(%q).Key() = %q", k, r.Key())
		}
		if v, ok := r.Value(); v != want[k] || ok != (want[k] != 0) {
			t.Fatalf("Find(%q).Value() = %d, %v; want %d", k, v, ok, want[k])
		}
		if _, there := want[k]; there && i%7 == 6 {
			if !r.Delete(uint64(i)) {
				t.Fatalf("Delete of %q through its Ref found nothing", k)
			}
			delete(want, k)
			continue
		}
		r.Set(uint64(i+1), uint64(i))
		want[k] = uint64(i + 1)
	}
	got := map[string]uint64{}
	tb.Range(func(k string, v uint64) bool { got[k] = v; return true })
	if !maps.Equal(got, want) || tb.Len() != len(want) {
		t.Errorf("after the changes Range gave %v (Len %d), want %v", got, tb.Len(), want)
	}
	var r Ref[string, uint64]
	if tb.Find("nothing", &r); r.Delete(1) {
		t.Error("Delete through the Ref of a missing key reported it there")
	}
}

// TestRangeIsTheWritersView checks that Range lists the newest values
// without freezing the version, and inside a Batch lists the batch's
// changes, which no reader sees yet.
func TestRangeIsTheWritersView(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	tb.Store("b", 2)
	v := tb.Version()
	seen := map[string]uint64{}
	tb.Range(func(k string, v uint64) bool { seen[k] = v; return true })
	if !maps.Equal(seen, map[string]uint64{"a": 1, "b": 2}) {
		t.Errorf("Range gave %v", seen)
	}
	tb.Store("a", 3)
	if tb.Version() != v {
		t.Errorf("a Store after Range made version %d from %d: Range froze the version", tb.Version(), v)
	}
	tb.Batch(func(b Batch[string, uint64]) {
		b.Store("c", 4)
		b.Delete("b")
		clear(seen)
		tb.Range(func(k string, v uint64) bool { seen[k] = v; return true })
		if x, ok := tb.Load("c"); ok {
			t.Errorf("a reader saw the batch's c = %d before it ended", x)
		}
	})
	if !maps.Equal(seen, map[string]uint64{"a": 3, "c": 4}) {
		t.Errorf("Range inside the batch gave %v", seen)
	}
	n := 0
	tb.Range(func(string, uint64) bool { n++; return false })
	if n != 1 {
		t.Errorf("Range went on %d times after yield returned false", n)
	}
}

// TestRestamp gives the contents new stamps in place, into the next
// version while a snapshot holds the current one, and inside a batch:
// the snapshot keeps its stamp, the contents do not change, and the
// table and new snapshots report each new stamp.
func TestRestamp(t *testing.T) {
	tb := New[string, uint64](0)
	tb.StoreStamped("a", 1, 1)
	tb.Restamp(2) // in place
	if tb.Stamp() != 2 || tb.Snapshot().Stamp() != 2 {
		t.Errorf("after an in-place Restamp(2): Stamp %d, snapshot's %d", tb.Stamp(), tb.Snapshot().Stamp())
	}
	held := tb.Snapshot()
	tb.Restamp(3) // the next version
	if held.Stamp() != 2 || tb.Stamp() != 3 {
		t.Errorf("a held snapshot's stamp is %d (want 2), the table's %d (want 3)", held.Stamp(), tb.Stamp())
	}
	s := tb.Snapshot()
	if v, _ := s.Get("a"); v != 1 || s.Stamp() != 3 || s.Len() != 1 {
		t.Errorf("after Restamp(3) a snapshot reads a = %d, Len %d, stamp %d", v, s.Len(), s.Stamp())
	}
	tb.Batch(func(b Batch[string, uint64]) {
		b.Store("b", 2)
		tb.Restamp(4)
	})
	if tb.Stamp() != 4 {
		t.Errorf("after a Restamp(4) inside a batch the stamp is %d", tb.Stamp())
	}
	tb.Store("c", 3)
	if tb.Stamp() != 4 {
		t.Errorf("a plain Store changed the stamp to %d", tb.Stamp())
	}
}

// TestBatchKeepsTheStampUntilPublished makes batches that write one, two
// and three slots, each with a stamp of its own: until the batch's
// version is published, the table's stamp and a snapshot's must be the
// current version's, whichever version the batch publishes.
func TestBatchKeepsTheStampUntilPublished(t *testing.T) {
	tb := New[string, uint64](0)
	tb.StoreStamped("a", 0, 7)
	want, looked := uint64(7), 0
	beforePublish = func() {
		looked++
		if s := tb.Stamp(); s != want {
			t.Errorf("before the batch's version is published the stamp is %d, want %d", s, want)
		}
		if s := tb.Snapshot().Stamp(); s != want {
			t.Errorf("a snapshot taken before the batch's version is published has stamp %d, want %d", s, want)
		}
	}
	defer func() { beforePublish = nil }()
	for k := 1; k <= 3; k++ {
		tb.Batch(func(b Batch[string, uint64]) {
			for i := range k {
				b.Store(fmt.Sprint(i), uint64(k))
			}
			b.Stamp(want + 1)
		})
		want++
		if s := tb.Stamp(); s != want {
			t.Errorf("after a batch of %d Stores the stamp is %d, want %d", k, s, want)
		}
	}
	if looked != 3 {
		t.Errorf("three batches published %d times", looked)
	}
}

// TestVersionsRunOut stores into a table whose versions are about to run
// out: the Store that would need one more panics, saying why, before it
// changes anything.
func TestVersionsRunOut(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	tb.state.Store(verMask<<statusShift | statusFrozen) // the last version, held by a snapshot
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), "versions") {
			t.Fatalf("recovered %v, want a panic about the versions", r)
		}
		if v, ok := tb.Load("a"); v != 1 || !ok {
			t.Errorf("after the refused Store, Load(a) = %d, %v; want 1, true", v, ok)
		}
	}()
	tb.Store("a", 2)
}

// TestVersionsRunOutInABatch makes batches near the end of the versions:
// one Store takes the last versions there are, and the batch is
// published; a second Store would take one too many, and panics, saying
// why, and its batch changes nothing.
func TestVersionsRunOutInABatch(t *testing.T) {
	for _, stores := range []int{1, 2} {
		tb := New[string, uint64](0)
		tb.Store("a", 1)
		tb.Store("b", 1)
		tb.state.Store((verMask-3)<<statusShift | statusFrozen)
		var r any
		func() {
			defer func() { r = recover() }()
			tb.Batch(func(b Batch[string, uint64]) {
				b.Store("a", 2)
				if stores == 2 {
					b.Store("b", 2)
				}
			})
		}()
		want := uint64(1)
		if stores == 1 {
			if r != nil {
				t.Fatalf("a batch of one Store with room for it panicked: %v", r)
			}
			want = 2
		} else if r == nil || !strings.Contains(fmt.Sprint(r), "versions") {
			t.Fatalf("recovered %v from a batch of two Stores, want a panic about the versions", r)
		}
		if v, ok := tb.Load("a"); v != want || !ok {
			t.Errorf("after a batch of %d Stores, Load(a) = %d, %v; want %d, true", stores, v, ok, want)
		}
		if v, ok := tb.Load("b"); v != 1 || !ok {
			t.Errorf("after a batch of %d Stores, Load(b) = %d, %v; want 1, true", stores, v, ok)
		}
	}
}

// TestUndoBlocksDroppedUnderAReader lets a batch too large for its undo
// log's blocks to be kept end, and the next batch make new ones, while a
// Load is between finding its slot's version in the log and reading the
// log's blocks: the Load must read again, not index blocks that are gone.
func TestUndoBlocksDroppedUnderAReader(t *testing.T) {
	const keys = 1200 // more entries than a table of keys keeps room for
	tb := New[int, uint64](4 * keys)
	for i := range keys {
		tb.Store(i, 1)
	}
	var v uint64
	var ok bool
	looked := betweenTwoBatches(t, tb, func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, 2)
		}
	}, func(b Batch[int, uint64]) {
		b.Store(0, 3) // one block of entries
	}, func() { v, ok = tb.Load(keys - 1) })
	if v != 1 && v != 2 || !ok {
		t.Errorf("Load = %d, %v across the end of a batch; want 1 or 2, true", v, ok)
	}
	if looked != 1 {
		t.Errorf("the Load found its slot in the undo log %d times, want 1", looked)
	}
}

// betweenTwoBatches runs the batches first and then second on another
// goroutine, each paused before it ends, and calls read while the first
// is paused. When a reader in read has found its slot's version in the
// undo log and is about to read the log (inRead's step 3), the first
// batch ends and the second runs up to its pause; the second ends once
// read returns. It returns how many times a reader reached that step.
func betweenTwoBatches[K comparable](t *testing.T, tb *Table[K, uint64], first, second func(Batch[K, uint64]), read func()) int {
	t.Helper()
	step, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for _, fn := range []func(Batch[K, uint64]){first, second} {
			tb.Batch(func(b Batch[K, uint64]) {
				fn(b)
				step <- struct{}{}
				<-step
			})
		}
	}()
	<-step
	looked := 0
	inRead = func(s int) {
		if s == 3 {
			looked++
			inRead = nil
			step <- struct{}{} // the first batch ends
			<-step             // the second is under way
		}
	}
	t.Cleanup(func() { inRead = nil })
	read()
	step <- struct{}{}
	<-done
	return looked
}

// TestPanickingBatchChangesNothing runs random Stores, Deletes and
// batches against a Go map, and makes some batches panic part way
// (after Stores to new and old keys, Deletes, and now and then a growth):
// afterwards the table, and every snapshot held, must read as before the
// batch, and later changes must work as if it had never begun.
func TestPanickingBatchChangesNothing(t *testing.T) {
	for seed := range uint64(10) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 2))
			tb := New[string, uint64](0)
			m := map[string]uint64{}
			var snaps []held
			check := func(step int) {
				t.Helper()
				for i := range 80 {
					k := fmt.Sprint("k", i)
					v, ok := tb.Load(k)
					if w, there := m[k]; v != w || ok != there {
						t.Fatalf("step %d: Load(%q) = %d, %v; want %d, %v", step, k, v, ok, w, there)
					}
				}
				if tb.Len() != len(m) {
					t.Fatalf("step %d: Len = %d, want %d", step, tb.Len(), len(m))
				}
				for _, h := range snaps {
					got := map[string]uint64{}
					h.s.All(func(k string, v uint64) bool { got[k] = v; return true })
					if !maps.Equal(got, h.want) || h.s.Len() != len(h.want) {
						t.Fatalf("step %d: a held snapshot lists %v (Len %d), want %v", step, got, h.s.Len(), h.want)
					}
				}
			}
			for step := range 600 {
				k := fmt.Sprint("k", r.IntN(80))
				switch op := r.IntN(10); {
				case op < 4:
					tb.Store(k, uint64(step+1))
					m[k] = uint64(step + 1)
				case op < 5:
					tb.Delete(k)
					delete(m, k)
				case op < 6:
					snaps = append(snaps, held{tb.Snapshot(), maps.Clone(m)})
					if len(snaps) > 4 {
						snaps = snaps[1:]
					}
				default:
					fail := op >= 8
					n := 1 + r.IntN(40)
					next := maps.Clone(m)
					func() {
						defer func() {
							if p := recover(); (p != nil) != fail {
								t.Fatalf("step %d: recovered %v from a batch that should panic: %v", step, p, fail)
							}
						}()
						tb.Batch(func(b Batch[string, uint64]) {
							for i := range n {
								k := fmt.Sprint("k", r.IntN(80))
								if r.IntN(4) == 0 {
									b.Delete(k)
									delete(next, k)
								} else {
									b.Store(k, uint64(1000*step+i))
									next[k] = uint64(1000*step + i)
								}
							}
							if fail {
								panic("the batch fails")
							}
						})
					}()
					if !fail {
						m = next
					}
				}
				check(step)
			}
		})
	}
}

// TestPanickingBatchesUnseen has readers Load and take snapshots while
// the writer makes batches that each store their number in twenty keys,
// insert a key of their own, and panic: no reader may ever see a number
// other than the one every key held before.
func TestPanickingBatchesUnseen(t *testing.T) {
	tb := New[string, uint64](0)
	for i := range 20 {
		tb.Store(fmt.Sprint("k", i), 1)
	}
	var bad atomic.Value
	whileWriting(2, func(int) {
		if v, ok := tb.Load("k7"); v != 1 || !ok {
			bad.Store(fmt.Sprintf("Load(k7) = %d, %v", v, ok))
		}
		s := tb.Snapshot()
		s.All(func(k string, v uint64) bool {
			if v != 1 {
				bad.Store(fmt.Sprintf("a snapshot holds %s = %d", k, v))
			}
			return true
		})
		if s.Len() != 20 {
			bad.Store(fmt.Sprintf("a snapshot has Len %d", s.Len()))
		}
	}, func() {
		for b := range 3000 {
			func() {
				defer func() { recover() }()
				tb.Batch(func(bt Batch[string, uint64]) {
					for i := range 20 {
						bt.Store(fmt.Sprint("k", i), uint64(b+2))
					}
					bt.Store(fmt.Sprint("new", b), uint64(b+2))
					panic("no")
				})
			}()
		}
	})
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	if tb.Len() != 20 {
		t.Errorf("Len = %d after the batches, want 20", tb.Len())
	}
}

// TestLoadWhileABatchIsPutBack looks at the table between the two writes
// that put back a slot a panicking Batch overwrote: a Load there must
// read the old value, never the batch's.
func TestLoadWhileABatchIsPutBack(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	looked := 0
	inAbort = func() {
		looked++
		if v, ok := tb.Load("a"); v != 1 || !ok {
			t.Errorf("while a is put back, Load(a) = %d, %v; want 1, true", v, ok)
		}
	}
	t.Cleanup(func() { inAbort = nil })
	func() {
		defer func() { recover() }()
		tb.Batch(func(b Batch[string, uint64]) {
			b.Store("a", 2)
			panic("no")
		})
	}()
	if looked != 1 {
		t.Errorf("the hook ran %d times, want 1", looked)
	}
}

// TestReinsertInPlaceWhileALoadReads deletes and stores a key again, in
// place in one open version, while a Load is between reading the slot's
// word and reading its value, and then between reading the value and the
// word again: the Load must not take the delete's zero for the key's
// value, which it would if the Store gave the slot back the word it read.
func TestReinsertInPlaceWhileALoadReads(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	inRead = func(step int) {
		switch step {
		case 0:
			tb.Delete("a")
		case 1:
			inRead = nil
			tb.Store("a", 2)
		}
	}
	t.Cleanup(func() { inRead = nil })
	// Any of 1, nothing or 2 is what a was at some moment of the Load.
	if v, ok := tb.Load("a"); ok && v == 0 {
		t.Errorf("Load(a) = 0, true while a was deleted and stored again; 0 was never stored")
	}
}

// TestAbortWhileALoadReads makes a Batch write a slot while a Load is
// between reading the slot's word and its value, and panic before the
// Load reads the word again: the Load must read the old value, never
// the value of the batch, which nobody may see.
func TestAbortWhileALoadReads(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	wrote, abort, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer func() { recover() }()
		tb.Batch(func(b Batch[string, uint64]) {
			<-wrote // the Load read the word
			b.Store("a", 2)
			wrote <- struct{}{}
			<-abort
			panic("no")
		})
	}()
	inRead = func(step int) {
		switch step {
		case 0:
			wrote <- struct{}{}
			<-wrote
		case 1:
			inRead = nil
			close(abort)
			<-done
		}
	}
	t.Cleanup(func() { inRead = nil })
	if v, ok := tb.Load("a"); v != 1 || !ok {
		t.Errorf("Load(a) = %d, %v across a batch that panicked; want 1, true", v, ok)
	}
	if v, ok := tb.Load("a"); v != 1 || !ok {
		t.Errorf("after the batch, Load(a) = %d, %v; want 1, true", v, ok)
	}
}

// TestLoadAcrossTheEndOfABatch lets a Batch end, with no snapshot held,
// while a Load of the current version is between reading the word the
// batch gave a slot and looking for the slot's older value: the batch
// keeps none, and the Load must read again rather than find the key
// missing.
func TestLoadAcrossTheEndOfABatch(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	wrote, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tb.Batch(func(b Batch[string, uint64]) {
			b.Store("a", 2)
			wrote <- struct{}{}
			<-wrote
		})
	}()
	<-wrote
	looked := 0
	inRead = func(step int) {
		if step == 2 {
			looked++
			inRead = nil
			wrote <- struct{}{}
			<-done
		}
	}
	t.Cleanup(func() { inRead = nil })
	if v, ok := tb.Load("a"); !ok || v != 1 && v != 2 {
		t.Errorf("Load(a) = %d, %v across the end of a batch; want 1 or 2, true", v, ok)
	}
	if looked != 1 {
		t.Errorf("the Load met the batch's slot %d times, want 1", looked)
	}
}

// TestUndoEntryReusedUnderAReader makes a held snapshot read a slot that
// a Batch wrote, and between finding the slot's entry in the undo log and
// reading it, lets that batch end and the next one write the same entry
// for another slot: the reader must not take the other slot's old value.
func TestUndoEntryReusedUnderAReader(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	tb.Store("b", 10)
	held := tb.Snapshot()
	var v uint64
	var ok bool
	looked := betweenTwoBatches(t, tb, func(b Batch[string, uint64]) {
		b.Store("a", 2) // its entry 0 keeps a's 1
	}, func(b Batch[string, uint64]) {
		b.Store("b", 20) // its entry 0 keeps b's 10
	}, func() { v, ok = held.Get("a") })
	if v != 1 || !ok {
		t.Errorf("a snapshot from before both batches read a = %d, %v; want 1, true", v, ok)
	}
	if looked != 1 {
		t.Errorf("the reader found the slot in the undo log %d times, want 1", looked)
	}
}

// TestBatchKeepsWhatHeldSnapshotsRead holds a snapshot, overwrites half
// the keys after it, and then overwrites every key in a batch: the batch
// must keep the values it replaced that the snapshot reads, the other
// half, and not those written after it, which nobody reads.
func TestBatchKeepsWhatHeldSnapshotsRead(t *testing.T) {
	keepRecords(t) // it counts records
	const keys = 100
	tb, held := filledAndHeld(keys, 1)
	for i := range keys / 2 {
		tb.Store(i, 2) // each keeps its 1 for held
	}
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range keys {
			b.Store(i, 3)
		}
	})
	checkKept(t, "after the batch", tb, keys, held, keys, 1)
}

// TestBatchLetsGoOfItsUndo fills a table with one large batch, and then
// makes a small one: the first's list of what to put back, 40 bytes a
// key, is let go of, and the second's kept for the next batch.
func TestBatchLetsGoOfItsUndo(t *testing.T) {
	tb := New[int, uint64](0)
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range 20000 {
			b.Store(i, 1)
		}
	})
	if c := tb.undo.room(); c != 0 {
		t.Errorf("after a batch of 20,000 new keys the undo log keeps room for %d", c)
	}
	tb.Batch(func(b Batch[int, uint64]) {
		for i := range 100 {
			b.Store(i, 2)
		}
	})
	if c := tb.undo.room(); c < 100 || tb.undo.base.Load() != 0 {
		t.Errorf("after a batch of 100 the undo log is open at %d with room for %d; want closed, with room for at least 100", tb.undo.base.Load(), c)
	}
}
