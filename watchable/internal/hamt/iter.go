package hamt

import (
	"iter"
	"math/bits"
	"unsafe"
)

// All iterates over all entries in unspecified but deterministic order for a
// given tree: within a node, inline entries come before children, each in slot
// order.
func (m Map[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		if m.root != nil {
			m.root.each(yield)
		}
	}
}

// Keys iterates over all keys in the same order as All.
func (m Map[K, V]) Keys() iter.Seq[K] {
	return func(yield func(K) bool) {
		for k := range m.All() {
			if !yield(k) {
				return
			}
		}
	}
}

// each calls yield for every entry below n, and reports false as soon as
// yield does, so an early break stops the whole walk.
func (n *node[K, V]) each(yield func(K, V) bool) bool {
	es := n.entries()
	for i := range es {
		if !yield(es[i].key, es[i].val) {
			return false
		}
	}
	return n.eachChild(yield)
}

// eachChild walks the subtrees of n's children, in slot order.
//
// A large map's nodes lie scattered over memory, so walking them one after
// the other would meet one cache miss at a time. Instead, warm first reads
// the children's nodes, their children's, and the first and last entries of
// both, each pass a loop whose reads do not depend on one another: the
// processor overlaps those misses, and the walk then finds the children in
// cache.
func (n *node[K, V]) eachChild(yield func(K, V) bool) bool {
	kids := n.children()
	if len(kids) < 2 {
		for i := range kids {
			if !kids[i].each(yield) {
				return false
			}
		}
		return true
	}
	warm(kids)
	for i := range kids {
		c := kids[i]
		es := c.entries()
		for j := range es {
			if !yield(es[j].key, es[j].val) {
				return false
			}
		}
		if c.kids != nil && !c.eachChild(yield) {
			return false
		}
	}
	return true
}

// warm reads the nodes in kids, their children (up to 256 of them), and
// the first and last entries of both, each pass over all of them before the
// next, so that their cache misses overlap. It returns a value made of what
// it read, and is never inlined, so that the reads are not optimized away.
// Of an entry it reads the first byte of the key.
//
//go:noinline
func warm[K comparable, V any](kids []*node[K, V]) uintptr {
	var (
		grand [256]*node[K, V]
		g     int
		x     uintptr
	)
	for _, k := range kids {
		x += uintptr(unsafe.Pointer(k.ents))
	}
	for _, k := range kids {
		if k.kids == nil {
			continue
		}
		for j := range bits.OnesCount32(k.nodeMap) {
			if g == len(grand) {
				break
			}
			grand[g] = *childAt(k.kids, j)
			g++
		}
	}
	for i := range g {
		x += uintptr(unsafe.Pointer(grand[i].ents))
	}
	if unsafe.Sizeof(*new(K)) == 0 {
		return x // an entry's first byte is not its key's
	}
	for _, k := range kids {
		x += firstAndLast(k.entries())
	}
	for i := range g {
		x += firstAndLast(grand[i].entries())
	}
	return x
}

// firstAndLast reads the first byte of the keys of the first and the last
// of es, whose keys are not empty types.
func firstAndLast[K comparable, V any](es []entry[K, V]) uintptr {
	var x uintptr
	if len(es) > 0 {
		x += uintptr(*(*uint8)(unsafe.Pointer(&es[0].key)))
	}
	if len(es) > 1 {
		x += uintptr(*(*uint8)(unsafe.Pointer(&es[len(es)-1].key)))
	}
	return x
}
