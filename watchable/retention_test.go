package watchable_test

import (
	"context"
	"runtime"
	"strconv"
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// TestMemoryStaysBoundedUnderReaders checks that a map written on and on
// while readers keep up holds about the same memory after 200,000 writes
// as after 20,000: what it keeps for the States readers hold goes once
// they let go of them. Each reader here keeps the newest State, as a
// subscriber does between snapshots. Until round forty-four the table's
// blocks of older-value records chained each other alive, and a map of
// 100 keys grew by about 27 bytes a write, for good (4.9 MB over the
// 180,000 writes measured here).
func TestMemoryStaysBoundedUnderReaders(t *testing.T) {
	keys := make([]string, 100)
	for i := range keys {
		keys[i] = "key-" + strconv.Itoa(i)
	}
	type item struct{ Name string }
	t.Run("State held", func(t *testing.T) {
		var m watchable.Map[string, int]
		var st watchable.State[string, int]
		growth := heapGrowth(func(n int) {
			for i := range n {
				m.Store(keys[i%len(keys)], i)
				st = m.State()
			}
		})
		runtime.KeepAlive(st)
		checkBounded(t, growth)
	})
	t.Run("Subscribe", func(t *testing.T) {
		var m watchable.Map[string, *item]
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := m.Subscribe(ctx)
		read := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for s := range ch {
				select {
				case read <- struct{}{}: // s, and its State, held until the next
				case <-ctx.Done():
				}
				runtime.KeepAlive(s)
			}
		}()
		<-read // the first snapshot
		growth := heapGrowth(func(n int) {
			for i := range n {
				// A change, so a snapshot, which the reader takes before
				// the next write: a subscriber that reads every one.
				m.Store(keys[i%len(keys)], &item{Name: strconv.Itoa(i)})
				<-read
			}
		})
		cancel()
		<-done
		checkBounded(t, growth)
	})
}

// heapGrowth makes 20,000 writes with write, then 180,000 more, and returns
// how much the live heap grew over the second part. It collects every
// 5,000 writes, as a program allocating more than these loops do would
// be collected: the map learns that States are gone when the collector
// finds them so, and lets go of what they read at its next trim after.
// (Run after the package's other tests, whose garbage grew the heap the
// collector paces itself by, the loops met no collection at all, and the
// map had to keep what every State since the first might read.)
func heapGrowth(write func(n int)) int64 {
	writes := func(n int) {
		for range n / 5000 {
			write(5000)
			runtime.GC()
		}
	}
	writes(20_000)
	before := liveHeap()
	writes(180_000)
	return int64(liveHeap()) - int64(before)
}

// checkBounded fails t if the live heap grew by a megabyte or more.
func checkBounded(t *testing.T, growth int64) {
	t.Helper()
	if growth >= 1<<20 {
		t.Errorf("the live heap grew by %d kB over 180,000 writes to 100 keys; want it about flat", growth>>10)
	}
}

// liveHeap returns the heap in use after two collections: the first runs
// the cleanups of the States gone, the second frees what they held.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
