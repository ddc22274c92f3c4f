package hamt

import (
	"maps"
	"math/rand/v2"
	"sync"
	"testing"
)

// diffOf runs m.Diff(old) and returns what it reported per key, failing on
// a key reported twice.
func diffOf(tb testing.TB, m, old Map[int, int]) map[int][2]*int {
	tb.Helper()
	got := map[int][2]*int{}
	m.Diff(old, func(k, ov int, hadOld bool, nv int, hasNew bool) bool {
		if _, dup := got[k]; dup {
			tb.Fatalf("Diff reported key %d twice", k)
		}
		var r [2]*int
		if hadOld {
			r[0] = &ov
		}
		if hasNew {
			r[1] = &nv
		}
		got[k] = r
		return true
	})
	return got
}

// checkDiff compares m.Diff(old) with the difference of the two models: it
// must report every key whose presence or value differs, with the right
// values, and may report keys present in both with equal values.
func checkDiff(tb testing.TB, m, old Map[int, int], want, wantOld map[int]int) {
	tb.Helper()
	got := diffOf(tb, m, old)
	for k, r := range got {
		ov, hadOld := wantOld[k]
		nv, hasNew := want[k]
		if (r[0] != nil) != hadOld || (r[0] != nil && *r[0] != ov) {
			tb.Fatalf("Diff reported key %d with old %v, want %d (present %v)", k, deref(r[0]), ov, hadOld)
		}
		if (r[1] != nil) != hasNew || (r[1] != nil && *r[1] != nv) {
			tb.Fatalf("Diff reported key %d with new %v, want %d (present %v)", k, deref(r[1]), nv, hasNew)
		}
		if !hadOld && !hasNew {
			tb.Fatalf("Diff reported key %d, in neither map", k)
		}
	}
	for k, nv := range want {
		if ov, had := wantOld[k]; (!had || ov != nv) && !reported(got, k) {
			tb.Fatalf("Diff missed key %d: %d (present %v) -> %d", k, ov, had, nv)
		}
	}
	for k, ov := range wantOld {
		if _, has := want[k]; !has && !reported(got, k) {
			tb.Fatalf("Diff missed deleted key %d (was %d)", k, ov)
		}
	}
}

func deref(p *int) any {
	if p == nil {
		return "absent"
	}
	return *p
}

func reported(got map[int][2]*int, k int) bool {
	_, ok := got[k]
	return ok
}

// TestDiff drives a Map changed in place through Owners, as a
// subscriber's view is, and one changed by plain Set and Delete, with
// random writes under the real hash and the degenerate ones, keeps
// versions along the way, and diffs each new version against earlier ones,
// against the empty map, and the other way round.
func TestDiff(t *testing.T) {
	for _, hf := range hashes {
		t.Run(hf.name, func(t *testing.T) {
			useHash(t, hf.f)
			for seed := range uint64(3) {
				r := rand.New(rand.NewPCG(seed, 0xd1ff))
				diffOwned(t, r, 1500, 300)
				diffPersistent(t, r, 1500, 300)
			}
		})
	}
}

type diffVersion struct {
	m    Map[int, int]
	want map[int]int
}

func diffAgainst(t *testing.T, step int, cur diffVersion, kept []diffVersion) {
	t.Helper()
	var empty Map[int, int]
	checkDiff(t, cur.m, empty, cur.want, nil)
	checkDiff(t, empty, cur.m, nil, cur.want)
	checkDiff(t, cur.m, cur.m, cur.want, cur.want)
	if n := len(diffOf(t, cur.m, cur.m)); n != 0 {
		t.Fatalf("step %d: a version diffed against itself reported %d keys", step, n)
	}
	for _, o := range kept {
		checkDiff(t, cur.m, o.m, cur.want, o.want)
		checkDiff(t, o.m, cur.m, o.want, cur.want)
	}
}

// diffOwned changes a map with SetOwned and DeleteOwned, and now and then
// a Txn, and takes a new Owner whenever it keeps a version, as a
// subscription does when its snapshot is taken: a kept version never
// changes, which diffAgainst's diffs against it check.
func diffOwned(t *testing.T, r *rand.Rand, steps, keySpace int) {
	t.Helper()
	var m Map[int, int]
	own := NewOwner()
	want := map[int]int{}
	var kept []diffVersion
	for step := range steps {
		k := r.IntN(keySpace)
		switch p := r.IntN(100); {
		case p < 50:
			v := r.IntN(4) // few values, so that equal ones recur
			m = m.SetOwned(own, k, v, Hash(k))
			want[k] = v
		case p < 75:
			var found bool
			m, found = m.DeleteOwned(own, k, Hash(k))
			if _, had := want[k]; found != had {
				t.Fatalf("step %d: DeleteOwned(%d) = %v, want %v", step, k, found, had)
			}
			delete(want, k)
		case p < 90:
			tx := m.Txn()
			for range r.IntN(8) {
				k := r.IntN(keySpace)
				if r.IntN(3) == 0 {
					tx.Delete(k)
					delete(want, k)
				} else {
					v := r.IntN(4)
					tx.Set(k, v)
					want[k] = v
				}
			}
			m = tx.Commit()
		default:
			cur := diffVersion{m, maps.Clone(want)}
			for _, o := range kept {
				if !maps.Equal(toGoMap(o.m), o.want) {
					t.Fatalf("step %d: a kept version changed", step)
				}
			}
			diffAgainst(t, step, cur, kept)
			kept = append(kept, cur)
			if len(kept) > 6 {
				kept = kept[1:]
			}
			own = NewOwner() // cur is kept: no later change may reach its nodes
		}
	}
}

func diffPersistent(t *testing.T, r *rand.Rand, steps, keySpace int) {
	t.Helper()
	var m Map[int, int]
	want := map[int]int{}
	var kept []diffVersion
	for step := range steps {
		k := r.IntN(keySpace)
		switch p := r.IntN(100); {
		case p < 55:
			v := r.IntN(4)
			m = m.Set(k, v)
			want[k] = v
		case p < 85:
			m, _ = m.Delete(k)
			delete(want, k)
		default:
			cur := diffVersion{m, maps.Clone(want)}
			diffAgainst(t, step, cur, kept)
			kept = append(kept, cur)
			if len(kept) > 6 {
				kept = kept[1:]
			}
		}
	}
}

// TestDiffSkipsSharedSubtrees checks that Diff visits only the paths a
// write changed: three owned changes to a large map, as a subscriber's view
// takes them, report a handful of keys, not the map.
func TestDiffSkipsSharedSubtrees(t *testing.T) {
	// The most nodes a path can hold: one per level of five hash bits, and
	// a collision node below them.
	const maxDepth = (hashBits+bitsPerLevel-1)/bitsPerLevel + 1
	tx := Map[int, int]{}.Txn()
	for k := range 100_000 {
		tx.Set(k, k)
	}
	before := tx.Commit()
	own := NewOwner()
	after := before.SetOwned(own, 42, -1, Hash(42))
	after = after.SetOwned(own, 100_000, 7, Hash(100_000))
	after, _ = after.DeleteOwned(own, 7, Hash(7))
	if v, _ := before.Get(42); v != 42 || before.Len() != 100_000 {
		t.Fatalf("owned changes reached the map they started from: Get(42) = %d, Len %d", v, before.Len())
	}

	got := diffOf(t, after, before)
	// The three keys, and at most the entries of the nodes on their paths
	// that were copied along with them.
	if len(got) < 3 || len(got) > 3*(fanout+1)*maxDepth {
		t.Fatalf("Diff of three writes into 100,000 entries reported %d keys", len(got))
	}
	for _, k := range []int{42, 100_000, 7} {
		if !reported(got, k) {
			t.Errorf("Diff missed key %d", k)
		}
	}
}

// TestDiffStops checks that Diff stops as soon as fn returns false.
func TestDiffStops(t *testing.T) {
	for _, hf := range hashes {
		t.Run(hf.name, func(t *testing.T) {
			useHash(t, hf.f)
			var m Map[int, int]
			for k := range 500 {
				m = m.Set(k, k)
			}
			var other Map[int, int]
			for k := 250; k < 750; k++ {
				other = other.Set(k, -k)
			}
			for stopAt := range 20 {
				calls := 0
				done := m.Diff(other, func(int, int, bool, int, bool) bool {
					calls++
					return calls <= stopAt
				})
				if done || calls != stopAt+1 {
					t.Fatalf("stopping at call %d: Diff = %v after %d calls", stopAt+1, done, calls)
				}
			}
		})
	}
}

// TestDiffConcurrentOwned has a writer change a map in place through an
// Owner, as a subscription changes its view, and hand out a version now
// and then, taking a new Owner each time, while another goroutine diffs
// the versions it received against one another and checks that none has
// changed since it was handed out: values of a word, pointers and strings,
// and under the degenerate hashes. Run with -race: no change the writer
// makes after handing a version out may write into that version's nodes.
func TestDiffConcurrentOwned(t *testing.T) {
	for _, hf := range hashes {
		t.Run("int/"+hf.name, func(t *testing.T) {
			useHash(t, hf.f) // restored after the writer has stopped
			diffConcurrentOwned(t, func(i int) int { return i }, func(v int) int { return v })
		})
	}
	t.Run("pointer", func(t *testing.T) {
		diffConcurrentOwned(t, func(i int) *int { return &i }, func(v *int) int { return *v })
	})
	t.Run("string", func(t *testing.T) {
		diffConcurrentOwned(t, func(i int) string { return string(rune('a' + i%26)) }, func(v string) int { return int(v[0]) })
	})
}

func diffConcurrentOwned[V any](t *testing.T, mk func(int) V, num func(V) int) {
	const keySpace, versions, kept, between = 300, 200, 4, 64
	plain := func(m Map[int, V]) map[int]int {
		out := map[int]int{}
		for k, v := range m.All() {
			out[k] = num(v)
		}
		return out
	}
	type handed struct {
		m    Map[int, V]
		want map[int]int
	}
	ch := make(chan handed)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ch)
		r := rand.New(rand.NewPCG(1, 2))
		var m Map[int, V]
		want := map[int]int{}
		own := NewOwner()
		for range versions {
			for range r.IntN(2 * between) {
				k := r.IntN(keySpace)
				switch p := r.IntN(100); {
				case p < 60:
					v := mk(r.IntN(1000))
					m = m.SetOwned(own, k, v, Hash(k))
					want[k] = num(v)
				case p < 85:
					m, _ = m.DeleteOwned(own, k, Hash(k))
					delete(want, k)
				default:
					tx := m.Txn()
					for range r.IntN(8) {
						if k := r.IntN(keySpace); r.IntN(3) == 0 {
							tx.Delete(k)
							delete(want, k)
						} else {
							v := mk(r.IntN(1000))
							tx.Set(k, v)
							want[k] = num(v)
						}
					}
					m = tx.Commit()
				}
			}
			ch <- handed{m, maps.Clone(want)}
			own = NewOwner() // m has been seen: its nodes are frozen for good
		}
	}()
	defer wg.Wait()

	diffs := func(m, old handed) {
		t.Helper()
		reported := map[int]bool{}
		m.m.Diff(old.m, func(k int, ov V, hadOld bool, nv V, hasNew bool) bool {
			o, had := old.want[k]
			n, has := m.want[k]
			if reported[k] || hadOld != had || hasNew != has || had && num(ov) != o || has && num(nv) != n {
				t.Errorf("Diff reported key %d wrongly", k)
				return false
			}
			reported[k] = true
			return true
		})
		for k, n := range m.want {
			if o, had := old.want[k]; (!had || o != n) && !reported[k] {
				t.Errorf("Diff missed key %d", k)
				return
			}
		}
		for k := range old.want {
			if _, has := m.want[k]; !has && !reported[k] {
				t.Errorf("Diff missed deleted key %d", k)
				return
			}
		}
	}
	var recent []handed
	for cur := range ch {
		if t.Failed() {
			continue // let the writer finish
		}
		if !maps.Equal(plain(cur.m), cur.want) {
			t.Errorf("a version handed out does not hold what the writer made")
			continue
		}
		for _, o := range recent {
			if !maps.Equal(plain(o.m), o.want) {
				t.Errorf("a version changed after it was handed out")
			}
			diffs(cur, o)
			diffs(o, cur)
		}
		if recent = append(recent, cur); len(recent) > kept {
			recent = recent[1:]
		}
	}
}
