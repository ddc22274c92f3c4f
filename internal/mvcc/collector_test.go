package mvcc

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestQuietAt(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		marked, goal, inUse uint64
		want                bool
	}{
		{100 * mb, 200 * mb, 100 * mb, true},  // just collected
		{100 * mb, 200 * mb, 149 * mb, true},  // under half of the way
		{100 * mb, 200 * mb, 150 * mb, false}, // half of the way
		{100 * mb, 200 * mb, 171 * mb, false}, // where a cycle may start
		{100 * mb, 200 * mb, 250 * mb, false}, // past the goal: marking
		{100 * mb, 100 * mb, 50 * mb, false},  // no room: the memory limit
		{100 * mb, 90 * mb, 50 * mb, false},
	} {
		if got := quietAt(c.marked, c.goal, c.inUse); got != c.want {
			t.Errorf("quietAt(marked %d MB, goal %d MB, in use %d MB) = %v; want %v", c.marked/mb, c.goal/mb, c.inUse/mb, got, c.want)
		}
	}
}

// TestGaugeReadsTheRuntime checks that the gauge reads figures this
// runtime has, and finds the collector quiet right after a collection:
// were a name wrong, quiet would say true whatever the heap.
func TestGaugeReadsTheRuntime(t *testing.T) {
	var g gauge
	runtime.GC()
	if !g.quiet() {
		t.Error("the collector is not quiet right after runtime.GC")
	}
	for _, s := range g.samples {
		if s.Value.Kind() != 1 { // metrics.KindUint64
			t.Errorf("%s reads as kind %v; want a uint64", s.Name, s.Value.Kind())
		}
	}
}

// heldWithDroppable makes a table of pointers whose older values a trim
// can drop while a snapshot held keeps their keep blocks alive: old reads
// the first value of key 0, and each of the stores values after it was
// read by a snapshot let go of at once. freed counts the values the
// collector frees. It collects garbage until the snapshots let go of are
// gone.
func heldWithDroppable(t *testing.T, stores int, freed *atomic.Int32) (*Table[int, *payload], Snapshot[int, *payload]) {
	t.Helper()
	tb := New[int, *payload](0)
	tb.Store(0, newPayload(0, nil))
	old := tb.Snapshot()
	for i := 1; i <= stores; i++ {
		s := tb.Snapshot()
		tb.Store(0, newPayload(uint64(i), freed))
		runtime.KeepAlive(s)
	}
	if tb.History() != stores {
		t.Fatalf("the table keeps %d older values; want %d, untrimmed, for the test to mean anything", tb.History(), stores)
	}
	collect()
	if n := freed.Load(); n != 0 {
		t.Fatalf("%d values freed before any trim; want none: the held snapshot's blocks hold them", n)
	}
	return tb, old
}

// TestDropsWaitForAQuietCollector checks that a trim clears the values it
// lets go of from their keep blocks only once the collector is quiet, or
// after maxWaits trims that found it busy, and that nothing is lost
// meanwhile: the held snapshot reads what it read.
func TestDropsWaitForAQuietCollector(t *testing.T) {
	const stores = 500 // fewer than start a trim by themselves
	var freed atomic.Int32
	tb, old := heldWithDroppable(t, stores, &freed)
	quiet := false
	tb.blocks.gauge.fake = func() bool { return quiet }

	tb.trim(false)
	if tb.History() != 1 {
		t.Fatalf("the trim left %d older values listed; want one, the value the held snapshot reads", tb.History())
	}
	if len(tb.blocks.drops) == 0 {
		t.Fatal("the trim queued no drops; want the values it unlinked, waiting")
	}
	collect()
	if n := freed.Load(); n != 0 {
		t.Fatalf("%d values freed while the collector was busy; want none yet", n)
	}
	quiet = true
	tb.trim(false)
	if len(tb.blocks.drops) != 0 {
		t.Fatalf("%d drops still queued once the collector was quiet; want none", len(tb.blocks.drops))
	}
	// The last value stored is the table's; every one before it goes.
	awaitFreed(t, &freed, stores, stores-1)
	if v, ok := old.Get(0); !ok || !v.intact(0) {
		t.Fatalf("the held snapshot reads %v, %v; want its value, intact", v, ok)
	}
	if v, ok := tb.Load(0); !ok || !v.intact(stores) {
		t.Fatalf("Load reads %v, %v; want the value of %d, intact", v, ok, stores)
	}
}

// TestDropsWaitAFewTrimsAtMost checks that a collector that is never
// quiet, as under a tight memory limit, holds the drops for maxWaits
// trims, and that Trim, which a caller asks for, does not wait at all.
func TestDropsWaitAFewTrimsAtMost(t *testing.T) {
	const stores = 500
	t.Run("trims", func(t *testing.T) {
		var freed atomic.Int32
		tb, old := heldWithDroppable(t, stores, &freed)
		tb.blocks.gauge.fake = func() bool { return false }
		for i := range maxWaits {
			tb.trim(false)
			if len(tb.blocks.drops) == 0 {
				t.Fatalf("trim %d of a busy collector cleared the drops; want them waiting for %d trims", i+1, maxWaits)
			}
		}
		tb.trim(false)
		if len(tb.blocks.drops) != 0 {
			t.Fatalf("%d drops queued after %d trims of a busy collector; want none", len(tb.blocks.drops), maxWaits+1)
		}
		awaitFreed(t, &freed, stores, stores-1)
		runtime.KeepAlive(old)
	})
	t.Run("Trim", func(t *testing.T) {
		var freed atomic.Int32
		tb, old := heldWithDroppable(t, stores, &freed)
		tb.blocks.gauge.fake = func() bool { return false }
		tb.Trim()
		if len(tb.blocks.drops) != 0 {
			t.Fatalf("%d drops queued after Trim; want none", len(tb.blocks.drops))
		}
		awaitFreed(t, &freed, stores, stores-1)
		runtime.KeepAlive(old)
	})
}
