package hamt

import (
	"fmt"
	"maps"
	"slices"
	"testing"
)

func TestZeroMap(t *testing.T) {
	var m Map[string, int]
	if m.Len() != 0 {
		t.Fatalf("Len = %d", m.Len())
	}
	if v, ok := m.Get("a"); ok || v != 0 {
		t.Fatalf("Get = %v, %v", v, ok)
	}
	d, ok := m.Delete("a")
	if ok || !d.Same(m) {
		t.Fatalf("Delete on empty map = %v, Same %v", ok, d.Same(m))
	}
	for k, v := range m.All() {
		t.Fatalf("All yielded %v=%v", k, v)
	}
	for k := range m.Keys() {
		t.Fatalf("Keys yielded %v", k)
	}
}

type op struct {
	del  bool
	key  string
	val  int
	want bool // for Delete: was present
}

func TestOps(t *testing.T) {
	tests := []struct {
		name string
		ops  []op
		want map[string]int
	}{
		{"empty", nil, map[string]int{}},
		{"one", []op{{key: "a", val: 1}}, map[string]int{"a": 1}},
		{"overwrite", []op{{key: "a", val: 1}, {key: "a", val: 2}}, map[string]int{"a": 2}},
		{"two", []op{{key: "a", val: 1}, {key: "b", val: 2}}, map[string]int{"a": 1, "b": 2}},
		{"delete only", []op{{key: "a", val: 1}, {del: true, key: "a", want: true}}, map[string]int{}},
		{"delete absent", []op{{key: "a", val: 1}, {del: true, key: "b"}}, map[string]int{"a": 1}},
		{"delete twice", []op{
			{key: "a", val: 1}, {key: "b", val: 2},
			{del: true, key: "a", want: true}, {del: true, key: "a"},
		}, map[string]int{"b": 2}},
		{"reinsert", []op{
			{key: "a", val: 1}, {del: true, key: "a", want: true}, {key: "a", val: 3},
		}, map[string]int{"a": 3}},
		{"empty key", []op{{key: "", val: 7}}, map[string]int{"": 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m Map[string, int]
			for _, o := range tt.ops {
				if o.del {
					var ok bool
					m, ok = m.Delete(o.key)
					if ok != o.want {
						t.Fatalf("Delete(%q) = %v, want %v", o.key, ok, o.want)
					}
				} else {
					m = m.Set(o.key, o.val)
				}
			}
			checkMap(t, m, tt.want)
		})
	}
}

func TestSetReturnsNewVersion(t *testing.T) {
	m := Map[int, int]{}.Set(1, 1)
	m2 := m.Set(1, 1)
	if m2.Same(m) {
		t.Fatal("Set returned the same version")
	}
	if !m.Same(m) || !m2.Same(m2) {
		t.Fatal("a map is not Same as itself")
	}
	if v, _ := m.Set(1, 2).Get(1); v != 2 {
		t.Fatalf("Get after overwrite = %d", v)
	}
	if v, _ := m.Get(1); v != 1 {
		t.Fatalf("old version changed to %d", v)
	}
}

func TestDeleteAbsentIsSame(t *testing.T) {
	m := buildMap(slices.Collect(intRange(1000)), func(k int) int { return k })
	for _, k := range []int{-1, 1000, 5000} {
		d, ok := m.Delete(k)
		if ok || !d.Same(m) {
			t.Fatalf("Delete(%d) = %v, Same %v", k, ok, d.Same(m))
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { m.Delete(-1) }); allocs != 0 {
		t.Fatalf("Delete of absent key allocates %v times", allocs)
	}
}

func TestDeleteToEmpty(t *testing.T) {
	m := Map[int, int]{}.Set(1, 1).Set(2, 2)
	m, _ = m.Delete(1)
	m, _ = m.Delete(2)
	if !m.Same(Map[int, int]{}) || m.Len() != 0 {
		t.Fatal("emptied map is not the zero Map")
	}
}

func TestGetDoesNotAllocate(t *testing.T) {
	m := buildMap(slices.Collect(intRange(1000)), func(k int) int { return k })
	if allocs := testing.AllocsPerRun(100, func() { m.Get(500) }); allocs != 0 {
		t.Fatalf("Get allocates %v times", allocs)
	}
}

// nodeName is a key type of a name of its own, as a partition's often is.
type nodeName string

// TestGetOfANamedKeyDoesNotAllocate is TestGetDoesNotAllocate for a
// named string key, which maphash.Comparable would hash by reflection,
// allocating, with the purego build tag.
func TestGetOfANamedKeyDoesNotAllocate(t *testing.T) {
	var m Map[nodeName, int]
	for i := range 1000 {
		m = m.Set(nodeName(fmt.Sprintf("node-%d", i)), i)
	}
	key := nodeName("node-500")
	if allocs := testing.AllocsPerRun(100, func() { m.Get(key) }); allocs != 0 {
		t.Fatalf("Get allocates %v times", allocs)
	}
	if v, ok := m.Get(key); !ok || v != 500 {
		t.Fatalf("Get(%q) = %d, %v", key, v, ok)
	}
}

func TestIterationStopsEarly(t *testing.T) {
	m := buildMap(slices.Collect(intRange(100)), func(k int) int { return k })
	n := 0
	for range m.All() {
		n++
		if n == 10 {
			break
		}
	}
	if n != 10 {
		t.Fatalf("All ran %d times", n)
	}
	n = 0
	for range m.Keys() {
		n++
		if n == 3 {
			break
		}
	}
	if n != 3 {
		t.Fatalf("Keys ran %d times", n)
	}
}

func TestIterationDeterministic(t *testing.T) {
	m := buildMap(slices.Collect(intRange(500)), func(k int) int { return k })
	first := slices.Collect(m.Keys())
	for range 3 {
		if again := slices.Collect(m.Keys()); !slices.Equal(first, again) {
			t.Fatal("iteration order changed between walks of one tree")
		}
	}
	var fromAll []int
	for k := range m.All() {
		fromAll = append(fromAll, k)
	}
	if !slices.Equal(first, fromAll) {
		t.Fatal("Keys and All disagree on order")
	}
}

func TestStructKeys(t *testing.T) {
	type key struct {
		ns, name string
	}
	var m Map[key, int]
	want := map[key]int{}
	for i := range 200 {
		k := key{ns: string(rune('a' + i%5)), name: string(rune('A' + i%40))}
		m = m.Set(k, i)
		want[k] = i
	}
	if got := toGoMap(m); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func intRange(n int) func(func(int) bool) {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// TestOwnedChanges checks SetOwned, DeleteOwned and GetHashed: they agree with Set and
// Delete (a random run against a Go map, shape checked), leave maps that
// hold nodes of other owners alone, and change their own nodes in place,
// so that replacing a value allocates nothing.
func TestOwnedChanges(t *testing.T) {
	base := buildMap(slices.Collect(intRange(300)), func(k int) int { return k })
	own := NewOwner()
	m := base
	want := toGoMap(base)
	for i := range 3000 {
		k := i * 37 % 400
		if i%7 == 0 {
			var found bool
			m, found = m.DeleteOwned(own, k, Hash(k))
			if _, had := want[k]; found != had {
				t.Fatalf("DeleteOwned(%d) = %v", k, found)
			}
			delete(want, k)
		} else {
			m = m.SetOwned(own, k, -i, Hash(k))
			if v, ok := m.GetHashed(k, Hash(k)); !ok || v != -i {
				t.Fatalf("GetHashed(%d) = %d, %v after SetOwned; want %d, true", k, v, ok, -i)
			}
			want[k] = -i
		}
		if i%500 == 0 {
			own = NewOwner() // as a subscription does when its snapshot is taken
		}
	}
	checkMap(t, m, want)
	if err := invariants(m); err != nil {
		t.Fatal(err)
	}
	if !sameShape(m, buildMap(slices.Collect(maps.Keys(want)), func(k int) int { return want[k] })) {
		t.Fatal("owned changes left a shape a fresh build does not have")
	}
	checkMap(t, base, toGoMap(buildMap(slices.Collect(intRange(300)), func(k int) int { return k })))

	own = NewOwner()
	m = base.SetOwned(own, 1, 100, Hash(1)) // copies base's path under own
	before := m
	if allocs := testing.AllocsPerRun(100, func() { m = m.SetOwned(own, 1, 200, Hash(1)) }); allocs != 0 {
		t.Fatalf("replacing a value in owned nodes allocates %v times", allocs)
	}
	if !m.Same(before) {
		t.Fatal("replacing a value in owned nodes made a new root")
	}
	if v, _ := base.Get(1); v != 1 {
		t.Fatalf("base changed: Get(1) = %d", v)
	}
	if m2 := m.SetOwned(0, 1, 300, Hash(1)); m2.Same(m) {
		t.Fatal("SetOwned with no owner changed the map in place")
	}
}

// TestIterationStopsAnywhere stops the walk at many places of a map large
// enough for eachChild to read children ahead: each stop must give exactly
// the prefix of the whole walk, values included. It runs with int entries,
// with keys narrower than a word, and with entries wider than a cache line.
func TestIterationStopsAnywhere(t *testing.T) {
	t.Run("int", func(t *testing.T) {
		stopsAnywhere(t, func(i int) int { return i }, func(k int) int { return -k })
	})
	t.Run("narrow keys", func(t *testing.T) {
		stopsAnywhere(t, func(i int) uint16 { return uint16(i) }, func(k uint16) int { return -int(k) })
	})
	t.Run("wide entries", func(t *testing.T) {
		stopsAnywhere(t, func(i int) [3]string { return [3]string{fmt.Sprint(i), "b", "c"} },
			func(k [3]string) [12]int { return [12]int{len(k[0]), 11: 7} })
	})
}

func stopsAnywhere[K comparable, V comparable](t *testing.T, key func(int) K, val func(K) V) {
	const n = 5000
	keys := make([]K, n)
	for i := range keys {
		keys[i] = key(i)
	}
	m := buildMap(keys, val)
	type kv struct {
		k K
		v V
	}
	var full []kv
	for k, v := range m.All() {
		full = append(full, kv{k, v})
	}
	if len(full) != n {
		t.Fatalf("All gave %d entries, want %d", len(full), n)
	}
	seen := map[K]bool{}
	for _, e := range full {
		if e.v != val(e.k) || seen[e.k] {
			t.Fatalf("entry %v is wrong or repeated", e)
		}
		seen[e.k] = true
	}
	for stop := 1; stop <= n; stop += 1 + stop/7 {
		var got []kv
		for k, v := range m.All() {
			got = append(got, kv{k, v})
			if len(got) == stop {
				break
			}
		}
		if !slices.Equal(got, full[:stop]) {
			t.Fatalf("stopping after %d gave a different prefix", stop)
		}
	}
}
