package hamt

import (
	"maps"
	"slices"
	"testing"
)

// FuzzOps decodes data as a hash choice followed by three-byte operations
// (opcode, key, value) and checks Map and Txn against a Go map. Keys come
// from a small range so that updates, deletes of present keys and, under the
// degenerate hashes, collisions are common.
func FuzzOps(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 1, 1, 0, 2, 2, 2, 1, 0})
	f.Add([]byte{1, 0, 1, 1, 0, 2, 2, 0, 3, 3, 2, 1, 0, 2, 2, 0, 2, 3, 0})
	f.Add([]byte{2, 0, 5, 1, 0, 10, 2, 0, 15, 3, 2, 10, 0, 2, 5, 0})
	f.Add([]byte{3, 4, 0, 0, 0, 1, 1, 0, 8, 2, 2, 1, 0, 3, 8, 0, 4, 0, 0, 5, 0, 0, 0, 1, 9})
	f.Add([]byte{4, 0, 1, 1, 0, 4, 4, 4, 0, 0, 0, 7, 7, 2, 1, 0, 2, 4, 0, 4, 0, 0, 3, 7, 0})
	f.Add([]byte{3, 4, 0, 0, 0, 1, 1, 0, 2, 2, 0, 3, 3, 2, 1, 0, 2, 2, 0, 2, 3, 0, 2, 0, 0, 4, 0, 0})
	f.Add(slices.Repeat([]byte{0, 13, 200, 1, 77, 1, 2, 13, 0, 5, 0, 0}, 40))
	f.Add(slices.Repeat([]byte{1, 19, 3, 4, 0, 0, 0, 55, 9, 2, 19, 0, 4, 0, 0}, 30))

	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 {
			useHash(t, hashes[int(data[0])%len(hashes)].f)
			data = data[1:]
		}
		var m Map[int, int]
		want := map[int]int{}
		var tx *Txn[int, int]
		var txBase snapshot
		var kept []snapshot

		for ; len(data) >= 3; data = data[3:] {
			k, v := int(data[1]%64), int(data[2])
			switch data[0] % 6 {
			case 0, 1:
				if tx != nil {
					tx.Set(k, v)
				} else {
					m = m.Set(k, v)
				}
				want[k] = v
			case 2:
				_, had := want[k]
				var ok bool
				if tx != nil {
					ok = tx.Delete(k)
				} else {
					prev := m
					m, ok = m.Delete(k)
					if !ok && !m.Same(prev) {
						t.Fatal("Delete of absent key made a new version")
					}
				}
				if ok != had {
					t.Fatalf("Delete(%d) = %v, want %v", k, ok, had)
				}
				delete(want, k)
			case 3:
				var got int
				var ok bool
				if tx != nil {
					got, ok = tx.Get(k)
				} else {
					got, ok = m.Get(k)
				}
				if w, had := want[k]; ok != had || got != w {
					t.Fatalf("Get(%d) = %d, %v; want %d, %v", k, got, ok, w, had)
				}
			case 4:
				if tx == nil {
					tx = m.Txn()
					txBase = snapshot{m, maps.Clone(want)}
				} else {
					m = tx.Commit()
					tx = nil
					checkMap(t, txBase.m, txBase.want)
				}
			case 5:
				if tx == nil {
					kept = append(kept, snapshot{m, maps.Clone(want)})
				}
			}
			n := m.Len()
			if tx != nil {
				n = tx.Len()
			}
			if n != len(want) {
				t.Fatalf("Len = %d, want %d", n, len(want))
			}
		}
		if tx != nil {
			m = tx.Commit()
		}
		checkMap(t, m, want)
		for _, s := range kept {
			checkMap(t, s.m, s.want)
		}
		keys := slices.Sorted(maps.Keys(want))
		if !sameShape(m, buildMap(keys, func(k int) int { return want[k] })) {
			t.Fatal("shape differs from a fresh build of the same content")
		}
	})
}
