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
