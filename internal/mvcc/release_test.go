package mvcc

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStoreReleasePublishes is the message-passing test of storeRelease:
// a writer stores i in data and then in flag, and a reader that loads flag
// and then data must find data at least as new as flag. Run without the
// race detector on amd64, it tests the plain move of release_amd64.s.
func TestStoreReleasePublishes(t *testing.T) {
	const stores = 1 << 20
	var data, flag uint64
	var wg sync.WaitGroup
	var done atomic.Bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		for i := uint64(1); i <= stores; i++ {
			storeRelease(&data, i)
			storeRelease(&flag, i)
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	reads, seen := 0, uint64(0)
	for !done.Load() && time.Now().Before(deadline) {
		f := atomic.LoadUint64(&flag)
		d := atomic.LoadUint64(&data)
		if d < f {
			t.Fatalf("read flag %d, then data %d: the store of data was not seen first", f, d)
		}
		if f < seen {
			t.Fatalf("read flag %d after %d", f, seen)
		}
		seen = f
		reads++
	}
	wg.Wait()
	if got := atomic.LoadUint64(&data); got != stores {
		t.Fatalf("data is %d after the writer's last store; want %d", got, stores)
	}
	t.Logf("%d reads, the last of flag %d", reads, seen)
}
