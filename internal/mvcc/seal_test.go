package mvcc

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// TestUnsealReopensTheVersion seals the current version and takes the
// snapshot back: the next Stores change the version in place (no new
// version, no older value kept), and Seal gives the same snapshot struct
// again, with the new contents.
func TestUnsealReopensTheVersion(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	v := tb.Version()
	s := tb.Seal()
	if got, _ := s.Get("a"); got != 1 {
		t.Fatalf("the sealed snapshot reads a = %d", got)
	}
	first := s.snapshot
	if !tb.Unseal(s) {
		t.Fatal("Unseal of the only sealed snapshot, which nobody read, reported the version still frozen")
	}
	tb.Store("a", 2)
	if tb.Version() != v || tb.History() != 0 {
		t.Errorf("after Unseal a Store made version %d from %d and kept %d older values: it did not write in place", tb.Version(), v, tb.History())
	}
	s = tb.Seal()
	if got, _ := s.Get("a"); got != 2 || s.snapshot != first {
		t.Errorf("sealed again: reads a = %d, same struct %v; want 2, true", got, s.snapshot == first)
	}
	if tb.Unseal(Snapshot[string, uint64]{}) || tb.Unseal(tb.Snapshot()) {
		t.Error("Unseal took back a snapshot Seal did not give")
	}
}

// TestSealedTwice seals one version for two subscribers: it opens again
// only when both are taken back.
func TestSealedTwice(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("a", 1)
	s1, s2 := tb.Seal(), tb.Seal()
	if s1.snapshot != s2.snapshot {
		t.Error("Seal of one version gave two snapshots")
	}
	if tb.Unseal(s1) {
		t.Error("the version opened while a second seal was out")
	}
	if !tb.Unseal(s2) {
		t.Error("the version stayed frozen after both seals were taken back")
	}
}

// TestSealedSnapshotReadByOthers seals the version, lets a reader take a
// Snapshot of it, and checks that Unseal then leaves it frozen: the next
// Stores go to the next version, and both snapshots keep their contents,
// also after the collector and a trim.
func TestSealedSnapshotReadByOthers(t *testing.T) {
	tb := New[string, uint64](0)
	for i := range 100 {
		tb.Store(fmt.Sprint(i), 1)
	}
	sealed := tb.Seal()
	read := tb.Snapshot()
	if tb.Unseal(sealed) {
		t.Fatal("Unseal reopened a version a reader holds")
	}
	for i := range 100 {
		tb.Store(fmt.Sprint(i), 2)
	}
	runtime.GC()
	tb.Trim()
	for _, s := range []Snapshot[string, uint64]{sealed, read} {
		for i := range 100 {
			if v, _ := s.Get(fmt.Sprint(i)); v != 1 {
				t.Fatalf("a snapshot of the sealed version reads %d = %d after the Stores", i, v)
			}
		}
	}
	runtime.KeepAlive(sealed)
	runtime.KeepAlive(read)
}

// TestSealedSnapshotKeptOut seals the version and never takes it back:
// once the writer moves on, the snapshot is held as any other, through
// the collector and trims, and when it is let go of, the older values
// it read are let go of too.
func TestSealedSnapshotKeptOut(t *testing.T) {
	keepRecords(t) // it counts, or frees, records
	tb := New[string, uint64](0)
	for i := range 100 {
		tb.Store(fmt.Sprint(i), 1)
	}
	func() {
		s := tb.Seal()
		for round := range 3 {
			for i := range 100 {
				tb.Store(fmt.Sprint(i), uint64(round+2))
			}
			runtime.GC()
			tb.Trim()
		}
		for i := range 100 {
			if v, _ := s.Get(fmt.Sprint(i)); v != 1 {
				t.Fatalf("the sealed snapshot reads %d = %d", i, v)
			}
		}
		if h := tb.History(); h < 100 {
			t.Errorf("the table keeps %d older values for the sealed snapshot, want 100", h)
		}
		runtime.KeepAlive(s)
	}()
	waitFor(t, func() bool { runtime.GC(); tb.Trim(); return tb.History() == 0 })
}

// TestSealsUnderReaders has one writer store a counter with its number as
// the stamp, seal after each Store and take the seal back most times,
// while readers take snapshots and keep some: every snapshot must hold
// the counter its stamp says, and still hold it when checked again later.
func TestSealsUnderReaders(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("n", 0)
	var bad atomic.Value
	kept := make([][]Snapshot[string, uint64], 2)
	check := func(s Snapshot[string, uint64]) {
		if v, _ := s.Get("n"); v != s.Stamp() {
			bad.Store(fmt.Sprintf("a snapshot holds n = %d with stamp %d", v, s.Stamp()))
		}
	}
	whileWriting(2, func(r int) {
		s := tb.Snapshot()
		check(s)
		if len(kept[r]) < 50 {
			kept[r] = append(kept[r], s)
		}
		for _, old := range kept[r] {
			check(old)
		}
	}, func() {
		var out []Snapshot[string, uint64]
		for i := uint64(1); i <= 20000; i++ {
			tb.StoreStamped("n", i, i)
			tb.Store(fmt.Sprint("k", i%50), i)
			s := tb.Seal()
			check(s)
			if i%5 == 0 {
				out = append(out[:min(len(out), 20)], s) // kept out, as a subscriber that read it
			} else {
				tb.Unseal(s)
			}
		}
		for _, s := range out {
			check(s)
		}
	})
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
}
