package watchable

import (
	"math/rand/v2"
	"testing"
)

// TestPendingIndexModel drives a pendingIndex the way a window does (add a
// key at the end, forget one by moving the last into its place) with
// hashes drawn from a few values, so that probes collide, chains wrap
// around the table's end and removals must move entries back, and checks
// every key against a Go map after every step.
func TestPendingIndexModel(t *testing.T) {
	for _, hashes := range []uint64{1, 3, 17, 1 << 40} {
		rng := rand.New(rand.NewPCG(hashes, 7))
		hashOf := func(k int) uint64 {
			// The low bits place a key; equal low bits with different
			// high bits must still be told apart by the key itself.
			h := uint64(k) % hashes
			return h<<32 | h | 0xffff_fff0 // homes near the table's end
		}
		var x pendingIndex
		var updates []Update[int, int]
		pos := map[int]int{} // the model: key -> position in updates
		for step := range 5000 {
			k := rng.IntN(200)
			p, slot, found := 0, 0, false
			if x.n > 0 {
				p, slot, found = lookup(&x, updates, k, hashOf(k))
			} else {
				p, found = pos[k]
			}
			if want, ok := pos[k]; found != ok || (ok && p != want) {
				t.Fatalf("hashes %d, step %d: lookup(%d) = %d, %v; want %d, %v", hashes, step, k, p, found, want, ok)
			}
			switch {
			case !found: // add at the end
				pos[k] = len(updates)
				updates = append(updates, Update[int, int]{Key: k})
				if x.n > 0 {
					x.insert(slot, hashOf(k), pos[k])
				} else if len(updates) > smallWindow {
					for i, u := range updates {
						x.add(hashOf(u.Key), i)
					}
				}
			case rng.IntN(2) == 0: // forget, as subscription.forget does
				last := len(updates) - 1
				if x.n > 0 {
					x.remove(slot)
					if p != last {
						lk := updates[last].Key
						_, s, ok := lookup(&x, updates, lk, hashOf(lk))
						if !ok {
							t.Fatalf("hashes %d, step %d: key %d lost after removing %d", hashes, step, lk, k)
						}
						x.setPos(s, p)
					}
				}
				updates[p] = updates[last]
				pos[updates[p].Key] = p
				updates = updates[:last]
				delete(pos, k)
				if x.n > 0 && len(updates) <= smallWindow {
					x.reset()
				}
			}
			if x.n != 0 && x.n != len(updates) {
				t.Fatalf("hashes %d, step %d: index holds %d keys, window %d", hashes, step, x.n, len(updates))
			}
			if 2*x.n > len(x.slots) {
				t.Fatalf("hashes %d, step %d: %d keys in %d slots", hashes, step, x.n, len(x.slots))
			}
		}
		for k, want := range pos {
			if x.n == 0 {
				break
			}
			if p, _, ok := lookup(&x, updates, k, hashOf(k)); !ok || p != want {
				t.Fatalf("hashes %d: key %d at %d, %v; want %d", hashes, k, p, ok, want)
			}
		}
	}
}

// A table that a large window grew is kept, uncleared, as the spare: small
// windows after it use small tables, and the next large window moves to it
// and finds its own keys only. A table past 2*maxKeptWindow slots is not
// kept.
func TestPendingIndexKeepsLargeTableAsSpare(t *testing.T) {
	var x pendingIndex
	window := func(first, n int) []Update[int, int] {
		t.Helper()
		updates := make([]Update[int, int], n)
		for i := range updates {
			updates[i] = Update[int, int]{Key: first + i}
			x.add(hashOfInt(first+i), i)
		}
		for i, u := range updates {
			if p, _, ok := lookup(&x, updates, u.Key, hashOfInt(u.Key)); !ok || p != i {
				t.Fatalf("window from %d: key %d at %d, %v; want %d", first, u.Key, p, ok, i)
			}
		}
		return updates
	}

	window(0, 2000)
	large := &x.slots[0]
	if len(x.slots) <= maxReusedIndex {
		t.Fatalf("2000 keys in %d slots; the test needs more than %d", len(x.slots), maxReusedIndex)
	}
	x.reset()
	if x.slots != nil || len(x.spare) == 0 || &x.spare[0] != large {
		t.Fatalf("after a large window: slots %d, spare %d; want none, and the large table as the spare", len(x.slots), len(x.spare))
	}

	window(10000, 20)
	if len(x.slots) > maxReusedIndex || &x.spare[0] != large {
		t.Fatalf("a small window uses %d slots, and the spare changed: %v", len(x.slots), &x.spare[0] != large)
	}
	x.reset()

	updates := window(20000, 1500)
	if len(x.slots) == 0 || &x.slots[0] != large || x.spare != nil {
		t.Fatalf("the next large window did not move to the spare: %d slots, spare %d", len(x.slots), len(x.spare))
	}
	for k := range 2000 { // the first window's keys, left in the spare uncleared
		if p, _, ok := lookup(&x, updates, k, hashOfInt(k)); ok {
			t.Fatalf("key %d of an earlier window found at %d", k, p)
		}
	}
	x.reset()

	window(0, maxKeptWindow+1)
	x.reset()
	if x.slots != nil || len(x.spare) > 2*maxKeptWindow {
		t.Fatalf("a table of %d slots was kept as the spare; at most %d are", len(x.spare), 2*maxKeptWindow)
	}
}

// hashOfInt spreads small ints over the hash space, as hamt.Hash does keys.
func hashOfInt(k int) uint64 { return uint64(k+1) * 0x9e3779b97f4a7c15 }

// The befores of a window are kept up to maxKeptWindow entries, and for
// large values up to maxKeptBefores bytes, but never less than
// maxReusedIndex entries.
func TestKeptBeforesBounds(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
		got  bool
	}{
		{"int, maxKeptWindow", true, keptBefores(make([]before[int], 0, maxKeptWindow))},
		{"int, maxKeptWindow+1", false, keptBefores(make([]before[int], 0, maxKeptWindow+1))},
		{"large, maxKeptWindow", false, keptBefores(make([]before[[256]byte], 0, maxKeptWindow))},
		{"large, maxReusedIndex", true, keptBefores(make([]before[[256]byte], 0, maxReusedIndex))},
		{"large, maxReusedIndex+1", false, keptBefores(make([]before[[256]byte], 0, maxReusedIndex+1))},
	} {
		if c.got != c.want {
			t.Errorf("%s: kept %v, want %v", c.name, c.got, c.want)
		}
	}
}
