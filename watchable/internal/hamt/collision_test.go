package hamt

import (
	"testing"
)

// With every hash equal, all keys share one path to a collision node below
// the last level.
func TestFullCollisions(t *testing.T) {
	useHash(t, func(int) uint64 { return 42 })
	var m Map[int, int]
	want := map[int]int{}
	for i := range 10 {
		m = m.Set(i, i)
		want[i] = i
	}
	checkMap(t, m, want)

	depth := 0
	n := m.root
	for len(n.children()) > 0 {
		if len(n.entries()) != 0 || len(n.children()) != 1 {
			t.Fatalf("level %d: %d entries, %d children", depth, len(n.entries()), len(n.children()))
		}
		n = n.children()[0]
		depth++
	}
	if levels := (hashBits + bitsPerLevel - 1) / bitsPerLevel; depth != levels {
		t.Fatalf("collision node at depth %d, want %d", depth, levels)
	}
	if len(n.entries()) != 10 {
		t.Fatalf("collision node holds %d entries", len(n.entries()))
	}

	m = m.Set(3, 33)
	want[3] = 33
	checkMap(t, m, want)
	if _, ok := m.Get(10); ok {
		t.Fatal("Get found an absent colliding key")
	}
	if d, ok := m.Delete(10); ok || !d.Same(m) {
		t.Fatal("Delete of an absent colliding key changed the map")
	}

	for i := range 9 {
		m, _ = m.Delete(i)
		delete(want, i)
		checkMap(t, m, want)
	}
	// The last key is folded all the way back up into the root.
	if len(m.root.entries()) != 1 || len(m.root.children()) != 0 {
		t.Fatalf("last colliding key not inline in root: %d entries, %d children",
			len(m.root.entries()), len(m.root.children()))
	}
}

// Keys whose hashes agree on all but the last level split there rather than
// in a collision node.
func TestSplitAtLastLevel(t *testing.T) {
	useHash(t, func(k int) uint64 { return uint64(k) << 60 })
	m := buildMap([]int{1, 2, 15}, func(k int) int { return k })
	checkMap(t, m, map[int]int{1: 1, 2: 2, 15: 15})
	n := m.root
	for range hashBits / bitsPerLevel {
		if len(n.children()) != 1 {
			t.Fatalf("expected a single-child chain, got %d children", len(n.children()))
		}
		n = n.children()[0]
	}
	if len(n.entries()) != 3 || len(n.children()) != 0 {
		t.Fatalf("last level holds %d entries, %d children", len(n.entries()), len(n.children()))
	}
}

// A collision list inside a wider tree, changed through a Txn.
func TestCollisionsInTxn(t *testing.T) {
	useHash(t, func(k int) uint64 { return uint64(k % 4) })
	base := buildMap([]int{0, 1, 2, 3, 4}, func(k int) int { return k })
	tx := base.Txn()
	for i := 5; i < 40; i++ {
		tx.Set(i, i)
	}
	for i := 0; i < 40; i += 4 {
		tx.Delete(i)
	}
	tx.Set(1, 100)
	m := tx.Commit()
	want := map[int]int{}
	for i := range 40 {
		if i%4 != 0 {
			want[i] = i
		}
	}
	want[1] = 100
	checkMap(t, m, want)
	checkMap(t, base, map[int]int{0: 0, 1: 1, 2: 2, 3: 3, 4: 4})
}
