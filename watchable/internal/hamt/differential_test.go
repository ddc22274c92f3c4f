package hamt

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDifferential drives Map and Txn with random operations next to a plain
// Go map, under the real hash and the degenerate ones, and checks that every
// version kept along the way still holds exactly what it held when made.
func TestDifferential(t *testing.T) {
	for _, hf := range hashes {
		t.Run(hf.name, func(t *testing.T) {
			useHash(t, hf.f)
			for seed := range uint64(4) {
				differential(t, rand.New(rand.NewPCG(seed, 0x4a4d)), 3000, 400)
			}
		})
	}
}

type snapshot struct {
	m    Map[int, int]
	want map[int]int
}

func differential(t *testing.T, r *rand.Rand, steps, keySpace int) {
	t.Helper()
	var m Map[int, int]
	want := map[int]int{}
	var kept []snapshot

	for step := range steps {
		k := r.IntN(keySpace)
		switch p := r.IntN(100); {
		case p < 45:
			v := r.Int()
			m = m.Set(k, v)
			want[k] = v
		case p < 75:
			prev := m
			var ok bool
			m, ok = m.Delete(k)
			_, had := want[k]
			if ok != had {
				t.Fatalf("step %d: Delete(%d) = %v, want %v", step, k, ok, had)
			}
			if !ok && !m.Same(prev) {
				t.Fatalf("step %d: Delete of absent key made a new version", step)
			}
			delete(want, k)
		case p < 85:
			got, ok := m.Get(k)
			w, had := want[k]
			if ok != had || got != w {
				t.Fatalf("step %d: Get(%d) = %v, %v; want %v, %v", step, k, got, ok, w, had)
			}
		default:
			before := snapshot{m, maps.Clone(want)}
			m = randomTxn(t, r, m, want, keySpace)
			checkMap(t, before.m, before.want)
		}
		if m.Len() != len(want) {
			t.Fatalf("step %d: Len = %d, want %d", step, m.Len(), len(want))
		}
		if step%97 == 0 {
			kept = append(kept, snapshot{m, maps.Clone(want)})
		}
		if step%500 == 0 {
			checkMap(t, m, want)
		}
	}
	checkMap(t, m, want)
	for _, s := range kept {
		checkMap(t, s.m, s.want)
	}
	keys := slices.Collect(maps.Keys(want))
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	if !sameShape(m, buildMap(keys, func(k int) int { return want[k] })) {
		t.Fatal("trie shape after random history differs from a fresh build")
	}
}

// randomTxn applies a random batch through a Txn, checking its reads against
// want as it goes, and returns the committed map. want is updated in place.
func randomTxn(t *testing.T, r *rand.Rand, m Map[int, int], want map[int]int, keySpace int) Map[int, int] {
	t.Helper()
	tx := m.Txn()
	for range r.IntN(60) + 1 {
		k := r.IntN(keySpace)
		switch p := r.IntN(10); {
		case p < 5:
			v := r.Int()
			tx.Set(k, v)
			want[k] = v
		case p < 8:
			_, had := want[k]
			if ok := tx.Delete(k); ok != had {
				t.Fatalf("Txn.Delete(%d) = %v, want %v", k, ok, had)
			}
			delete(want, k)
		default:
			got, ok := tx.Get(k)
			w, had := want[k]
			if ok != had || got != w {
				t.Fatalf("Txn.Get(%d) = %v, %v; want %v, %v", k, got, ok, w, had)
			}
		}
		if tx.Len() != len(want) {
			t.Fatalf("Txn.Len = %d, want %d", tx.Len(), len(want))
		}
	}
	return tx.Commit()
}
