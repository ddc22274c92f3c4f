package mvcc

import (
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// The tests in this file run the table with keys and values of other
// types than the string keys and uint64 values of the others: keys of a
// word (int), of a struct (boxed) and strings too long for a slot's word
// (boxed); values kept in the slot as a word (uint64, float64), as a
// pointer (pointers, maps, funcs), and boxed.

// nsName is a key of two strings, as Kubernetes names an object.
type nsName struct{ Namespace, Name string }

// tval is what the pointer values of the differential test point to.
type tval struct{ n int }

// boxedPair is a value of more than one word, kept boxed.
type boxedPair struct {
	A string
	B int
}

// modelCase is one run of the differential test: the keys the writer
// stores and deletes, and the values it stores.
type modelCase[K comparable, V any] struct {
	keys []K
	// probe has a key equal to each of keys but made apart (its own
	// bytes, where it has any), which the reads look up: the table
	// must match keys by value.
	probe []K
	value func(r *rand.Rand, step int) V // a value to store
	// same reports whether b is a as the table must give it back: the
	// same bits, the same pointer.
	same         func(a, b V) bool
	seeds, steps int
}

// show is k for a failure's message: a long string key cut short.
func show(k any) string {
	if s, ok := k.(string); ok && len(s) > 40 {
		return fmt.Sprintf("%q…(%d bytes)", s[:20], len(s))
	}
	return fmt.Sprintf("%#v", k)
}

// sameContents reports whether got and want hold the same keys, with
// values the same by same.
func sameContents[K comparable, V any](got, want map[K]V, same func(a, b V) bool) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || !same(w, g) {
			return false
		}
	}
	return true
}

// modelAgrees is TestModelAgreesWithAMap for keys K and values V: random
// Stores, Deletes, batches, Snapshots and releases of snapshots against a
// Go map, from a table made for no keys (by New for even seeds, the zero
// Table for odd ones), so that it grows; after every step Load and Range
// must read the map, and every snapshot still held must read, list and
// count what the map held when it was taken. Now and then it lets the
// collector end the snapshots let go of, and trims. It fails if the table
// never grew.
func modelAgrees[K comparable, V any](t *testing.T, c modelCase[K, V]) {
	for seed := range uint64(c.seeds) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 11))
			tb := New[K, V](0)
			if seed%2 == 1 {
				tb = new(Table[K, V])
			}
			arrOf := func() *array {
				if m := tb.meta.Load(); m != nil {
					return m.arr
				}
				return nil
			}
			m := map[K]V{}
			type heldAt struct {
				s    Snapshot[K, V]
				want map[K]V
			}
			var snaps []heldAt
			pick := func() K { return c.keys[r.IntN(len(c.keys))] }
			var zero V
			arr, grew := arrOf(), 0
			for step := range c.steps {
				switch op := r.IntN(21); {
				case op == 20:
					// A batch: none of it is seen before it ends.
					before := maps.Clone(m)
					tb.Batch(func(b Batch[K, V]) {
						for range 1 + r.IntN(8) {
							k := pick()
							if r.IntN(3) == 0 {
								_, want := m[k]
								if got := b.Delete(k); got != want {
									t.Fatalf("step %d: Delete(%s) in a batch = %v, want %v", step, show(k), got, want)
								}
								delete(m, k)
							} else {
								v := c.value(r, step)
								b.Store(k, v)
								m[k] = v
							}
							got, ok := tb.Load(k)
							if want, wantOK := before[k]; ok != wantOK || ok && !c.same(want, got) || !ok && !c.same(zero, got) {
								t.Fatalf("step %d: Load(%s) inside a batch = %v, %v; want %v, %v from before it", step, show(k), got, ok, want, wantOK)
							}
						}
						if n := tb.Snapshot().Len(); n != len(before) {
							t.Fatalf("step %d: a snapshot inside a batch has Len %d, want %d", step, n, len(before))
						}
					})
				case op < 10:
					k, v := pick(), c.value(r, step)
					tb.Store(k, v)
					m[k] = v
				case op < 14:
					k := pick()
					_, want := m[k]
					if got := tb.Delete(k); got != want {
						t.Fatalf("step %d: Delete(%s) = %v, want %v", step, show(k), got, want)
					}
					delete(m, k)
				case op < 17:
					snaps = append(snaps, heldAt{tb.Snapshot(), maps.Clone(m)})
				case op < 19 && len(snaps) > 0:
					snaps = slices.Delete(snaps, 0, r.IntN(len(snaps)+1))
				case op == 19:
					if r.IntN(3) == 0 {
						runtime.GC() // the collector's cycles are slow: not every time
					}
					tb.Trim()
				}
				if a := arrOf(); a != arr {
					if arr != nil {
						grew++
					}
					arr = a
				}
				if tb.Len() != len(m) {
					t.Fatalf("step %d: Len = %d, want %d", step, tb.Len(), len(m))
				}
				ranged := map[K]V{}
				tb.Range(func(k K, v V) bool {
					ranged[k] = v
					return true
				})
				if !sameContents(ranged, m, c.same) {
					t.Fatalf("step %d: Range lists %d keys, not the %d stored: %v", step, len(ranged), len(m), ranged)
				}
				for i, k := range c.probe {
					got, ok := tb.Load(k)
					want, wantOK := m[c.keys[i]]
					if ok != wantOK || ok && !c.same(want, got) || !ok && !c.same(zero, got) {
						t.Fatalf("step %d: Load(%s) = %v, %v; want %v, %v", step, show(k), got, ok, want, wantOK)
					}
					for _, h := range snaps {
						got, ok := h.s.Get(k)
						want, wantOK := h.want[k]
						if ok != wantOK || ok && !c.same(want, got) || !ok && !c.same(zero, got) {
							t.Fatalf("step %d: snapshot at version %d: Get(%s) = %v, %v; want %v, %v",
								step, h.s.Version(), show(k), got, ok, want, wantOK)
						}
					}
				}
				for _, h := range snaps {
					all := map[K]V{}
					h.s.All(func(k K, v V) bool {
						if _, twice := all[k]; twice {
							t.Fatalf("step %d: snapshot at version %d lists %s twice", step, h.s.Version(), show(k))
						}
						all[k] = v
						return true
					})
					if !sameContents(all, h.want, c.same) || h.s.Len() != len(h.want) {
						t.Fatalf("step %d: snapshot at version %d lists %d keys with Len %d, not the %d it holds: %v",
							step, h.s.Version(), len(all), h.s.Len(), len(h.want), all)
					}
					calls := 0
					h.s.All(func(K, V) bool { calls++; return false })
					if want := min(1, len(h.want)); calls != want {
						t.Fatalf("step %d: All went on for %d keys after yield returned false, want %d", step, calls, want)
					}
				}
			}
			if grew == 0 {
				t.Fatal("the table never grew")
			}
		})
	}
}

// intKeys are 40 int keys, the extremes among them.
func intKeys() []int {
	keys := []int{-1, math.MinInt, math.MaxInt, math.MaxInt / 3}
	for i := range 36 {
		keys = append(keys, i)
	}
	return keys
}

// nsKeys are 40 struct keys, among them the empty one and two whose
// strings join into the same text.
func nsKeys() (keys, probe []nsName) {
	for _, ns := range []string{"", "a", "ab", "default", "kube-system"} {
		for _, n := range []string{"", "b", "c", "bc", "x0", "x1", "x2", "x3"} {
			keys = append(keys, nsName{ns, n})
			probe = append(probe, nsName{strings.Clone(ns), strings.Clone(n)})
		}
	}
	return keys, probe
}

// longBacking is a string of random bytes that the long keys are cut
// from, so that they cost no more memory than it.
var longBacking = func() string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 70001)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}()

// stringKeys are short string keys and the empty one; the longest key a
// slot's word can say the length of, kept as its bytes; and longer ones,
// which the table boxes: two of maxKeyLen bytes and two of 65,535 (each
// pair cut from the backing a byte apart, so of one length, and equal but
// for their bytes), and one of 70,000.
func stringKeys() (keys, probe []string) {
	for i := range 31 {
		keys = append(keys, "k"+strconv.Itoa(i))
	}
	keys = append(keys, "", longBacking[:maxKeyLen-1], longBacking[:maxKeyLen], longBacking[1:maxKeyLen+1],
		longBacking[:65535], longBacking[1:65536], longBacking[:70000])
	for _, k := range keys {
		probe = append(probe, strings.Clone(k))
	}
	return keys, probe
}

// floatValues are float64s whose bits the table must keep: both zeros,
// infinities, NaNs with payloads, the smallest and largest.
var floatValues = []float64{
	0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), math.NaN(),
	math.Float64frombits(0x7ff8_dead_beef_0001), math.Float64frombits(0xfff8_0000_0000_0042),
	math.SmallestNonzeroFloat64, -math.MaxFloat64,
}

func sameBits(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }

func equal[V comparable](a, b V) bool { return a == b }

// valueCase is the values of a differential run, apart from its keys.
type valueCase[V any] struct {
	value func(r *rand.Rand, step int) V
	same  func(a, b V) bool
}

var (
	uint64Values = valueCase[uint64]{
		func(r *rand.Rand, step int) uint64 {
			if r.IntN(8) == 0 {
				return 0 // a value, not the absence of one
			}
			return uint64(step)<<32 | uint64(r.Uint32())
		}, equal[uint64]}
	float64Values = valueCase[float64]{
		func(r *rand.Rand, step int) float64 {
			if r.IntN(2) == 0 {
				return floatValues[r.IntN(len(floatValues))]
			}
			return float64(step) + 0.25
		}, sameBits}
	pointerValues = valueCase[*tval]{
		func(r *rand.Rand, step int) *tval {
			if r.IntN(5) == 0 {
				return nil
			}
			return &tval{step}
		}, equal[*tval]}
	mapValues = valueCase[map[string]int]{
		func(r *rand.Rand, step int) map[string]int {
			switch r.IntN(5) {
			case 0:
				return nil
			case 1:
				return map[string]int{} // empty, and not nil
			}
			return map[string]int{"step": step}
		},
		func(a, b map[string]int) bool {
			return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer() && maps.Equal(a, b)
		}}
	pairValues = valueCase[boxedPair]{
		func(r *rand.Rand, step int) boxedPair {
			if r.IntN(8) == 0 {
				return boxedPair{} // the zero value, kept boxed
			}
			return boxedPair{strconv.Itoa(step), -step}
		}, equal[boxedPair]}
	emptyValues = valueCase[struct{}]{
		func(*rand.Rand, int) struct{} { return struct{}{} }, equal[struct{}]}
	arrayValues = valueCase[[2]uint64]{
		func(r *rand.Rand, step int) [2]uint64 { return [2]uint64{uint64(step), r.Uint64()} }, equal[[2]uint64]}
	int32Values = valueCase[int32]{
		func(r *rand.Rand, step int) int32 {
			switch r.IntN(6) {
			case 0:
				return math.MinInt32
			case 1:
				return 0
			}
			return -int32(step)
		}, equal[int32]}
)

// withValues is the differential run of keys with the values vc.
func withValues[K comparable, V any](keys, probe []K, vc valueCase[V], seeds, steps int) modelCase[K, V] {
	return modelCase[K, V]{keys: keys, probe: probe, value: vc.value, same: vc.same, seeds: seeds, steps: steps}
}

// TestValueModes checks that each type of value is kept in the slot the
// way it should be: a 64-bit number as a word, a pointer, map or func as
// a pointer, anything else boxed.
func TestValueModes(t *testing.T) {
	for _, c := range []struct {
		got, want valueMode
		name      string
	}{
		{modeOf[uint64](), valueWord, "uint64"},
		{modeOf[int](), valueWord, "int"},
		{modeOf[float64](), valueWord, "float64"},
		{modeOf[time.Duration](), valueWord, "time.Duration"},
		{modeOf[*tval](), valuePointer, "*tval"},
		{modeOf[map[string]int](), valuePointer, "map[string]int"},
		{modeOf[func() int](), valuePointer, "func() int"},
		{modeOf[chan int](), valuePointer, "chan int"},
		{modeOf[unsafe.Pointer](), valuePointer, "unsafe.Pointer"},
		{modeOf[boxedPair](), valueBoxed, "boxedPair"},
		{modeOf[struct{}](), valueBoxed, "struct{}"},
		{modeOf[[2]uint64](), valueBoxed, "[2]uint64"},
		{modeOf[int32](), valueBoxed, "int32"},
		{modeOf[float32](), valueBoxed, "float32"},
		{modeOf[string](), valueBoxed, "string"},
		{modeOf[any](), valueBoxed, "any"},
		{modeOf[struct{ p *int }](), valueBoxed, "struct{ p *int }"},
	} {
		if c.got != c.want {
			t.Errorf("values of type %s are kept in mode %d, want %d", c.name, c.got, c.want)
		}
	}
}

// TestGenericModelAgreesWithAMap runs the differential test of
// TestModelAgreesWithAMap with int, struct and long string keys, and with
// values kept as words (uint64; float64, whose bits must come back as
// they went in, -0 and NaNs among them), as pointers (nil among them),
// maps, and boxed (a struct, an empty struct, an array, an int32).
func TestGenericModelAgreesWithAMap(t *testing.T) {
	ints := intKeys()
	ns, nsProbe := nsKeys()
	strs, strProbe := stringKeys()
	const seeds, steps = 2, 500
	t.Run("int/uint64", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, uint64Values, seeds, steps)) })
	t.Run("int/float64", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, float64Values, seeds, steps)) })
	t.Run("int/pointer", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, pointerValues, seeds, steps)) })
	t.Run("int/map", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, mapValues, seeds, steps)) })
	t.Run("int/struct", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, pairValues, seeds, steps)) })
	t.Run("int/empty", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, emptyValues, seeds, steps)) })
	t.Run("int/array", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, arrayValues, seeds, steps)) })
	t.Run("int/int32", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, int32Values, seeds, steps)) })
	t.Run("struct/uint64", func(t *testing.T) { modelAgrees(t, withValues(ns, nsProbe, uint64Values, seeds, steps)) })
	t.Run("struct/float64", func(t *testing.T) { modelAgrees(t, withValues(ns, nsProbe, float64Values, seeds, steps)) })
	t.Run("struct/pointer", func(t *testing.T) { modelAgrees(t, withValues(ns, nsProbe, pointerValues, seeds, steps)) })
	t.Run("struct/struct", func(t *testing.T) { modelAgrees(t, withValues(ns, nsProbe, pairValues, seeds, steps)) })
	t.Run("string/uint64", func(t *testing.T) { modelAgrees(t, withValues(strs, strProbe, uint64Values, 2, steps)) })
	t.Run("string/map", func(t *testing.T) { modelAgrees(t, withValues(strs, strProbe, mapValues, 1, steps)) })
	t.Run("string/array", func(t *testing.T) { modelAgrees(t, withValues(strs, strProbe, arrayValues, 1, steps)) })
}

var collideSeed = maphash.MakeSeed()

// collisions are the ways the tests make keys' hashes collide: all on
// three hashes (one of which begins its probes at the end of the slots,
// so that they wrap around); with one tag (the hash's low bits, which the
// tag is cut from, all alike) but high bits that differ, so that keys
// spread over the slots but every one the probes pass must be compared;
// and all on one hash.
var collisions = []struct {
	name string
	hash func(any) uint64
}{
	{"three hashes", func(k any) uint64 {
		return [...]uint64{0x0123456789abcdef, 0xfffffffffffffe10, 0x8000000000000055}[maphash.Comparable(collideSeed, k)%3]
	}},
	{"one tag", func(k any) uint64 { return maphash.Comparable(collideSeed, k)&^0x7f | 0x2a }},
	{"one hash", func(any) uint64 { return 0x9e3779b97f4a7c15 }},
}

// collide makes hashOverride hash keys with h until the test ends, and
// returns the number of keys it has hashed. No table may be in use.
func collide(t *testing.T, h func(any) uint64) *atomic.Int64 {
	old := hashOverride
	t.Cleanup(func() { hashOverride = old })
	calls := new(atomic.Int64)
	hashOverride = func(k any) uint64 {
		calls.Add(1)
		return h(k)
	}
	return calls
}

// TestGenericModelUnderCollisions runs the differential test with keys
// whose hashes collide (see collisions), so that probes pass many keys
// with their tag, deleted ones among them, and growth moves them all.
func TestGenericModelUnderCollisions(t *testing.T) {
	ints := intKeys()
	ns, nsProbe := nsKeys()
	strs, strProbe := stringKeys()
	for _, c := range collisions {
		t.Run(c.name, func(t *testing.T) {
			calls := collide(t, c.hash)
			t.Run("int/pointer", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, pointerValues, 2, 300)) })
			t.Run("int/float64", func(t *testing.T) { modelAgrees(t, withValues(ints, ints, float64Values, 1, 300)) })
			t.Run("struct/uint64", func(t *testing.T) { modelAgrees(t, withValues(ns, nsProbe, uint64Values, 2, 300)) })
			t.Run("struct/array", func(t *testing.T) { modelAgrees(t, withValues(ns, nsProbe, arrayValues, 1, 300)) })
			t.Run("string/struct", func(t *testing.T) { modelAgrees(t, withValues(strs, strProbe, pairValues, 1, 300)) })
			if calls.Load() == 0 {
				t.Fatal("the table never called hashOverride")
			}
		})
	}
}

// payload is what the values of the collection tests point to: a
// checksum of its id and data, which an object the collector freed and
// gave to another would not keep.
type payload struct {
	id   uint64
	data [5]uint64
	sum  uint64
}

// newPayload makes the payload of id; when freed is not nil, freed counts
// it once the collector finds it unreachable.
func newPayload(id uint64, freed *atomic.Int32) *payload {
	p := &payload{id: id}
	for i := range p.data {
		p.data[i] = id*0x9E3779B97F4A7C15 + uint64(i)
	}
	p.sum = p.checksum()
	if freed != nil {
		runtime.AddCleanup(p, func(n *atomic.Int32) { n.Add(1) }, freed)
	}
	return p
}

func (p *payload) checksum() uint64 {
	s := p.id
	for _, d := range p.data {
		s = s*31 + d
	}
	return s
}

// intact reports whether p is the payload of id, as it was made.
func (p *payload) intact(id uint64) bool { return p != nil && p.id == id && p.sum == p.checksum() }

// holder is a boxed value that holds a pointer.
type holder struct {
	ID uint64
	P  *payload
}

// gcCase is a type of value that holds payloads: make makes the value of
// id, whose payloads freed counts; intact reports whether v is the value
// of id, with its payloads as made.
type gcCase[V any] struct {
	make   func(id uint64, freed *atomic.Int32) V
	intact func(v V, id uint64) bool
}

var (
	pointerGC = gcCase[*payload]{newPayload, (*payload).intact}
	holderGC  = gcCase[holder]{
		func(id uint64, freed *atomic.Int32) holder { return holder{id, newPayload(id, freed)} },
		func(v holder, id uint64) bool { return v.ID == id && v.P.intact(id) }}
	mapGC = gcCase[map[uint64]*payload]{
		func(id uint64, freed *atomic.Int32) map[uint64]*payload {
			return map[uint64]*payload{id: newPayload(id, freed)}
		},
		func(v map[uint64]*payload, id uint64) bool { return len(v) == 1 && v[id].intact(id) }}
	funcGC = gcCase[func() *payload]{
		func(id uint64, freed *atomic.Int32) func() *payload {
			p := newPayload(id, freed)
			return func() *payload { return p }
		},
		func(v func() *payload, id uint64) bool { return v != nil && v().intact(id) }}
)

// collect runs the collector a few times, and between its cycles makes
// garbage of the size of payloads, which takes the place of any freed,
// and gives the cleanups of the freed a moment to run.
func collect() {
	for i := range 4 {
		runtime.GC()
		junk := make([]*payload, 1000)
		for j := range junk {
			junk[j] = &payload{id: ^uint64(i*1000 + j), sum: 1}
		}
		runtime.KeepAlive(junk)
		time.Sleep(time.Millisecond)
	}
}

// TestValuesSurviveCollection stores values that hold the only reference
// to objects (pointers, boxed structs of pointers, maps, funcs), keeps
// some of them only in snapshots (in records of older values, in records
// a batch allocated together, in the array a snapshot read before the
// table grew, for keys since deleted), and runs the collector: none may
// be freed, and Load, Get and All must read each intact.
func TestValuesSurviveCollection(t *testing.T) {
	t.Run("pointer", func(t *testing.T) { valuesSurvive(t, pointerGC) })
	t.Run("boxed", func(t *testing.T) { valuesSurvive(t, holderGC) })
	t.Run("map", func(t *testing.T) { valuesSurvive(t, mapGC) })
	t.Run("func", func(t *testing.T) { valuesSurvive(t, funcGC) })
}

func valuesSurvive[V any](t *testing.T, c gcCase[V]) {
	const keys = 300
	var freed atomic.Int32
	tb := New[int, V](0) // grows as the keys come
	cur := map[int]uint64{}
	store := func(k int, id uint64) {
		tb.Store(k, c.make(id, &freed))
		cur[k] = id
	}
	for k := range keys {
		store(k, uint64(k)+1)
	}
	first, firstWant := tb.Snapshot(), maps.Clone(cur)
	for k := 0; k < keys; k += 2 {
		store(k, uint64(k)+1000) // each once: the first values only in records
	}
	mid, midWant := tb.Snapshot(), maps.Clone(cur)
	tb.Batch(func(b Batch[int, V]) {
		for k := 1; k < keys; k += 4 {
			b.Store(k, c.make(uint64(k)+2000, &freed))
			cur[k] = uint64(k) + 2000
		}
	})
	for k := 3; k < keys; k += 8 {
		tb.Delete(k) // the first value only in a record
		delete(cur, k)
	}
	arr := tb.meta.Load().arr
	for k := keys; tb.meta.Load().arr == arr; k++ {
		store(k, uint64(k)+1) // until it grows: first and mid read the old array
	}
	tb.Trim() // keeps what first and mid read
	collect()

	check := func(name string, s Snapshot[int, V], want map[int]uint64) {
		t.Helper()
		for k, id := range want {
			if v, ok := s.Get(k); !ok || !c.intact(v, id) {
				t.Fatalf("%s: Get(%d) = %v, %v; want the value of %d, intact", name, k, v, ok, id)
			}
		}
		n := 0
		s.All(func(k int, v V) bool {
			if id, ok := want[k]; !ok || !c.intact(v, id) {
				t.Fatalf("%s: All gives %d = %v; want the value of %d, intact", name, k, v, id)
			}
			n++
			return true
		})
		if n != len(want) || s.Len() != len(want) {
			t.Fatalf("%s: All gives %d keys, Len is %d; want %d", name, n, s.Len(), len(want))
		}
	}
	for k, id := range cur {
		if v, ok := tb.Load(k); !ok || !c.intact(v, id) {
			t.Fatalf("Load(%d) = %v, %v; want the value of %d, intact", k, v, ok, id)
		}
	}
	check("a snapshot of the current version", tb.Snapshot(), cur)
	check("the snapshot before the first overwrites", first, firstWant)
	check("the snapshot before the batch", mid, midWant)
	collect() // and once more, after the reads
	if n := freed.Load(); n != 0 {
		t.Fatalf("the collector freed %d values that the table or its snapshots hold", n)
	}
	runtime.KeepAlive(tb)
	runtime.KeepAlive(first)
	runtime.KeepAlive(mid)
}

// TestKeysSurviveCollection stores keys whose bytes nobody else holds:
// strings kept as their bytes, strings too long for a slot's word and
// struct keys, both kept boxed, in a table whose values are words (so
// that only the keys hold pointers); runs the collector, and checks that
// no key's bytes were freed and that Load, Get and All find every key.
func TestKeysSurviveCollection(t *testing.T) {
	var freed atomic.Int32
	track := func(s string) string {
		runtime.AddCleanup(unsafe.StringData(s), func(n *atomic.Int32) { n.Add(1) }, &freed)
		return s
	}
	name := func(i int) string { return fmt.Sprintf("key-%012d", i) } // 16 bytes: not the tiny allocator's
	// strKey is the ith string key: every 25th is too long for a slot's word.
	strKey := func(i int) string {
		if i%25 == 0 {
			return name(i) + longBacking[:70000-16]
		}
		return name(i)
	}
	const keys = 100
	strs := New[string, uint64](0)
	structs := New[nsName, uint64](0)
	for i := range keys {
		strs.Store(track(strKey(i)), uint64(i))
		structs.Store(nsName{track(name(i)), track(name(i + keys))}, uint64(i))
	}
	collect()
	found := 0
	strs.Snapshot().All(func(k string, v uint64) bool {
		if want := strKey(int(v)); k != want {
			t.Fatalf("All gives %s = %d; want the key %s", show(k), v, show(want))
		}
		found++
		return true
	})
	structs.Snapshot().All(func(k nsName, v uint64) bool {
		if want := (nsName{name(int(v)), name(int(v) + keys)}); k != want {
			t.Fatalf("All gives %v = %d; want the key %v", k, v, want)
		}
		found++
		return true
	})
	if found != 2*keys {
		t.Fatalf("All gives %d keys, want %d", found, 2*keys)
	}
	for i := range keys {
		k := strKey(i)
		if v, ok := strs.Load(k); !ok || v != uint64(i) {
			t.Fatalf("Load(%s) = %d, %v; want %d, true", show(k), v, ok, i)
		}
		if v, ok := structs.Snapshot().Get(nsName{name(i), name(i + keys)}); !ok || v != uint64(i) {
			t.Fatalf("Get(%s) = %d, %v; want %d, true", name(i), v, ok, i)
		}
	}
	collect()
	if n := freed.Load(); n != 0 {
		t.Fatalf("the collector freed the bytes of %d keys the tables hold", n)
	}
	runtime.KeepAlive(strs)
	runtime.KeepAlive(structs)
}

// pollCollected runs the collector and trims tb until freed counts one
// value, for up to two seconds, and reports whether it did.
func pollCollected[V any](tb *Table[int, V], freed *atomic.Int32) bool {
	deadline := time.Now().Add(2 * time.Second)
	for freed.Load() == 0 {
		if time.Now().After(deadline) {
			return false
		}
		tb.Trim()
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return true
}

// TestDroppedValuesAreCollected checks that a value the table no longer
// holds, and no snapshot reads, is freed: overwritten or deleted, with no
// snapshot, under a snapshot let go of, in a batch, or after the table
// grew out of the array that held it.
func TestDroppedValuesAreCollected(t *testing.T) {
	t.Run("pointer", func(t *testing.T) { droppedCollected(t, pointerGC) })
	t.Run("boxed", func(t *testing.T) { droppedCollected(t, holderGC) })
	t.Run("func", func(t *testing.T) { droppedCollected(t, funcGC) })
}

func droppedCollected[V any](t *testing.T, c gcCase[V]) {
	fresh := func(id uint64) V { return c.make(id, nil) }
	grow := func(tb *Table[int, V]) {
		arr := tb.meta.Load().arr
		for k := 1; tb.meta.Load().arr == arr; k++ {
			tb.Store(k, fresh(uint64(k)))
		}
	}
	for _, d := range []struct {
		name    string
		drop    func(tb *Table[int, V]) // lets go of key 0's value
		deleted bool                    // drop deletes key 0, rather than store the value of 2
	}{
		{"overwritten", func(tb *Table[int, V]) { tb.Store(0, fresh(2)) }, false},
		{"deleted", func(tb *Table[int, V]) { tb.Delete(0) }, true},
		{"overwritten under a snapshot let go of", func(tb *Table[int, V]) {
			tb.Snapshot()
			tb.Store(0, fresh(2))
		}, false},
		{"deleted under a snapshot let go of", func(tb *Table[int, V]) {
			tb.Snapshot()
			tb.Delete(0)
		}, true},
		{"overwritten in a batch", func(tb *Table[int, V]) {
			tb.Batch(func(b Batch[int, V]) { b.Store(0, fresh(2)) })
		}, false},
		{"overwritten after growth", func(tb *Table[int, V]) {
			grow(tb)
			tb.Store(0, fresh(2))
		}, false},
		{"overwritten after growth under a snapshot let go of", func(tb *Table[int, V]) {
			tb.Snapshot()
			grow(tb)
			tb.Store(0, fresh(2))
		}, false},
	} {
		t.Run(d.name, func(t *testing.T) {
			var freed atomic.Int32
			tb := New[int, V](0)
			tb.Store(0, c.make(1, &freed))
			d.drop(tb)
			if !pollCollected(tb, &freed) {
				t.Fatal("the value let go of was not freed within two seconds of collections")
			}
			if v, ok := tb.Load(0); ok == d.deleted || ok && !c.intact(v, 2) {
				t.Errorf("Load(0) = %v, %v after the value was freed; want the value of 2 unless deleted", v, ok)
			}
		})
	}
}

// TestSnapshotKeepsItsValues checks that a value only a snapshot still
// reads (overwritten, deleted, or in the array the table grew out of) is
// not freed while the snapshot is reachable, though the writer trims, and
// reads intact; and that it is freed once the snapshot is let go of.
func TestSnapshotKeepsItsValues(t *testing.T) {
	t.Run("pointer", func(t *testing.T) { snapshotKeeps(t, pointerGC) })
	t.Run("boxed", func(t *testing.T) { snapshotKeeps(t, holderGC) })
	t.Run("map", func(t *testing.T) { snapshotKeeps(t, mapGC) })
}

func snapshotKeeps[V any](t *testing.T, c gcCase[V]) {
	fresh := func(id uint64) V { return c.make(id, nil) }
	for _, d := range []struct {
		name string
		drop func(tb *Table[int, V])
	}{
		{"overwritten", func(tb *Table[int, V]) { tb.Store(0, fresh(2)) }},
		{"deleted", func(tb *Table[int, V]) { tb.Delete(0) }},
		{"overwritten in a batch", func(tb *Table[int, V]) {
			tb.Batch(func(b Batch[int, V]) { b.Store(0, fresh(2)) })
		}},
		{"overwritten after growth", func(tb *Table[int, V]) {
			arr := tb.meta.Load().arr
			for k := 1; tb.meta.Load().arr == arr; k++ {
				tb.Store(k, fresh(uint64(k)))
			}
			tb.Store(0, fresh(2))
		}},
	} {
		t.Run(d.name, func(t *testing.T) {
			var freed atomic.Int32
			tb := New[int, V](0)
			tb.Store(0, c.make(1, &freed))
			s := tb.Snapshot()
			d.drop(tb)
			for range 3 {
				tb.Trim()
				runtime.GC()
			}
			collect()
			if n := freed.Load(); n != 0 {
				t.Fatal("the value a held snapshot reads was freed")
			}
			if v, ok := s.Get(0); !ok || !c.intact(v, 1) {
				t.Fatalf("the snapshot reads %v, %v; want the value of 1, intact", v, ok)
			}
			runtime.KeepAlive(s) // and no longer
			if !pollCollected(tb, &freed) {
				t.Fatal("the value was not freed within two seconds of collections once its snapshot was let go of")
			}
		})
	}
}

// twin is a boxed value whose fields must always be equal, as the writer
// stores them: a reader that saw a box half written, or another box's
// fields, would find them apart.
type twin struct {
	A uint64
	P *uint64 // to a copy of A
	B uint64
}

// TestBoxedValuesWholeUnderAWriter reads boxed values with struct keys on
// two goroutines while one writer stores and batches into a table that
// grows: Load, a snapshot's Get and All must give each key a value of its
// own, whole, and a held snapshot the same values each time it is read.
func TestBoxedValuesWholeUnderAWriter(t *testing.T) {
	const keys, stores = 64, 20000
	ks := make([]nsName, keys)
	index := map[nsName]int{}
	for i := range ks {
		ks[i] = nsName{"ns" + strconv.Itoa(i%4), "name" + strconv.Itoa(i)}
		index[ks[i]] = i
	}
	tb := New[nsName, twin](0)
	var failures atomic.Int32
	check := func(how string, i int, v twin, ok bool) {
		if ok && (v.A != v.B || v.P == nil || *v.P != v.A || v.A == 0 || v.A%keys != uint64(i)) && failures.Add(1) < 5 {
			p := uint64(0)
			if v.P != nil {
				p = *v.P
			}
			t.Errorf("%s of key %d = {%d, *%d, %d}: not a value stored at it, whole", how, i, v.A, p, v.B)
		}
	}
	var kept Snapshot[nsName, twin]
	var keptVals []twin
	passes := 0
	whileWriting(2, func(r int) {
		if r == 0 {
			for i, k := range ks {
				v, ok := tb.Load(k)
				check("Load", i, v, ok)
			}
			return
		}
		s := tb.Snapshot()
		n := 0
		s.All(func(k nsName, v twin) bool {
			check("All", index[k], v, true)
			n++
			return true
		})
		if n != s.Len() && failures.Add(1) < 5 {
			t.Errorf("snapshot %d lists %d keys, and its Len is %d", s.Version(), n, s.Len())
		}
		vals := make([]twin, keys)
		for i, k := range ks {
			v, ok := s.Get(k)
			check("Get", i, v, ok)
			vals[i] = v
		}
		if passes++; passes%50 == 1 {
			kept, keptVals = s, vals
		}
		for i, k := range ks {
			if v, _ := kept.Get(k); v.A != keptVals[i].A && failures.Add(1) < 5 {
				t.Errorf("snapshot %d read %d at key %d, then %d", kept.Version(), keptVals[i].A, i, v.A)
			}
		}
	}, func() {
		deadline := time.Now().Add(time.Second)
		n := uint64(0)
		next := func() (nsName, twin) {
			n++
			a := n
			return ks[n%keys], twin{n, &a, n}
		}
		for n < stores && time.Now().Before(deadline) {
			if n%50 == 0 {
				tb.Batch(func(b Batch[nsName, twin]) {
					for range 5 {
						b.Store(next())
					}
				})
			} else {
				tb.Store(next())
			}
		}
	})
}

// mirrorOf is the mirror of log_test.go for keys K and values V.
type mirrorOf[K comparable, V any] struct {
	m    map[K]V
	prev Snapshot[K, V]
	cur  *Cursor[K, V]
	same func(a, b V) bool
}

// catchUpTo applies the changes up to s, and reports what is wrong: a key
// given twice, a change that is none, or a mirror that differs from s. A
// boxed value stored again is given though equal (its box is new), as
// Changes compares the boxes.
func (m *mirrorOf[K, V]) catchUpTo(s Snapshot[K, V]) string {
	boxed := modeOf[V]() == valueBoxed
	given := map[K]bool{}
	problem := ""
	from := uint64(0) // the version of m.prev, 0 for the first
	if m.prev.snapshot != nil {
		from = m.prev.Version()
	}
	m.cur.Changes(m.prev, s, func(k K, v V, ok bool) {
		was, had := m.m[k]
		switch {
		case given[k]:
			problem = fmt.Sprintf("key %v given twice", k)
		case ok == had && (!ok || m.same(v, was) && !boxed):
			problem = fmt.Sprintf("key %v given as a change to %v, %v; it was %v, %v", k, v, ok, was, had)
		}
		given[k] = true
		if ok {
			m.m[k] = v
		} else {
			delete(m.m, k)
		}
	})
	all := map[K]V{}
	s.All(func(k K, v V) bool {
		all[k] = v
		return true
	})
	if problem == "" && !sameContents(all, m.m, m.same) {
		var wrong []string // the keys where they differ, a few of them
		for k, v := range all {
			if w, ok := m.m[k]; (!ok || !m.same(v, w)) && len(wrong) < 5 {
				wrong = append(wrong, fmt.Sprintf("%v: the mirror has %v, %v; the snapshot %v", k, w, ok, v))
			}
		}
		for k, w := range m.m {
			if _, ok := all[k]; !ok && len(wrong) < 5 {
				wrong = append(wrong, fmt.Sprintf("%v: the mirror has %v; the snapshot nothing", k, w))
			}
		}
		problem = fmt.Sprintf("after the changes from version %d to %d the mirror holds %d keys, the snapshot %d: %s",
			from, s.Version(), len(m.m), len(all), strings.Join(wrong, "; "))
	}
	m.prev = s
	return problem
}

// changesOf is netChanges for keys K and values V: random Stores, Deletes
// and batches over 60 keys (key(n) is the nth), which with slide move on
// by one every three steps, so that the table keeps growing and dropping
// the deleted, with a subscriber that catches up at random intervals and
// must find its mirror equal to each snapshot it catches up to.
func changesOf[K comparable, V any](t *testing.T, seed uint64, limit int, slide bool, key func(n int) K, vc valueCase[V]) {
	r := rand.New(rand.NewPCG(seed, 13))
	const keys = 60
	tb := New[K, V](0)
	tb.log.limit = limit
	sub := &mirrorOf[K, V]{m: map[K]V{}, cur: tb.Cursor(), same: vc.same}
	defer sub.cur.Close()
	pick := func(step int) K {
		if slide {
			return key(step/3 + r.IntN(keys))
		}
		return key(r.IntN(keys))
	}
	arr, grew := tb.meta.Load().arr, 0
	next := 0
	for step := range 3000 {
		switch op := r.IntN(20); {
		case op < 5:
			tb.Delete(pick(step))
		case op == 5:
			tb.Batch(func(b Batch[K, V]) {
				for range 1 + r.IntN(6) {
					if r.IntN(3) == 0 {
						b.Delete(pick(step))
					} else {
						b.Store(pick(step), vc.value(r, step))
					}
				}
			})
		default:
			tb.Store(pick(step), vc.value(r, step))
		}
		if r.IntN(5) == 0 {
			tb.Snapshot() // others' snapshots: the next Store makes a version
		}
		if a := tb.meta.Load().arr; a != arr {
			arr, grew = a, grew+1
		}
		if step == next {
			if p := sub.catchUpTo(tb.Snapshot()); p != "" {
				t.Fatalf("step %d: %s", step, p)
			}
			next += 1 + r.IntN(400)
		}
	}
	if p := sub.catchUpTo(tb.Snapshot()); p != "" {
		t.Fatalf("at the end: %s", p)
	}
	if grew == 0 {
		t.Fatal("the table never grew")
	}
}

// TestChangesOfOtherTypes runs the test of TestChangesAreTheNetChange with
// int and struct keys (boxed, which the cursor finds in the log, and by
// comparing snapshots slot by slot when its block is dropped), with
// values kept as words (float64 among them, whose zeros differ in their
// sign), as pointers, and boxed, and with int keys whose hashes collide.
// Most values are stored again and again, which is no change (but for
// boxed values, whose boxes differ).
func TestChangesOfOtherTypes(t *testing.T) {
	ptrs := []*tval{nil, {1}, {2}}
	few := map[string]func(*testing.T, uint64, int, bool){
		"int/uint64": func(t *testing.T, seed uint64, limit int, slide bool) {
			changesOf(t, seed, limit, slide, func(n int) int { return n*7919 - 500 }, valueCase[uint64]{
				func(r *rand.Rand, _ int) uint64 { return uint64(r.IntN(3)) }, equal[uint64]})
		},
		"int/float64": func(t *testing.T, seed uint64, limit int, slide bool) {
			changesOf(t, seed, limit, slide, func(n int) int { return n }, valueCase[float64]{
				func(r *rand.Rand, _ int) float64 { return floatValues[r.IntN(3)] }, sameBits})
		},
		"struct/uint64": func(t *testing.T, seed uint64, limit int, slide bool) {
			changesOf(t, seed, limit, slide, func(n int) nsName { return nsName{"ns" + strconv.Itoa(n%3), strconv.Itoa(n)} }, valueCase[uint64]{
				func(r *rand.Rand, _ int) uint64 { return uint64(r.IntN(3)) }, equal[uint64]})
		},
		"struct/pointer": func(t *testing.T, seed uint64, limit int, slide bool) {
			changesOf(t, seed, limit, slide, func(n int) nsName { return nsName{strconv.Itoa(n), ""} }, valueCase[*tval]{
				func(r *rand.Rand, _ int) *tval { return ptrs[r.IntN(len(ptrs))] }, equal[*tval]})
		},
		"struct/boxed": func(t *testing.T, seed uint64, limit int, slide bool) {
			changesOf(t, seed, limit, slide, func(n int) nsName { return nsName{"", strconv.Itoa(n)} }, valueCase[boxedPair]{
				func(r *rand.Rand, _ int) boxedPair { return boxedPair{"v", r.IntN(3)} }, equal[boxedPair]})
		},
	}
	for _, name := range slices.Sorted(maps.Keys(few)) {
		for _, limit := range []int{0, 4} {
			for _, slide := range []bool{false, true} {
				for seed := range uint64(3) {
					t.Run(fmt.Sprint(name, "/limit=", limit, "/slide=", slide, "/seed=", seed), func(t *testing.T) {
						few[name](t, seed, limit, slide)
					})
				}
			}
		}
	}
	t.Run("collisions", func(t *testing.T) {
		calls := collide(t, collisions[0].hash)
		for _, limit := range []int{0, 4} {
			for _, slide := range []bool{false, true} {
				t.Run(fmt.Sprint("limit=", limit, "/slide=", slide), func(t *testing.T) {
					few["int/uint64"](t, 0, limit, slide)
				})
			}
		}
		if calls.Load() == 0 {
			t.Fatal("the table never called hashOverride")
		}
	})
}
