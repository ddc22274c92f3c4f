package watchable_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// item is a value type with pointers and a DeepCopy method, like the types
// deepcopy-gen writes for Kubernetes.
type item struct {
	Name string
	Tags []string
}

func (i *item) DeepCopy() *item {
	if i == nil {
		return nil
	}
	c := *i
	c.Tags = append([]string(nil), i.Tags...)
	return &c
}

func TestLoadStoreDelete(t *testing.T) {
	var m watchable.Map[string, int]
	if _, ok := m.Load("a"); ok {
		t.Fatal("Load on an empty map found a value")
	}
	m.Store("a", 1)
	m.Store("b", 2)
	if v, ok := m.Load("a"); !ok || v != 1 {
		t.Fatalf("Load(a) = %v, %v; want 1, true", v, ok)
	}
	if got := m.Len(); got != 2 {
		t.Fatalf("Len = %d; want 2", got)
	}
	m.Delete("a")
	if _, ok := m.Load("a"); ok {
		t.Fatal("Load(a) after Delete found a value")
	}
	if diff := cmp.Diff(map[string]int{"b": 2}, m.LoadAll()); diff != "" {
		t.Fatalf("LoadAll (-want +got):\n%s", diff)
	}
}

func TestRevisionCountsEffectiveWritesOnly(t *testing.T) {
	var m watchable.Map[string, int]
	steps := []struct {
		name string
		do   func()
		want uint64
	}{
		{"store new", func() { m.Store("a", 1) }, 1},
		{"store equal", func() { m.Store("a", 1) }, 1},
		{"store changed", func() { m.Store("a", 2) }, 2},
		{"delete missing", func() { m.Delete("zz") }, 2},
		{"delete present", func() { m.Delete("a") }, 3},
		{"load or store, stores", func() { m.LoadOrStore("a", 1) }, 4},
		{"load or store, loads", func() { m.LoadOrStore("a", 9) }, 4},
		{"compare and swap, mismatch", func() { m.CompareAndSwap("a", 7, 8) }, 4},
		{"compare and swap, match", func() { m.CompareAndSwap("a", 1, 8) }, 5},
		{"load and delete, missing", func() { m.LoadAndDelete("zz") }, 5},
		{"load and delete, present", func() { m.LoadAndDelete("a") }, 6},
		{"empty batch", func() { m.Batch(func(*watchable.Batch[string, int]) {}) }, 6},
		{"batch of three", func() {
			m.Batch(func(b *watchable.Batch[string, int]) { b.Store("x", 1); b.Store("y", 2); b.Store("z", 3) })
		}, 7},
		{"replace, same", func() { m.Replace(map[string]int{"x": 1, "y": 2, "z": 3}) }, 7},
		{"replace, changed", func() { m.Replace(map[string]int{"x": 1, "w": 4}) }, 8},
	}
	for _, s := range steps {
		s.do()
		if got := m.Revision(); got != s.want {
			t.Fatalf("after %s: Revision = %d; want %d", s.name, got, s.want)
		}
	}
	if diff := cmp.Diff(map[string]int{"x": 1, "w": 4}, m.LoadAll()); diff != "" {
		t.Fatalf("contents (-want +got):\n%s", diff)
	}
}

func TestLoadOrStore(t *testing.T) {
	var m watchable.Map[string, int]
	if v, loaded := m.LoadOrStore("a", 1); loaded || v != 1 {
		t.Fatalf("first LoadOrStore = %v, %v; want 1, false", v, loaded)
	}
	if v, loaded := m.LoadOrStore("a", 2); !loaded || v != 1 {
		t.Fatalf("second LoadOrStore = %v, %v; want 1, true", v, loaded)
	}
}

func TestLoadAndDelete(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	if v, ok := m.LoadAndDelete("a"); !ok || v != 1 {
		t.Fatalf("LoadAndDelete = %v, %v; want 1, true", v, ok)
	}
	if v, ok := m.LoadAndDelete("a"); ok || v != 0 {
		t.Fatalf("LoadAndDelete of a missing key = %v, %v; want 0, false", v, ok)
	}
}

func TestCompareAndSwap(t *testing.T) {
	var m watchable.Map[string, *item]
	if m.CompareAndSwap("a", nil, &item{Name: "x"}) {
		t.Fatal("CompareAndSwap on a missing key swapped")
	}
	m.Store("a", &item{Name: "x", Tags: []string{"t"}})
	if m.CompareAndSwap("a", &item{Name: "y"}, &item{Name: "z"}) {
		t.Fatal("CompareAndSwap with a different old value swapped")
	}
	if !m.CompareAndSwap("a", &item{Name: "x", Tags: []string{"t"}}, &item{Name: "z"}) {
		t.Fatal("CompareAndSwap with a deep-equal old value did not swap")
	}
	if v, _ := m.Load("a"); v.Name != "z" {
		t.Fatalf("after swap: %+v", v)
	}
}

func TestLoadAllMatching(t *testing.T) {
	var m watchable.Map[int, int]
	for i := range 10 {
		m.Store(i, i*i)
	}
	got := m.LoadAllMatching(func(k, v int) bool { return k%2 == 0 && v > 10 })
	if diff := cmp.Diff(map[int]int{4: 16, 6: 36, 8: 64}, got); diff != "" {
		t.Fatalf("LoadAllMatching (-want +got):\n%s", diff)
	}
}

func TestStoreAndLoadCopyValues(t *testing.T) {
	var m watchable.Map[string, *item]
	mine := &item{Name: "a", Tags: []string{"one"}}
	m.Store("k", mine)
	mine.Tags[0] = "mutated after Store"
	mine.Name = "mutated"

	loaded, _ := m.Load("k")
	if loaded.Name != "a" || loaded.Tags[0] != "one" {
		t.Fatalf("Store kept the caller's memory: %+v", loaded)
	}
	loaded.Tags[0] = "mutated after Load"
	all := m.LoadAll()
	all["k"].Tags[0] = "mutated after LoadAll"
	if v, _ := m.State().Get("k"); v.Tags[0] != "one" {
		t.Fatalf("Load or LoadAll returned the map's memory: %+v", v)
	}
}

func TestWritesAfterCloseAreIgnored(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	m.Close()
	m.Close() // idempotent
	m.Store("a", 2)
	m.Store("b", 2)
	m.Delete("a")
	m.Batch(func(b *watchable.Batch[string, int]) { b.Store("c", 3) })
	m.Replace(map[string]int{})
	if m.CompareAndSwap("a", 1, 5) {
		t.Error("CompareAndSwap after Close reported a swap")
	}
	if v, loaded := m.LoadOrStore("d", 4); loaded || v != 4 {
		t.Errorf("LoadOrStore after Close = %v, %v; want 4, false", v, loaded)
	}
	if v, ok := m.LoadAndDelete("a"); !ok || v != 1 {
		t.Errorf("LoadAndDelete after Close = %v, %v; want 1, true", v, ok)
	}
	if diff := cmp.Diff(map[string]int{"a": 1}, m.LoadAll()); diff != "" {
		t.Fatalf("contents after writes on a closed map (-want +got):\n%s", diff)
	}
	if m.Revision() != 1 {
		t.Fatalf("Revision = %d; want 1", m.Revision())
	}
}

func TestStateIsImmutable(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	s := m.State()
	m.Store("a", 2)
	m.Store("b", 3)
	m.Delete("a")
	if diff := cmp.Diff(map[string]int{"a": 1}, s.Map()); diff != "" {
		t.Fatalf("old State changed (-want +got):\n%s", diff)
	}
	if v, ok := s.Get("a"); !ok || v != 1 || s.Len() != 1 {
		t.Fatalf("old State: Get = %v, %v; Len = %d", v, ok, s.Len())
	}
	keys := 0
	for k := range s.Keys() {
		if k != "a" {
			t.Fatalf("Keys yielded %q", k)
		}
		keys++
	}
	if keys != 1 {
		t.Fatalf("Keys yielded %d keys; want 1", keys)
	}
	var zero watchable.State[string, int]
	if zero.Len() != 0 || len(zero.Map()) != 0 {
		t.Fatal("the zero State is not empty")
	}
}
