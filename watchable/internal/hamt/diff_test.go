package hamt

import (
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"
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

// TestDiff drives a Live map and a persistent Map with random writes under
// the real hash and the degenerate ones, freezes versions along the way,
// and diffs each new version against earlier ones, against the empty map,
// and the other way round.
func TestDiff(t *testing.T) {
	for _, hf := range hashes {
		t.Run(hf.name, func(t *testing.T) {
			useHash(t, hf.f)
			for seed := range uint64(3) {
				r := rand.New(rand.NewPCG(seed, 0xd1ff))
				diffLive(t, r, 1500, 300)
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

func diffLive(t *testing.T, r *rand.Rand, steps, keySpace int) {
	t.Helper()
	var l Live[int, int]
	want := map[int]int{}
	var stamp uint64
	var kept []diffVersion
	for step := range steps {
		k := r.IntN(keySpace)
		switch p := r.IntN(100); {
		case p < 50:
			v := r.IntN(4) // few values, so that equal ones recur
			stamp++
			c := l.Find(k)
			c.Set(v, stamp)
			want[k] = v
		case p < 75:
			c := l.Find(k)
			if _, ok := c.Value(); ok {
				stamp++
				c.Delete(stamp)
				delete(want, k)
			}
		case p < 90:
			tx := l.Txn()
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
			stamp++
			l.Apply(tx, stamp)
		default:
			m, _ := l.Freeze()
			cur := diffVersion{m, maps.Clone(want)}
			diffAgainst(t, step, cur, kept)
			kept = append(kept, cur)
			if len(kept) > 6 {
				kept = kept[1:]
			}
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
// write changed: one Store into a large map reports a handful of keys, not
// the map.
func TestDiffSkipsSharedSubtrees(t *testing.T) {
	var l Live[int, int]
	tx := l.Txn()
	for k := range 100_000 {
		tx.Set(k, k)
	}
	l.Apply(tx, 1)
	before, _ := l.Freeze()
	c := l.Find(42)
	c.Set(-1, 2)
	c = l.Find(100_000)
	c.Set(7, 3)
	c = l.Find(7)
	c.Delete(4)
	after, _ := l.Freeze()

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

// TestDiffFreezeDuringAChange diffs a version that Freeze settled with a
// change in place under way (see TestLiveFreezeSettlesAChangeUnderWay)
// against the versions before and after it: the settled change is in it,
// and the writer's changes after it are not.
func TestDiffFreezeDuringAChange(t *testing.T) {
	var l Live[int, int]
	want := map[int]int{}
	var stamp uint64
	set := func(k, v int) {
		stamp++
		c := l.Find(k)
		c.Set(v, stamp)
		want[k] = v
	}
	for i := range 100 {
		set(i, i)
	}
	before, _ := l.Freeze()
	wantBefore := maps.Clone(want)
	set(42, -42) // copies the path, which the writer then owns
	c := l.Find(42)
	v, n := c.v, c.nodes[c.depth]
	if n.owner != v.epoch {
		t.Fatalf("the node holding key 42 is not the current version's to change in place")
	}
	stamp++
	if !v.begin(intent{Put: Put{word: (*uint64)(unsafe.Pointer(&n.entries()[c.pos].val)), val: 4242}, size: 100, stamp: stamp}) {
		t.Fatalf("begin refused a change to an unfrozen version")
	}
	mid, _ := l.Freeze() // the writer is "preempted" before finish
	v.finish()
	want[42] = 4242
	wantMid := maps.Clone(want)
	set(42, 7)
	set(43, -43)
	set(1000, 1)
	after, _ := l.Freeze()

	checkDiff(t, mid, before, wantMid, wantBefore)
	checkDiff(t, before, mid, wantBefore, wantMid)
	checkDiff(t, after, mid, want, wantMid)
	checkDiff(t, mid, after, wantMid, want)
	checkDiff(t, after, before, want, wantBefore)
	checkMap(t, mid, wantMid)
}

// TestDiffConcurrentFreeze freezes versions of a Live map on one goroutine
// while another changes it in place, with single-word stores of ints (under
// the degenerate hashes too) and pointers and node replacement for
// strings, and checks every frozen
// version against the copy taken when it was frozen and Diff between the
// recent ones against those copies. Run with -race: Diff must read only
// what no writer changes any more.
func TestDiffConcurrentFreeze(t *testing.T) {
	for _, hf := range hashes {
		t.Run("int/"+hf.name, func(t *testing.T) {
			useHash(t, hf.f) // restored after the writer has stopped
			diffConcurrentFreeze(t, func(i int) int { return i }, func(v int) int { return v })
		})
	}
	t.Run("pointer", func(t *testing.T) {
		diffConcurrentFreeze(t, func(i int) *int { return &i }, func(v *int) int { return *v })
	})
	t.Run("string", func(t *testing.T) {
		diffConcurrentFreeze(t, func(i int) string { return string(rune('a' + i%26)) }, func(v string) int { return int(v[0]) })
	})
}

func diffConcurrentFreeze[V any](t *testing.T, mk func(int) V, num func(V) int) {
	const keySpace, freezes, kept, between = 300, 200, 4, 64
	plain := func(m Map[int, V]) map[int]int {
		out := map[int]int{}
		for k, v := range m.All() {
			out[k] = num(v)
		}
		return out
	}
	var l Live[int, V]
	var wg sync.WaitGroup
	var writes atomic.Int64 // how many changes the writer has made
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer writes.Store(math.MaxInt64) // nothing more to wait for
		r := rand.New(rand.NewPCG(1, 2))
		for stamp := uint64(1); stamp <= freezes*between*4; stamp++ {
			select {
			case <-stop:
				return
			default:
			}
			k := r.IntN(keySpace)
			switch p := r.IntN(100); {
			case p < 60:
				c := l.Find(k)
				c.Set(mk(r.IntN(1000)), stamp)
			case p < 85:
				if c := l.Find(k); c.found {
					c.Delete(stamp)
				}
			case p < 90:
				if s := l.Seal(); r.IntN(2) == 0 {
					l.Unseal(s)
				}
			default:
				tx := l.Txn()
				for range r.IntN(8) {
					if k := r.IntN(keySpace); r.IntN(3) == 0 {
						tx.Delete(k)
					} else {
						tx.Set(k, mk(r.IntN(1000)))
					}
				}
				l.Apply(tx, stamp)
			}
			writes.Add(1)
		}
	}()
	defer wg.Wait()
	defer close(stop)

	type frozen struct {
		m    Map[int, V]
		want map[int]int
	}
	diffs := func(m, old frozen) {
		t.Helper()
		reported := map[int]bool{}
		m.m.Diff(old.m, func(k int, ov V, hadOld bool, nv V, hasNew bool) bool {
			o, had := old.want[k]
			n, has := m.want[k]
			if reported[k] || hadOld != had || hasNew != has || had && num(ov) != o || has && num(nv) != n {
				t.Fatalf("Diff reported key %d wrongly", k)
			}
			reported[k] = true
			return true
		})
		for k, n := range m.want {
			if o, had := old.want[k]; (!had || o != n) && !reported[k] {
				t.Fatalf("Diff missed key %d", k)
			}
		}
		for k := range old.want {
			if _, has := m.want[k]; !has && !reported[k] {
				t.Fatalf("Diff missed deleted key %d", k)
			}
		}
	}
	var recent []frozen
	for i := range int64(freezes) {
		// Let the writer make some changes first, without waiting on it:
		// the Freeze below still races with the ones it makes meanwhile.
		for writes.Load() < i*between {
			runtime.Gosched()
		}
		m, _ := l.Freeze()
		cur := frozen{m, plain(m)}
		for _, o := range recent {
			if !maps.Equal(plain(o.m), o.want) {
				t.Fatalf("a frozen version changed")
			}
			diffs(cur, o)
			diffs(o, cur)
		}
		if recent = append(recent, cur); len(recent) > kept {
			recent = recent[1:]
		}
	}
}
