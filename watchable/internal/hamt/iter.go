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
			m.root.each(yield, shapeOf[V]())
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

// each calls yield for every entry below n, whose values have the shape
// sh, and reports false as soon as yield does, so an early break stops the
// whole walk.
func (n *node[K, V]) each(yield func(K, V) bool, sh shape) bool {
	es := n.entries()
	for i := range es {
		if !yield(es[i].key, loadValAs(&es[i].val, sh)) {
			return false
		}
	}
	return n.eachChild(yield, sh)
}

// maxGather is the largest entry eachChild reads ahead into its frame, 32
// at a time; larger ones are walked plainly.
const maxGather = 64

// eachChild walks the subtrees of n's children, in slot order.
//
// A large map's nodes lie scattered over memory, so walking them one after
// the other would meet one cache miss at a time. Instead, the children's
// nodes are read first, then (in warm) their children's, then the
// children's first and last entries, each pass a loop whose reads do not
// depend on one another: the processor overlaps those misses, and the walk
// then finds the children in cache.
func (n *node[K, V]) eachChild(yield func(K, V) bool, sh shape) bool {
	kids := n.children()
	if len(kids) < 2 || unsafe.Sizeof(entry[K, V]{}) > maxGather {
		for i := range kids {
			if !loadChild(&kids[i]).each(yield, sh) {
				return false
			}
		}
		return true
	}
	var (
		nodes  [1 << bitsPerLevel]*node[K, V]
		ents   [1 << bitsPerLevel]*entry[K, V]
		firsts [1 << bitsPerLevel]entry[K, V]
		lasts  [1 << bitsPerLevel]entry[K, V]
	)
	for i := range kids {
		nodes[i] = loadChild(&kids[i])
	}
	for i := range kids {
		ents[i] = nodes[i].ents
	}
	warm(nodes[:len(kids)])
	for i := range kids {
		if ents[i] != nil {
			firsts[i] = entry[K, V]{ents[i].key, loadValAs(&ents[i].val, sh)}
		}
	}
	for i := range kids {
		if es := nodes[i].entries(); len(es) > 1 {
			lasts[i] = entry[K, V]{es[len(es)-1].key, loadValAs(&es[len(es)-1].val, sh)}
		}
	}
	for i := range kids {
		c := nodes[i]
		if es := c.entries(); len(es) > 0 {
			if !yield(firsts[i].key, firsts[i].val) {
				return false
			}
			for j := 1; j < len(es)-1; j++ {
				if !yield(es[j].key, loadValAs(&es[j].val, sh)) {
					return false
				}
			}
			if len(es) > 1 && !yield(lasts[i].key, lasts[i].val) {
				return false
			}
		}
		if !c.eachChild(yield, sh) {
			return false
		}
	}
	return true
}

// warm reads the node and the first and last entries of the grandchildren
// of the nodes in kids (up to 256 of them), each pass over all of them
// before the next, so that their cache misses overlap. It returns a value
// made of what it read, and is never inlined, so that the reads are not
// optimized away; it reads only keys, never values a writer may be
// replacing in place.
//
//go:noinline
func warm[K comparable, V any](kids []*node[K, V]) uintptr {
	var (
		grand [256]*node[K, V]
		g     int
		x     uintptr
	)
	for _, k := range kids {
		if k.kids == nil {
			continue
		}
		for j := range bits.OnesCount32(k.nodeMap) {
			if g == len(grand) {
				break
			}
			grand[g] = loadChild(childAt(k.kids, j))
			g++
		}
	}
	for i := range g {
		x += uintptr(unsafe.Pointer(grand[i].ents))
	}
	if unsafe.Sizeof(*new(K)) < unsafe.Sizeof(x) {
		return x // the first word of an entry is not its key's
	}
	for i := range g {
		es := grand[i].entries()
		if len(es) > 0 {
			x += *(*uintptr)(unsafe.Pointer(&es[0]))
		}
		if len(es) > 1 {
			x += *(*uintptr)(unsafe.Pointer(&es[len(es)-1]))
		}
	}
	return x
}
