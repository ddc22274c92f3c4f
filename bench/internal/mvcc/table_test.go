package mvcc

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// held is a snapshot with the contents it must show, copied from a Go map
// kept beside the table when it was taken.
type held struct {
	s    Snapshot[uint64]
	want map[string]uint64
}

// TestModelAgreesWithAMap runs random Stores, Snapshots and Forgets
// against a Go map kept beside the table, and checks after every step that
// Load reads the map and that every snapshot still held reads what the map
// held when it was taken.
func TestModelAgreesWithAMap(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			const keys = 40
			tb := New[uint64](keys)
			m := map[string]uint64{}
			var snaps []held
			for step := range 2000 {
				switch op := r.IntN(10); {
				case op < 6:
					k := fmt.Sprint("k", r.IntN(keys))
					v := uint64(step + 1)
					tb.Store(k, v)
					m[k] = v
				case op < 8:
					snaps = append(snaps, held{tb.Snapshot(), maps.Clone(m)})
				case len(snaps) > 0:
					// Let go of the oldest snapshots, and say so.
					snaps = snaps[r.IntN(len(snaps)):]
					if len(snaps) > 0 {
						tb.Forget(snaps[0].s.Version())
					}
				}
				if tb.Len() != len(m) {
					t.Fatalf("step %d: Len = %d, want %d", step, tb.Len(), len(m))
				}
				for i := range keys {
					k := fmt.Sprint("k", i)
					got, ok := tb.Load(k)
					want, wantOK := m[k]
					if got != want || ok != wantOK {
						t.Fatalf("step %d: Load(%q) = %d, %v; want %d, %v", step, k, got, ok, want, wantOK)
					}
					for _, h := range snaps {
						got, ok := h.s.Get(k)
						want, wantOK := h.want[k]
						if got != want || ok != wantOK {
							t.Fatalf("step %d: snapshot at version %d: Get(%q) = %d, %v; want %d, %v",
								step, h.s.Version(), k, got, ok, want, wantOK)
						}
					}
				}
			}
		})
	}
}

// TestSnapshotsHoldUnderAWriter takes snapshots on other goroutines while
// one writer stores, and checks that each snapshot reads the same values
// every time, none older than a Store finished before it was taken and
// none newer than one begun after. Run with -race, it also checks the
// model's stores and reads.
func TestSnapshotsHoldUnderAWriter(t *testing.T) {
	const keys, stores = 64, 20000
	tb := New[uint64](keys)
	key := func(i int) string { return fmt.Sprint("k", i) }
	var stored atomic.Uint64 // the number of Stores made so far
	var wg sync.WaitGroup
	done := make(chan struct{})
	var failures atomic.Int32
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				before := stored.Load()
				s := tb.Snapshot()
				after := stored.Load()
				first := make([]uint64, keys)
				for i := range keys {
					v, _ := s.Get(key(i))
					first[i] = v
					// Store n (from 0) stores n+1 at key n%keys. The
					// first before Stores were done when the snapshot
					// was taken, and at most after+1 were begun.
					var least uint64
					if before > uint64(i) {
						least = uint64(i) + keys*((before-1-uint64(i))/keys) + 1
					}
					if (v < least || v > after+1) && failures.Add(1) < 5 {
						t.Errorf("snapshot %d read %d at %s; want one from %d to %d", s.Version(), v, key(i), least, after+1)
					}
				}
				for i := range keys {
					if v, _ := s.Get(key(i)); v != first[i] && failures.Add(1) < 5 {
						t.Errorf("snapshot %d read %d at %s, then %d", s.Version(), first[i], key(i), v)
					}
				}
			}
		}()
	}
	for n := range uint64(stores) {
		tb.Store(key(int(n%keys)), n+1)
		stored.Store(n + 1)
	}
	close(done)
	wg.Wait()
}

func TestNewRefusesWideValues(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New of a two-word value type did not panic")
		}
	}()
	New[[2]uint64](1)
}
