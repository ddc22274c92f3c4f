package hamt

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCanonicalShape checks that the trie's shape depends only on its
// contents: growing a map past some content and deleting back to it, through
// Set/Delete or a Txn, gives the same structure as building that content
// directly in another order.
func TestCanonicalShape(t *testing.T) {
	for _, hf := range hashes {
		t.Run(hf.name, func(t *testing.T) {
			useHash(t, hf.f)
			r := rand.New(rand.NewPCG(7, 11))
			for _, size := range []int{0, 1, 2, 3, 33, 500, 2000} {
				keep := r.Perm(size * 2)[:size]
				extra := make([]int, size+50)
				for i := range extra {
					extra[i] = -1 - i
				}
				val := func(k int) int { return k * 3 }

				want := buildMap(keep, val)
				shuffled := slices.Clone(keep)
				r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })

				// Interleave the extra keys, then delete them in random order.
				all := append(slices.Clone(shuffled), extra...)
				r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
				m := buildMap(all, val)
				r.Shuffle(len(extra), func(i, j int) { extra[i], extra[j] = extra[j], extra[i] })
				for _, k := range extra {
					m, _ = m.Delete(k)
				}
				if err := invariants(m); err != nil {
					t.Fatalf("size %d: %v", size, err)
				}
				if !sameShape(m, want) {
					t.Fatalf("size %d: Set/Delete history changed the shape", size)
				}

				tx := Map[int, int]{}.Txn()
				for _, k := range all {
					tx.Set(k, val(k))
				}
				for _, k := range extra {
					tx.Delete(k)
				}
				viaTxn := tx.Commit()
				if err := invariants(viaTxn); err != nil {
					t.Fatalf("size %d: Txn: %v", size, err)
				}
				if !sameShape(viaTxn, want) {
					t.Fatalf("size %d: Txn history changed the shape", size)
				}

				// And all the way down to empty.
				for i, k := range shuffled {
					m, _ = m.Delete(k)
					if len(shuffled)-i > 40 && i%101 != 0 {
						continue // checking every step would be quadratic
					}
					if err := invariants(m); err != nil {
						t.Fatalf("size %d, emptying: %v", size, err)
					}
				}
				if !m.Same(Map[int, int]{}) {
					t.Fatalf("size %d: map emptied by Delete is not the zero Map", size)
				}
			}
		})
	}
}

// sameShape must itself tell different shapes apart, or the test above would
// prove nothing.
func TestSameShapeDetectsDifferences(t *testing.T) {
	a := buildMap([]int{1, 2, 3}, func(k int) int { return k })
	if !sameShape(a, buildMap([]int{3, 2, 1}, func(k int) int { return k })) {
		t.Fatal("equal contents reported different")
	}
	if sameShape(a, buildMap([]int{1, 2, 3}, func(k int) int { return -k })) {
		t.Fatal("different values reported same")
	}
	if sameShape(a, buildMap([]int{1, 2, 4}, func(k int) int { return k })) {
		t.Fatal("different keys reported same")
	}
	// Same content but a non-canonical tree: a child holding one entry.
	h := func(k int) uint64 { return uint64(k) << 5 }
	useHash(t, h)
	canon := buildMap([]int{1}, func(k int) int { return k })
	leaf := &node[int, int]{dataMap: bitpos(h(1), 5)}
	leaf.setEntries([]entry[int, int]{{1, 1}})
	odd := Map[int, int]{size: 1, root: build[int, int](0, 0, 1, nil, []*node[int, int]{leaf})}
	if sameShape(canon, odd) {
		t.Fatal("non-canonical tree reported same")
	}
	if invariants(odd) == nil {
		t.Fatal("invariants accepted a single-entry child")
	}
}
