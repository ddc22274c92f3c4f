package mvcc

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// held is a snapshot with the contents it must show, copied from a Go map
// kept beside the table when it was taken.
type held struct {
	s    Snapshot[string, uint64]
	want map[string]uint64
}

// TestModelAgreesWithAMap runs random Stores, Deletes, Snapshots and
// releases of snapshots against a Go map kept beside the table, from a
// table made for no keys, so that it grows; and checks after every step
// that Load reads the map, and that every snapshot still held reads, lists
// and counts what the map held when it was taken. Now and then it lets the
// collector end the snapshots let go of, and trims.
func TestModelAgreesWithAMap(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 1))
			const keys = 40
			tb := New[string, uint64](0)
			m := map[string]uint64{}
			var snaps []held
			for step := range 2000 {
				switch op := r.IntN(21); {
				case op == 20:
					// A batch: none of it is seen before it ends.
					before := maps.Clone(m)
					tb.Batch(func(b Batch[string, uint64]) {
						for range 1 + r.IntN(8) {
							k := fmt.Sprint("k", r.IntN(keys))
							if r.IntN(3) == 0 {
								_, want := m[k]
								if got := b.Delete(k); got != want {
									t.Fatalf("step %d: Delete(%q) in a batch = %v, want %v", step, k, got, want)
								}
								delete(m, k)
							} else {
								b.Store(k, uint64(step+1))
								m[k] = uint64(step + 1)
							}
							got, ok := tb.Load(k)
							if want, wantOK := before[k]; got != want || ok != wantOK {
								t.Fatalf("step %d: Load(%q) inside a batch = %d, %v; want %d, %v from before it", step, k, got, ok, want, wantOK)
							}
							if tb.Snapshot().Len() != len(before) {
								t.Fatalf("step %d: a snapshot inside a batch has Len %d, want %d", step, tb.Snapshot().Len(), len(before))
							}
						}
					})
				case op < 10:
					k := fmt.Sprint("k", r.IntN(keys))
					v := uint64(step + 1)
					tb.Store(k, v)
					m[k] = v
				case op < 14:
					k := fmt.Sprint("k", r.IntN(keys))
					_, want := m[k]
					if got := tb.Delete(k); got != want {
						t.Fatalf("step %d: Delete(%q) = %v, want %v", step, k, got, want)
					}
					delete(m, k)
				case op < 17:
					snaps = append(snaps, held{tb.Snapshot(), maps.Clone(m)})
				case op < 19 && len(snaps) > 0:
					snaps = slices.Delete(snaps, 0, r.IntN(len(snaps)+1))
				case op == 19:
					runtime.GC()
					tb.Trim()
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
				for _, h := range snaps {
					all := map[string]uint64{}
					h.s.All(func(k string, v uint64) bool {
						if _, twice := all[k]; twice {
							t.Fatalf("step %d: snapshot at version %d lists %q twice", step, h.s.Version(), k)
						}
						all[k] = v
						return true
					})
					if !maps.Equal(all, h.want) || h.s.Len() != len(h.want) {
						t.Fatalf("step %d: snapshot at version %d lists %v with Len %d; want %v",
							step, h.s.Version(), all, h.s.Len(), h.want)
					}
				}
			}
		})
	}
}

// TestHistoryEndsWithItsSnapshots checks that the older values a snapshot
// kept are dropped once it is unreachable, and only then: first those kept
// for snapshots nobody holds, then those of one held snapshot when it goes.
func TestHistoryEndsWithItsSnapshots(t *testing.T) {
	const keys = 100
	tb := New[string, uint64](keys)
	key := func(i int) string { return fmt.Sprint("k", i) }
	for i := range keys {
		tb.Store(key(i), 1)
	}
	kept := tb.Snapshot()
	for round := range uint64(5) {
		for i := range keys {
			tb.Snapshot() // made and dropped: each Store writes a new version
			tb.Store(key(i), round+2)
		}
	}
	if h := tb.History(); h < keys {
		t.Fatalf("after 500 Stores under snapshots the table keeps %d older values, want at least %d", h, keys)
	}
	// The dropped snapshots go; the kept one still reads its values.
	waitFor(t, func() bool { tb.Trim(); return tb.History() <= keys })
	for i := range keys {
		if v, ok := kept.Get(key(i)); v != 1 || !ok {
			t.Fatalf("the kept snapshot reads %d, %v at %s after a trim; want 1, true", v, ok, key(i))
		}
	}
	runtime.KeepAlive(kept) // and no longer: the collector may end it
	waitFor(t, func() bool { tb.Trim(); return tb.History() == 0 })
}

// TestTrimCutsWhatTheHeldVersionDoesNotRead keeps one snapshot, lets go
// of a later one, and then overwrites in place keys the later one was
// the last to read: the older values those Stores keep are read by no
// snapshot held, and a trim must cut them even though the held versions
// and the current version are the ones the trim before saw.
func TestTrimCutsWhatTheHeldVersionDoesNotRead(t *testing.T) {
	keepRecords(t) // it counts, or frees, records
	const keys = 4000
	tb, kept := filledAndHeld(keys, 0)
	for i := range keys {
		tb.Store(i, 1) // each keeps a 0 for kept
	}
	func() {
		later := tb.Snapshot()
		for i := range keys / 2 {
			tb.Store(i, 2) // each keeps a 1 for later
		}
		runtime.KeepAlive(later)
	}()
	waitFor(t, func() bool { tb.Trim(); return tb.History() == keys })
	for i := keys / 2; i < keys; i++ {
		tb.Store(i, 2) // in place: each keeps a 1, which nobody reads
	}
	tb.Trim()
	checkKept(t, "after a trim", tb, keys, kept, keys, 0)
}

// TestPeriodicTrimAfterASnapshotGoes keeps one snapshot and lets go of a
// later one, after a trim that saw both: the writer's periodic trim, with
// no older value kept since, must cut what only the later one read.
func TestPeriodicTrimAfterASnapshotGoes(t *testing.T) {
	keepRecords(t) // it counts, or frees, records
	const keys = 2000
	tb, kept := filledAndHeld(keys, 0)
	for i := range keys {
		tb.Store(i, 1) // keeps a 0 for kept
	}
	later := tb.Snapshot()
	for i := range keys {
		tb.Store(i, 2) // keeps a 1 for later; enough to set off a trim that sees both
	}
	if h := tb.History(); h != 2*keys {
		t.Fatalf("with two snapshots held the table keeps %d older values, want %d", h, 2*keys)
	}
	laterVer := later.Version()
	runtime.KeepAlive(later)
	waitFor(t, func() bool {
		tb.held.mu.Lock()
		defer tb.held.mu.Unlock()
		for _, m := range tb.held.marks {
			if m.ver == laterVer && !m.gone.Load() {
				return false
			}
		}
		return true
	})
	for i := range 2*keys + 1 {
		tb.Store(i%keys, 2) // in place, keeping nothing: the periodic trim comes
	}
	checkKept(t, "after the later snapshot went and a pass of Stores,", tb, keys, kept, keys, 0)
}

// filledAndHeld returns a table of the keys 0 to keys-1, each stored with
// v, and a snapshot of it.
func filledAndHeld(keys int, v uint64) (*Table[int, uint64], Snapshot[int, uint64]) {
	tb := New[int, uint64](0)
	for i := range keys {
		tb.Store(i, v)
	}
	return tb, tb.Snapshot()
}

// checkKept checks that tb keeps want older values, and that held reads
// v at each of the keys 0 to keys-1.
func checkKept(t *testing.T, when string, tb *Table[int, uint64], want int, held Snapshot[int, uint64], keys int, v uint64) {
	t.Helper()
	if h := tb.History(); h != want {
		t.Errorf("%s the table keeps %d older values; want %d, those the held snapshot reads", when, h, want)
	}
	for i := range keys {
		if got, ok := held.Get(i); got != v || !ok {
			t.Fatalf("%s the held snapshot reads %d, %v at %d; want %d, true", when, got, ok, i, v)
		}
	}
}

func TestHoldsAll(t *testing.T) {
	for _, c := range []struct {
		vers, of []uint64
		want     bool
	}{
		{nil, nil, true},
		{[]uint64{1, 2}, nil, true},
		{nil, []uint64{1}, false},
		{[]uint64{1, 3, 5}, []uint64{1, 5}, true},
		{[]uint64{1, 3, 5}, []uint64{1, 4}, false},
		{[]uint64{3, 5}, []uint64{1}, false},
		{[]uint64{1, 3}, []uint64{1, 3, 5}, false},
	} {
		if got := holdsAll(c.vers, c.of); got != c.want {
			t.Errorf("holdsAll(%v, %v) = %v, want %v", c.vers, c.of, got, c.want)
		}
	}
}

// waitFor runs the collector until cond holds, for up to ten seconds: the
// collector ends an unreachable snapshot after a cycle or two, on a
// goroutine of its own.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("the condition did not hold within ten seconds of collections")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}

// whileWriting calls read over and over on each of readers goroutines
// (read's argument is the goroutine's number) while write runs, and
// returns once write has returned and every reader has stopped.
func whileWriting(readers int, read func(r int), write func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
					read(r)
				}
			}
		}()
	}
	write()
	close(done)
	wg.Wait()
}

// TestSnapshotsHoldUnderAWriter takes snapshots on other goroutines while
// one writer stores, and checks that each snapshot reads the same values
// every time, none older than a Store finished before it was taken and
// none newer than one begun after. Run with -race, it also checks the
// model's stores and reads.
func TestSnapshotsHoldUnderAWriter(t *testing.T) {
	const keys, stores = 64, 20000
	tb := New[string, uint64](keys)
	key := func(i int) string { return fmt.Sprint("k", i) }
	var stored atomic.Uint64 // the number of Stores made so far
	var failures atomic.Int32
	whileWriting(2, func(int) {
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
		// A Load, then a Snapshot: the snapshot must not read
		// an older value than the Load did, nor the Load read
		// another key's.
		j := int(after % keys)
		done := stored.Load() // Stores finished before the Load
		x, ok := tb.Load(key(j))
		if ok && int((x-1)%keys) != j && failures.Add(1) < 5 {
			t.Errorf("Load(%s) = %d, a value stored at another key", key(j), x)
		}
		if done > uint64(j) {
			if least := uint64(j) + keys*((done-1-uint64(j))/keys) + 1; x < least && failures.Add(1) < 5 {
				t.Errorf("Load(%s) = %d after Store %d of it had finished", key(j), x, least)
			}
		}
		if y, _ := tb.Snapshot().Get(key(j)); ok && y < x && failures.Add(1) < 5 {
			t.Errorf("Load(%s) read %d, then a snapshot taken after it read %d", key(j), x, y)
		}
	}, func() {
		for n := range uint64(stores) {
			tb.Store(key(int(n%keys)), n+1)
			stored.Store(n + 1)
		}
	})
}

// TestUnpublishedVersionUnseen looks at the table from inside a Store into
// the next version, after it wrote the slot and before it published the
// version, as a reader on another goroutine could: neither Load nor a
// Snapshot may see the new value yet, or a Snapshot taken after a Load
// could read an older value than the Load did.
func TestUnpublishedVersionUnseen(t *testing.T) {
	tb := New[string, uint64](4)
	tb.Store("k", 1)
	held := tb.Snapshot() // frozen: the next Store writes the next version
	var want uint64       // k's value before the Store under way
	looked := 0
	beforePublish = func() {
		looked++
		if v, _ := tb.Load("k"); v != want {
			t.Errorf("Load before the version is published = %d, want %d", v, want)
		}
		if v, _ := tb.Snapshot().Get("k"); v != want {
			t.Errorf("a Snapshot before the version is published read %d, want %d", v, want)
		}
		if v, ok := tb.Load("other"); ok {
			t.Errorf("Load of a key being inserted = %d, want nothing", v)
		}
	}
	defer func() { beforePublish = nil }()
	want = 1
	tb.Store("k", 2) // an old key, into the next version
	tb.Snapshot()
	want = 2
	tb.Store("other", 3) // a new key, into the next version
	beforePublish = nil
	if looked != 2 {
		t.Fatalf("%d Stores wrote the next version, want 2", looked)
	}
	if v, _ := tb.Load("k"); v != 2 {
		t.Errorf("Load after the Store = %d, want 2", v)
	}
	if v, _ := tb.Load("other"); v != 3 {
		t.Errorf("Load after the insert = %d, want 3", v)
	}
	if v, _ := held.Get("k"); v != 1 {
		t.Errorf("the snapshot taken before read %d, want 1", v)
	}
}

// TestLoadDuringInserts loads keys while the writer inserts them: a Load
// must find a key's own value or nothing, never that of a key inserted
// into the slot it probed meanwhile.
func TestLoadDuringInserts(t *testing.T) {
	const keys = 5000
	tb := New[string, uint64](keys)
	key := func(i int) string { return fmt.Sprint("k", i) }
	var failures atomic.Int32
	rngs := []*rand.Rand{rand.New(rand.NewPCG(0, 2)), rand.New(rand.NewPCG(1, 2))}
	whileWriting(len(rngs), func(r int) {
		j := rngs[r].IntN(keys)
		if v, ok := tb.Load(key(j)); ok && v != uint64(j)+1 && failures.Add(1) < 5 {
			t.Errorf("Load(%s) = %d, want %d or nothing", key(j), v, j+1)
		}
	}, func() {
		for i := range keys {
			tb.Store(key(i), uint64(i)+1)
		}
	})
}

// TestWindowUnderAWriter takes snapshots on other goroutines while one
// writer slides a window of keys: Store n inserts key n and Delete removes
// key n-window, so the table grows and drops the deleted time and again,
// and trims older values. Each snapshot must list a run of consecutive
// keys, each with its own value, as long as its Len, and read the same
// with Get; each reader keeps one snapshot over many of its passes and
// checks it again each time.
func TestWindowUnderAWriter(t *testing.T) {
	const window, stores = 50, 20000
	tb := New[string, uint64](0)
	key := func(i uint64) string { return fmt.Sprint("k", i) }
	var failures atomic.Int32
	fail := func(format string, args ...any) {
		if failures.Add(1) < 5 {
			t.Errorf(format, args...)
		}
	}
	check := func(s Snapshot[string, uint64]) {
		lo, hi, n := uint64(1<<63), uint64(0), 0
		s.All(func(k string, v uint64) bool {
			if k != key(v) {
				fail("snapshot %d lists %s = %d", s.Version(), k, v)
			}
			lo, hi, n = min(lo, v), max(hi, v), n+1
			return true
		})
		if n == 0 {
			return
		}
		if int(hi-lo)+1 != n || n > window+1 || s.Len() != n {
			fail("snapshot %d lists %d keys from %d to %d, with Len %d", s.Version(), n, lo, hi, s.Len())
		}
		for _, i := range []uint64{lo - 1, lo, (lo + hi) / 2, hi, hi + 1} {
			v, ok := s.Get(key(i))
			if want := i >= lo && i <= hi; ok != want || ok && v != i {
				fail("snapshot %d listing %d to %d: Get(%s) = %d, %v", s.Version(), lo, hi, key(i), v, ok)
			}
		}
	}
	kept := make([]Snapshot[string, uint64], 2)
	passes := make([]int, 2)
	whileWriting(2, func(r int) {
		s := tb.Snapshot()
		check(s)
		if passes[r]++; passes[r]%100 == 1 {
			kept[r] = s
		}
		check(kept[r])
		if j := uint64(s.Version()) % stores; j > 0 {
			if v, ok := tb.Load(key(j)); ok && v != j {
				fail("Load(%s) = %d", key(j), v)
			}
		}
	}, func() {
		for n := uint64(1); n <= stores; n++ {
			tb.Store(key(n), n)
			if n > window && !tb.Delete(key(n-window)) {
				fail("Delete(%s) found nothing", key(n-window))
			}
		}
	})
	if tb.Len() != window {
		t.Errorf("Len = %d after the writer, want %d", tb.Len(), window)
	}
}

// TestKeyLengths stores the empty key, the longest a slot's word can say
// and longer ones, which the table keeps boxed, and checks that each
// reads back, in Load, Get and All, before and after the table grows.
func TestKeyLengths(t *testing.T) {
	tb := New[string, uint64](0)
	long := strings.Repeat("k", maxKeyLen+1)
	want := map[string]uint64{"": 1, long[:maxKeyLen-1]: 2, long[:maxKeyLen]: 3, long: 4, long + "k": 5}
	for k, v := range want {
		tb.Store(k, v)
	}
	check := func(when string) {
		t.Helper()
		s := tb.Snapshot()
		for k, v := range want {
			if got, ok := tb.Load(k); got != v || !ok {
				t.Errorf("%s: Load of a key of %d bytes = %d, %v; want %d, true", when, len(k), got, ok, v)
			}
			if got, ok := s.Get(k); got != v || !ok {
				t.Errorf("%s: Get of a key of %d bytes = %d, %v; want %d, true", when, len(k), got, ok, v)
			}
		}
		got := map[string]uint64{}
		s.All(func(k string, v uint64) bool { got[k] = v; return true })
		if len(got) != len(want) || s.Len() != len(want) {
			t.Errorf("%s: All gave %d keys and Len is %d, want %d", when, len(got), s.Len(), len(want))
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s: All gave %d for a key of %d bytes, want %d", when, got[k], len(k), v)
			}
		}
	}
	check("before growth")
	for i := range 100 {
		tb.Store(fmt.Sprint(i), 0)
		want[fmt.Sprint(i)] = 0
	}
	check("after growth")
}

// TestBatchesAreWhole takes snapshots on other goroutines while the writer
// makes batches, each of which sets twenty keys to its number, inserts a
// key named for it and deletes the last batch's, so that the table also
// grows now and then: a snapshot must hold one batch whole, never parts
// of two.
func TestBatchesAreWhole(t *testing.T) {
	const keys, batches = 20, 3000
	tb := New[string, uint64](0)
	key := func(i int) string { return fmt.Sprint("k", i) }
	var failures atomic.Int32
	whileWriting(2, func(int) {
		s := tb.Snapshot()
		first, _ := s.Get(key(0))
		extra := 0
		s.All(func(k string, v uint64) bool {
			if strings.HasPrefix(k, "x") {
				extra++
				if k != fmt.Sprint("x", first) && failures.Add(1) < 5 {
					t.Errorf("snapshot %d holds %s beside k0=%d", s.Version(), k, first)
				}
			} else if v != first && failures.Add(1) < 5 {
				t.Errorf("snapshot %d holds %s=%d beside k0=%d", s.Version(), k, v, first)
			}
			return true
		})
		if first > 0 && (extra != 1 || s.Len() != keys+1) && failures.Add(1) < 5 {
			t.Errorf("snapshot %d after batch %d holds %d batch keys and Len %d", s.Version(), first, extra, s.Len())
		}
	}, func() {
		for n := uint64(1); n <= batches; n++ {
			tb.Batch(func(b Batch[string, uint64]) {
				for i := range keys {
					b.Store(key(i), n)
				}
				b.Store(fmt.Sprint("x", n), n)
				b.Delete(fmt.Sprint("x", n-1))
			})
		}
	})
}

// TestBatchAcrossGrowth grows the table inside a batch, after the batch
// has stored over every key: until the batch ends, Load and a snapshot
// must read the keys as they were before it, and no key it inserted.
func TestBatchAcrossGrowth(t *testing.T) {
	tb := New[string, uint64](0)
	key := func(i int) string { return fmt.Sprint("k", i) }
	for i := range 10 {
		tb.Store(key(i), 1)
	}
	grew := false
	tb.Batch(func(b Batch[string, uint64]) {
		for i := range 10 {
			b.Store(key(i), 2)
		}
		arr := tb.meta.Load().arr
		for i := 10; i < 100; i++ {
			b.Store(key(i), 2)
		}
		grew = tb.meta.Load().arr != arr
		s := tb.Snapshot()
		for i := range 100 {
			want, wantOK := uint64(1), i < 10
			if !wantOK {
				want = 0
			}
			if v, ok := tb.Load(key(i)); v != want || ok != wantOK {
				t.Fatalf("Load(%s) inside the batch = %d, %v; want %d, %v", key(i), v, ok, want, wantOK)
			}
			if v, ok := s.Get(key(i)); v != want || ok != wantOK {
				t.Fatalf("a snapshot inside the batch reads %s = %d, %v; want %d, %v", key(i), v, ok, want, wantOK)
			}
		}
		if s.Len() != 10 {
			t.Fatalf("a snapshot inside the batch has Len %d, want 10", s.Len())
		}
	})
	if !grew {
		t.Fatal("the table did not grow inside the batch")
	}
	if v, _ := tb.Load(key(99)); v != 2 || tb.Len() != 100 {
		t.Errorf("after the batch Load(k99) = %d and Len = %d, want 2 and 100", v, tb.Len())
	}
}

// TestTrimInsideABatch trims inside a batch, as a test or a careless
// caller may: readers of the published version must still read the values
// the batch replaced.
func TestTrimInsideABatch(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("k", 1)
	tb.Batch(func(b Batch[string, uint64]) {
		b.Store("k", 2)
		tb.Trim()
		if v, ok := tb.Load("k"); v != 1 || !ok {
			t.Errorf("Load inside the batch after a Trim = %d, %v; want 1, true", v, ok)
		}
		if v, ok := tb.Snapshot().Get("k"); v != 1 || !ok {
			t.Errorf("a snapshot inside the batch after a Trim reads %d, %v; want 1, true", v, ok)
		}
	})
	if v, _ := tb.Load("k"); v != 2 {
		t.Errorf("Load after the batch = %d, want 2", v)
	}
}

func TestBatchInsideABatchPanics(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("k", 1)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a Batch inside a Batch did not panic")
			}
		}()
		tb.Batch(func(Batch[string, uint64]) { tb.Batch(func(Batch[string, uint64]) {}) })
	}()
	if v, ok := tb.Load("k"); v != 1 || !ok || tb.Version() == 0 {
		t.Errorf("after the refused batch: Load = %d, %v at version %d; want 1, true", v, ok, tb.Version())
	}
}

// TestGrownBatchLetsGoOfTheOldArray checks that once a batch that grew
// the table is published, no meta leads to the old array.
func TestGrownBatchLetsGoOfTheOldArray(t *testing.T) {
	tb := New[string, uint64](0)
	old := tb.meta.Load().arr
	tb.Batch(func(b Batch[string, uint64]) {
		for i := range 100 {
			b.Store(fmt.Sprint("k", i), 1)
		}
	})
	for m := tb.meta.Load(); m != nil; m = m.prev.Load() {
		if m.arr == old {
			t.Fatal("a meta still leads to the array the batch grew out of")
		}
	}
}

// TestReinsertUnderLoads deletes and stores the same keys again and again
// while others Load them: a Load finds a key's value or nothing, never a
// zero it was not given.
func TestReinsertUnderLoads(t *testing.T) {
	const keys, rounds = 8, 20000
	tb := New[string, uint64](keys)
	key := func(i int) string { return fmt.Sprint("k", i) }
	var failures atomic.Int32
	whileWriting(2, func(r int) {
		for i := range keys {
			if v, ok := tb.Load(key(i)); ok && v == 0 && failures.Add(1) < 5 {
				t.Errorf("Load(%s) = 0, true; nothing stores 0", key(i))
			}
		}
		if r == 0 {
			tb.Snapshot() // now and then a version is frozen: Stores write the next
		}
	}, func() {
		for n := range uint64(rounds) {
			k := key(int(n % keys))
			tb.Delete(k)
			tb.Store(k, n+1)
		}
	})
}

// TestHistoryTableShrinks keeps older values of every key under a held
// snapshot, stores over every key again (in place, keeping nothing more),
// lets the snapshot go, and stores on without snapshots: the table of
// older values must shrink back, not keep its room for good, though no
// more older values are kept to make the writer trim.
func TestHistoryTableShrinks(t *testing.T) {
	keepRecords(t) // it counts, or frees, records
	const keys = 2000
	tb := New[string, uint64](0)
	key := func(i int) string { return fmt.Sprint("k", i) }
	for i := range keys {
		tb.Store(key(i), 1)
	}
	held := tb.Snapshot()
	for i := range keys {
		tb.Store(key(i), 2)
	}
	if n := len(tb.meta.Load().arr.older.Load().e); n < keys {
		t.Fatalf("the history table has %d entries for %d kept values", n, keys)
	}
	for i := range keys {
		tb.Store(key(i), 3) // in place: no more older values are kept
	}
	runtime.KeepAlive(held) // and no longer: only the trim once a pass finds it gone
	n := 0
	waitFor(t, func() bool {
		for range 5000 {
			tb.Store(key(n%keys), 3)
			n++
		}
		return len(tb.meta.Load().arr.older.Load().e) <= 64
	})
}

// TestUnlinkedValuesAreFreed holds a snapshot, overwrites all but one key
// one by one, then all of them in a batch, whose records share a block:
// the values of the single Stores, which no snapshot reads, must be freed
// though the block also holds the one record the snapshot reads.
func TestUnlinkedValuesAreFreed(t *testing.T) {
	keepRecords(t) // it counts, or frees, records
	const keys = 200
	tb := New[string, *[4]int](0) // not the tiny allocator's: a cleanup each
	key := func(i int) string { return fmt.Sprint("k", i) }
	for i := range keys {
		tb.Store(key(i), new([4]int))
	}
	held := tb.Snapshot()
	var freed atomic.Int32
	for i := 1; i < keys; i++ {
		v := new([4]int)
		runtime.AddCleanup(v, func(n *atomic.Int32) { n.Add(1) }, &freed)
		tb.Store(key(i), v)
	}
	tb.Batch(func(b Batch[string, *[4]int]) {
		for i := range keys {
			b.Store(key(i), new([4]int))
		}
	})
	waitFor(t, func() bool { tb.Trim(); return freed.Load() == keys-1 })
	if v, ok := held.Get(key(0)); v == nil || !ok {
		t.Errorf("the held snapshot reads %v, %v at %s", v, ok, key(0))
	}
}

// TestStampsAgreeWithTheirVersions stores, under readers taking
// snapshots, the number of each write both as the value of one key and as
// the stamp of the version it writes, in place or into the next version,
// alone or in a batch (which stamps the version it publishes once), and
// with plain Stores in between that must keep the stamp. Every snapshot
// must report the stamp of the contents it holds, and Table.Stamp must
// never go back.
func TestStampsAgreeWithTheirVersions(t *testing.T) {
	tb := New[string, uint64](0)
	tb.Store("n", 0)
	var bad atomic.Value
	lastStamp := make([]uint64, 2)
	whileWriting(2, func(r int) {
		st := tb.Stamp()
		if st < lastStamp[r] {
			bad.Store(fmt.Sprintf("Stamp went back from %d to %d", lastStamp[r], st))
		}
		lastStamp[r] = st
		s := tb.Snapshot()
		// A deleted n holds a stamp of the writes numbered 3 modulo 7.
		if v, ok := s.Get("n"); ok && v != s.Stamp() || !ok && s.Stamp()%7 != 3 {
			bad.Store(fmt.Sprintf("a snapshot holds n = %d, %v with stamp %d", v, ok, s.Stamp()))
		}
	}, func() {
		for i := uint64(1); i <= 20000; i++ {
			switch i % 7 {
			case 0:
				tb.Batch(func(b Batch[string, uint64]) {
					b.Store("n", i)
					b.Store(fmt.Sprint("k", i%100), i)
					b.Stamp(i)
				})
			case 1, 2:
				tb.StoreStamped("n", i, i)
				tb.Store(fmt.Sprint("k", i%100), i) // keeps the stamp
			case 3:
				tb.DeleteStamped("n", i)
				tb.StoreStamped("n", i, i)
			default:
				tb.StoreStamped("n", i, i)
			}
		}
	})
	if msg := bad.Load(); msg != nil {
		t.Fatal(msg)
	}
	if got := tb.Stamp(); got != 20000 {
		t.Errorf("Stamp = %d at the end, want 20000", got)
	}
}

// TestSnapshotReadsTheStampOfItsVersion makes the writer publish two
// versions while a Snapshot is between freezing a version and reading
// its stamp, so that the stamp it finds at the version's place is a later
// version's: the Snapshot must take the version again, and report the
// stamp of what it holds.
func TestSnapshotReadsTheStampOfItsVersion(t *testing.T) {
	tb := New[string, uint64](0)
	tb.StoreStamped("n", 1, 1)
	tb.Snapshot() // freezes the version of n = 1
	tb.last.Store(nil)
	afterFreeze = func() {
		afterFreeze = nil
		tb.StoreStamped("n", 2, 2) // the next version
		tb.Snapshot()              // freezes it
		tb.StoreStamped("n", 3, 3) // the one after, at the first's place
	}
	t.Cleanup(func() { afterFreeze = nil })
	s := tb.Snapshot()
	if v, _ := s.Get("n"); v != s.Stamp() {
		t.Errorf("a snapshot holds n = %d with stamp %d", v, s.Stamp())
	}
}
