package hamt

import (
	"fmt"
	"maps"
	"testing"
)

// Tests that swap the hash must not run in parallel with anything: the
// override is a package variable.

// useHash makes Maps with int keys hash with f until the test ends.
func useHash(tb testing.TB, f func(int) uint64) {
	tb.Helper()
	if f == nil {
		return
	}
	prev := hashOverride
	hashOverride = func(k any) uint64 { return f(k.(int)) }
	tb.Cleanup(func() { hashOverride = prev })
}

// hashes are the degenerate hash functions the collision-sensitive tests run
// under, besides the real one (nil).
var hashes = []struct {
	name string
	f    func(int) uint64
}{
	{"seeded", nil},
	// Every key collides: a single chain of nodes ending in one collision list.
	{"constant", func(int) uint64 { return 0x5555_5555_5555_5555 }},
	// Few distinct hashes that agree on the low 60 bits, so keys travel down a
	// long chain and split at the last, four-bit level or collide.
	{"top-bits", func(k int) uint64 { return uint64(k%5) << 60 }},
	// A handful of distinct full hashes spread at the root: some levels fan
	// out, most keys end up in collision lists.
	{"low-bits", func(k int) uint64 { return uint64(k % 7) }},
	// Collisions only on the low 10 bits: two levels of sharing, then a split.
	{"shared-prefix", func(k int) uint64 { return uint64(k%3) | uint64(k)<<10 }},
}

func toGoMap[K comparable, V any](m Map[K, V]) map[K]V {
	out := make(map[K]V, m.Len())
	for k, v := range m.All() {
		if _, dup := out[k]; dup {
			panic(fmt.Sprintf("key %v yielded twice", k))
		}
		out[k] = v
	}
	return out
}

// checkMap compares m with want through every read method and checks the
// trie invariants.
func checkMap[K comparable, V comparable](tb testing.TB, m Map[K, V], want map[K]V) {
	tb.Helper()
	if m.Len() != len(want) {
		tb.Fatalf("Len = %d, want %d", m.Len(), len(want))
	}
	if got := toGoMap(m); !maps.Equal(got, want) {
		tb.Fatalf("All = %v, want %v", got, want)
	}
	for k, v := range want {
		if got, ok := m.Get(k); !ok || got != v {
			tb.Fatalf("Get(%v) = %v, %v; want %v, true", k, got, ok, v)
		}
	}
	n := 0
	for range m.Keys() {
		n++
	}
	if n != len(want) {
		tb.Fatalf("Keys yielded %d keys, want %d", n, len(want))
	}
	if err := invariants(m); err != nil {
		tb.Fatal(err)
	}
}

// invariants checks the structural rules the rest of the package relies on:
// bitmaps agree with array lengths, every key sits on its hash path, non-root
// nodes hold at least two entries, singletons are folded into their parent,
// and the size is right.
func invariants[K comparable, V any](m Map[K, V]) error {
	if m.root == nil {
		if m.size != 0 {
			return fmt.Errorf("nil root with size %d", m.size)
		}
		return nil
	}
	count, err := checkNode(m.root, 0, 0, true)
	if err != nil {
		return err
	}
	if count != m.size {
		return fmt.Errorf("size %d, trie holds %d", m.size, count)
	}
	if count == 0 {
		return fmt.Errorf("empty map with non-nil root")
	}
	return nil
}

func checkNode[K comparable, V any](n *node[K, V], prefix uint64, shift uint, root bool) (int, error) {
	if shift >= hashBits {
		if n.dataMap != 0 || n.nodeMap != uint32(len(n.entries())) || len(n.children()) != 0 {
			return 0, fmt.Errorf("collision node with bitmap or children")
		}
		if len(n.entries()) < 2 {
			return 0, fmt.Errorf("collision node with %d entries", len(n.entries()))
		}
		seen := make(map[K]bool, len(n.entries()))
		for _, e := range n.entries() {
			if h := hashOf(e.key); h != prefix {
				return 0, fmt.Errorf("key %v hash %#x in collision node %#x", e.key, h, prefix)
			}
			if seen[e.key] {
				return 0, fmt.Errorf("duplicate key %v in collision node", e.key)
			}
			seen[e.key] = true
		}
		return len(n.entries()), nil
	}
	if n.dataMap&n.nodeMap != 0 {
		return 0, fmt.Errorf("slot both entry and child at shift %d", shift)
	}
	if popcount(n.dataMap) != len(n.entries()) || popcount(n.nodeMap) != len(n.children()) {
		return 0, fmt.Errorf("bitmaps disagree with arrays at shift %d", shift)
	}
	low := uint64(1)<<shift - 1
	for i, e := range n.entries() {
		h := hashOf(e.key)
		if h&low != prefix {
			return 0, fmt.Errorf("key %v off its hash path at shift %d", e.key, shift)
		}
		if bitpos(h, shift) != nthBit(n.dataMap, i) {
			return 0, fmt.Errorf("key %v in wrong slot at shift %d", e.key, shift)
		}
	}
	count := len(n.entries())
	for i := range n.children() {
		slot := uint64(index32(nthBit(n.nodeMap, i)))
		c, err := checkNode(n.children()[i], prefix|slot<<shift, shift+bitsPerLevel, false)
		if err != nil {
			return 0, err
		}
		count += c
	}
	if !root && count < 2 {
		return 0, fmt.Errorf("non-root node holding %d entries at shift %d", count, shift)
	}
	return count, nil
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// nthBit is the i-th lowest set bit of x.
func nthBit(x uint32, i int) uint32 {
	for ; i > 0; i-- {
		x &= x - 1
	}
	return x & -x
}

func index32(bit uint32) int {
	n := 0
	for bit > 1 {
		bit >>= 1
		n++
	}
	return n
}

// sameShape reports whether two tries have identical structure and contents:
// the same bitmaps, entries in the same slots and equal subtrees. Collision
// lists are compared as sets, since their order follows insertion history.
func sameShape[K comparable, V comparable](a, b Map[K, V]) bool {
	if (a.root == nil) != (b.root == nil) || a.size != b.size {
		return false
	}
	return a.root == nil || sameNode(a.root, b.root, 0)
}

func sameNode[K comparable, V comparable](a, b *node[K, V], shift uint) bool {
	if shift >= hashBits {
		if len(a.entries()) != len(b.entries()) {
			return false
		}
		want := make(map[K]V, len(a.entries()))
		for _, e := range a.entries() {
			want[e.key] = e.val
		}
		for _, e := range b.entries() {
			if v, ok := want[e.key]; !ok || v != e.val {
				return false
			}
		}
		return true
	}
	if a.dataMap != b.dataMap || a.nodeMap != b.nodeMap ||
		len(a.entries()) != len(b.entries()) || len(a.children()) != len(b.children()) {
		return false
	}
	for i := range a.entries() {
		if a.entries()[i] != b.entries()[i] {
			return false
		}
	}
	for i := range a.children() {
		if !sameNode(a.children()[i], b.children()[i], shift+bitsPerLevel) {
			return false
		}
	}
	return true
}

// buildMap makes a Map from scratch with plain Set calls.
func buildMap[K comparable, V any](keys []K, val func(K) V) Map[K, V] {
	var m Map[K, V]
	for _, k := range keys {
		m = m.Set(k, val(k))
	}
	return m
}
