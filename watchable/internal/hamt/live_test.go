package hamt

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"unsafe"
)

// The values a Live map is tested with: one of each shape, since each is
// changed in place differently (a word store, a pointer store, or a copy of
// the node).
var liveValues = []struct {
	name string
	run  func(t *testing.T, r *rand.Rand, steps, keySpace int)
}{
	{"int", func(t *testing.T, r *rand.Rand, steps, keySpace int) {
		liveDifferential(t, r, steps, keySpace, func(i int) int { return i })
	}},
	{"pointer", func(t *testing.T, r *rand.Rand, steps, keySpace int) {
		liveDifferential(t, r, steps, keySpace, func(i int) *int { return &i })
	}},
	{"string", func(t *testing.T, r *rand.Rand, steps, keySpace int) {
		liveDifferential(t, r, steps, keySpace, strconv.Itoa)
	}},
}

// TestLiveDifferential drives a Live map with random changes, in place and
// not, next to a plain Go map, taking snapshots along the way with Freeze
// and Seal, and checks after every step that the map answers as the Go map
// does and that every snapshot still held holds exactly what it held when
// taken: a change in place never reaches a snapshot.
func TestLiveDifferential(t *testing.T) {
	for _, hf := range hashes {
		for _, vk := range liveValues {
			t.Run(hf.name+"/"+vk.name, func(t *testing.T) {
				useHash(t, hf.f)
				for seed := range uint64(3) {
					vk.run(t, rand.New(rand.NewPCG(seed, 0x11fe)), 2000, 300)
				}
			})
		}
	}
}

type liveSnapshot[V any] struct {
	m     Map[int, V]
	stamp uint64
	want  map[int]V
}

// liveOps is one random run of liveDifferential's operations, decoded from
// next (which returns a number below its argument), so that the fuzz target
// and the random test share it.
func liveOps[V comparable](t *testing.T, next func(int) int, steps, keySpace int, mk func(int) V) {
	t.Helper()
	var l Live[int, V]
	want := map[int]V{}
	var stamp uint64
	var frozen []liveSnapshot[V]
	var sealed []Sealed[int, V]
	var sealedWant []map[int]V

	check := func(step int, what string) {
		t.Helper()
		if l.Len() != len(want) {
			t.Fatalf("step %d (%s): Len = %d, want %d", step, what, l.Len(), len(want))
		}
		if l.Stamp() != stamp {
			t.Fatalf("step %d (%s): Stamp = %d, want %d", step, what, l.Stamp(), stamp)
		}
		for i, s := range frozen {
			if s.m.Len() != len(s.want) || !maps.Equal(toGoMap(s.m), s.want) {
				t.Fatalf("step %d (%s): frozen snapshot %d changed: has %v, held %v", step, what, i, toGoMap(s.m), s.want)
			}
		}
		for i, s := range sealed {
			if !maps.Equal(toGoMap(s.Map), sealedWant[i]) {
				t.Fatalf("step %d (%s): sealed snapshot %d changed: has %v, held %v", step, what, i, toGoMap(s.Map), sealedWant[i])
			}
		}
	}

	for step := range steps {
		k := next(keySpace)
		var what string
		switch p := next(100); {
		case p < 40:
			v := mk(next(1 << 20))
			what = fmt.Sprintf("Set(%d, %v)", k, v)
			c := l.Find(k)
			old, ok := c.Value()
			if w, had := want[k]; ok != had || old != w {
				t.Fatalf("step %d: Find(%d).Value() = %v, %v; want %v, %v", step, k, old, ok, w, had)
			}
			stamp++
			if added := c.Set(v, stamp); added == ok {
				t.Fatalf("step %d: %s reported added %v for a key present %v", step, what, added, ok)
			}
			want[k] = v
		case p < 62:
			what = fmt.Sprintf("Delete(%d)", k)
			c := l.Find(k)
			if _, ok := c.Value(); ok {
				stamp++
				c.Delete(stamp)
				delete(want, k)
			} else if _, had := want[k]; had {
				t.Fatalf("step %d: Find(%d) missed a present key", step, k)
			}
		case p < 70:
			what = "Freeze"
			m, st := l.Freeze()
			if st != stamp {
				t.Fatalf("step %d: Freeze stamp = %d, want %d", step, st, stamp)
			}
			checkMap(t, m, want)
			frozen = append(frozen, liveSnapshot[V]{m, st, maps.Clone(want)})
		case p < 77:
			what = "Seal"
			s := l.Seal()
			checkMap(t, s.Map, want)
			sealed = append(sealed, s)
			sealedWant = append(sealedWant, maps.Clone(want))
		case p < 84:
			what = "Unseal"
			if len(sealed) > 0 {
				i := next(len(sealed))
				l.Unseal(sealed[i])
				sealed = append(sealed[:i], sealed[i+1:]...)
				sealedWant = append(sealedWant[:i], sealedWant[i+1:]...)
			}
		case p < 91:
			what = "Txn"
			tx := l.Txn()
			for range next(6) {
				k := next(keySpace)
				if next(3) == 0 {
					tx.Delete(k)
					delete(want, k)
				} else {
					v := mk(next(1 << 20))
					tx.Set(k, v)
					want[k] = v
				}
			}
			stamp++
			l.Apply(tx, stamp)
		case p < 94:
			what = "Restamp"
			stamp++
			l.Restamp(stamp)
		default:
			what = fmt.Sprintf("Get(%d)", k)
			got, ok := l.Get(k)
			if w, had := want[k]; ok != had || got != w {
				t.Fatalf("step %d: Get(%d) = %v, %v; want %v, %v", step, k, got, ok, w, had)
			}
		}
		if step%20 == 0 || step == steps-1 {
			check(step, what)
		} else if l.Len() != len(want) || l.Stamp() != stamp {
			t.Fatalf("step %d (%s): Len, Stamp = %d, %d; want %d, %d", step, what, l.Len(), l.Stamp(), len(want), stamp)
		}
		if len(frozen) > 8 {
			frozen = frozen[1:]
		}
	}
	m, _ := l.Freeze()
	checkMap(t, m, want)
}

func liveDifferential[V comparable](t *testing.T, r *rand.Rand, steps, keySpace int, mk func(int) V) {
	t.Helper()
	liveOps(t, r.IntN, steps, keySpace, mk)
}

// FuzzLive runs liveDifferential's operations on int values, decoded from
// the fuzzer's bytes, under the hash chosen by the first byte.
func FuzzLive(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0, 3, 65, 1, 0, 1, 0, 7, 80, 2, 30})
	f.Add([]byte{1, 5, 3, 1, 9, 4, 2, 7, 70, 1, 2, 3, 4, 5, 90, 8, 8, 8, 50, 2})
	f.Add([]byte{3, 2, 10, 2, 20, 2, 30, 72, 0, 2, 10, 9, 80, 0, 2, 40, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 0 {
			useHash(t, hashes[int(data[0])%len(hashes)].f)
			data = data[1:]
		}
		next := func(n int) int {
			if len(data) == 0 {
				return 0
			}
			b := int(data[0])
			data = data[1:]
			return b % n
		}
		liveOps(t, next, len(data)/2, 32, func(i int) int { return i })
	})
}

// TestLiveFrozenNeverChanges is the promise watchable's State rests on, in
// its plainest form: a snapshot taken while changes are being made in place
// holds the same contents after any number of further changes.
func TestLiveFrozenNeverChanges(t *testing.T) {
	var l Live[int, int]
	for i := range 1000 {
		c := l.Find(i)
		c.Set(i, uint64(i+1))
	}
	before, stamp := l.Freeze()
	want := toGoMap(before)
	for i := range 5000 {
		c := l.Find(i % 1500)
		if i%7 == 0 && c.found {
			c.Delete(stamp + uint64(i) + 1)
			continue
		}
		c.Set(-i, stamp+uint64(i)+1)
	}
	checkMap(t, before, want)
	if len(want) != 1000 || want[10] != 10 {
		t.Fatalf("the snapshot taken before the changes does not hold the first contents")
	}
	if got, _ := l.Get(10); got == 10 {
		t.Fatalf("the changes after the snapshot did not reach the map")
	}
}

// TestLiveFreezeSettlesAChangeUnderWay stops a change in place between its
// announcement and its store, as a writer preempted there would be, and
// checks that Freeze neither waits nor misses it: the snapshot includes the
// change, and the version is frozen for good, so the next change copies.
func TestLiveFreezeSettlesAChangeUnderWay(t *testing.T) {
	var l Live[int, int]
	for i := range 100 {
		c := l.Find(i)
		c.Set(i, uint64(i+1))
	}
	c := l.Find(42)
	v := c.v
	n := c.nodes[c.depth]
	if n.owner != v.epoch {
		t.Fatalf("the node holding key 42 is not the current version's to change in place")
	}
	if !v.begin(intent{Put: Put{word: (*uint64)(unsafe.Pointer(&n.entries()[c.pos].val)), val: 4242}, size: 100, stamp: 101}) {
		t.Fatalf("begin refused a change to an unfrozen version")
	}
	m, stamp := l.Freeze() // the writer is "preempted" before finish
	if got, _ := m.Get(42); got != 4242 || stamp != 101 || m.Len() != 100 {
		t.Fatalf("Freeze during a change: key 42 = %d, stamp %d, len %d; want 4242, 101, 100", got, stamp, m.Len())
	}
	v.finish()
	if st := v.state.Load(); st&statusMask != statusFrozen || st>>statusBits != 101 {
		t.Fatalf("after finish the state is %#x: want plainly frozen at stamp 101", st)
	}
	if _, stamp := l.Freeze(); stamp != 101 {
		t.Fatalf("Freeze after the settled change: stamp %d, want 101", stamp)
	}
	c = l.Find(42)
	c.Set(7, 102)
	if got, _ := m.Get(42); got != 4242 {
		t.Fatalf("a change after Freeze reached the snapshot: key 42 = %d", got)
	}
	if got, _ := l.Get(42); got != 7 || l.Stamp() != 102 {
		t.Fatalf("the change after Freeze is missing: key 42 = %d, stamp %d", got, l.Stamp())
	}
}

// TestLiveConcurrentReaders runs one writer changing a Live map in place as
// fast as it can while readers Get, Len and Freeze concurrently; run with
// -race. Every value encodes its key, so a reader can tell a torn or
// misplaced read; every frozen snapshot is walked twice, apart in time, and
// must not have changed in between.
func TestLiveConcurrentReaders(t *testing.T) {
	for _, vk := range []string{"int", "pointer"} {
		t.Run(vk, func(t *testing.T) {
			switch vk {
			case "int":
				liveConcurrent(t, func(k, n int) int { return k<<32 | n }, func(v int) int { return v >> 32 })
			case "pointer":
				liveConcurrent(t, func(k, n int) *int { v := k<<32 | n; return &v }, func(v *int) int { return *v >> 32 })
			}
		})
	}
}

func liveConcurrent[V any](t *testing.T, mk func(k, n int) V, keyOf func(V) int) {
	const keys, writes, readers = 512, 20000, 2
	var l Live[int, V]
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, readers)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			var held []map[int]int
			var heldMaps []Map[int, V]
			for {
				select {
				case <-done:
					for i, m := range heldMaps {
						if now := walk(m, keyOf); !maps.Equal(now, held[i]) {
							errs <- fmt.Errorf("reader %d: frozen snapshot %d changed", r, i)
							return
						}
					}
					return
				default:
				}
				k := rng.IntN(keys)
				if v, ok := l.Get(k); ok && keyOf(v) != k {
					errs <- fmt.Errorf("reader %d: Get(%d) found the value of key %d", r, k, keyOf(v))
					return
				}
				if n := l.Len(); n < 0 || n > keys {
					errs <- fmt.Errorf("reader %d: Len = %d", r, n)
					return
				}
				if rng.IntN(16) == 0 {
					m, _ := l.Freeze()
					if len(heldMaps) == 8 {
						heldMaps, held = heldMaps[1:], held[1:]
					}
					heldMaps = append(heldMaps, m)
					held = append(held, walk(m, keyOf))
				}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range writes {
		k := rng.IntN(keys)
		c := l.Find(k)
		if _, ok := c.Value(); ok && rng.IntN(5) == 0 {
			c.Delete(uint64(i + 1))
		} else {
			c.Set(mk(k, i), uint64(i+1))
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// walk returns what m holds, each value reduced to the key it encodes plus
// a check that it is under that key.
func walk[V any](m Map[int, V], keyOf func(V) int) map[int]int {
	out := map[int]int{}
	for k, v := range m.All() {
		out[k] = keyOf(v)
		if got, ok := m.Get(k); !ok || keyOf(got) != k {
			out[k] = -1
		}
	}
	return out
}

// TestLiveCopiedPathSharesEntries checks the sharing that keeps a copied
// path small, and that it never lets a change reach a snapshot: the first
// change after a Freeze copies the root, which then shares its entries
// with the snapshot's root, and a later change to one of those entries,
// though the root is now the writer's, gives it an array of its own.
func TestLiveCopiedPathSharesEntries(t *testing.T) {
	// Key 1 sits alone at the root; 2 and 34 share the root's slot 2 and
	// so a child below it.
	useHash(t, func(k int) uint64 { return uint64(k) })
	var l Live[int, int]
	for _, k := range []int{1, 2, 34} {
		c := l.Find(k)
		c.Set(k, uint64(k))
	}
	snap, stamp := l.Freeze()
	if len(snap.root.entries()) != 1 || len(snap.root.children()) != 1 {
		t.Fatalf("unexpected shape: %d entries and %d children at the root", len(snap.root.entries()), len(snap.root.children()))
	}

	c := l.Find(2)
	c.Set(-2, stamp+1)
	if root := l.Peek().root; root == snap.root || root.ents != snap.root.ents {
		t.Fatalf("the copied root does not share the snapshot's entries (copied: %v)", root != snap.root)
	}

	c = l.Find(1)
	c.Set(-1, stamp+2)
	if l.Peek().root.ents == snap.root.ents {
		t.Fatalf("a changed entry was written into the array the snapshot shares")
	}
	checkMap(t, snap, map[int]int{1: 1, 2: 2, 34: 34})
	now, _ := l.Freeze()
	checkMap(t, now, map[int]int{1: -1, 2: -2, 34: 34})

	// With the root's entries its own again, the next change to them is
	// made in place, as before any sharing.
	c = l.Find(1)
	c.Set(-10, stamp+3)
	checkMap(t, now, map[int]int{1: -1, 2: -2, 34: 34})
	if got, _ := l.Get(1); got != -10 {
		t.Fatalf("Get(1) = %d after the last change, want -10", got)
	}
}
