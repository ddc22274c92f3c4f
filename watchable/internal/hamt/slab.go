package hamt

import "unsafe"

// slabs hands out the blocks of a large Fill (see newNodeIn, newLeafIn and
// slabEntries) from arrays of slabBytes, one array of each block type at a
// time, rather than one allocation per block.
//
// The blocks are laid out as before, a node with its children or its
// entries; what changes is what the collector sees. Go's collector (from
// Go 1.26 by default) marks small objects span by span: it sets an
// object's mark bit and queues its span, and scans a span's marked objects
// together, which pays when many of them are marked by the time the span's
// turn comes. A trie is found one level at a time, and each of its hundreds
// of thousands of small nodes tends to be marked alone in its span: a full
// collection of a million Kubernetes-style values took twice as long in a
// trie as in a Go map, whose pointers lie in large arrays scanned in
// sequence. An array of blocks is one large object, scanned in sequence
// too.
//
// A slab stays alive as long as any of its blocks does. Blocks replaced by
// path copies (while a subscriber or a State holds a version) are
// therefore freed only when all the blocks of their array are; a map filled
// at once and then rewritten everywhere holds up to a second copy of its
// nodes until then. Writes in place (transient ownership, a Live map's
// puts) replace nothing.
type slabs struct {
	blocks [blockClasses]any // *[]B: the rest of the array of class i
	ents   any               // *[]entry[K, V]: entries of inner nodes
}

// blockClasses is the number of block types newNodeIn and newLeafIn use.
const blockClasses = 18

// slabBytes is the size of one array of blocks: large enough that the
// collector scans it as one object rather than block by block (past 512
// bytes), small enough that the array a Fill leaves unfinished in each
// class wastes little.
const slabBytes = 4096

// slabFill is the least number of items for which Fill takes its blocks
// from slabs: below it, the nodes are few enough for the collector, and
// the unfinished arrays (up to blockClasses of them) would weigh on a small
// map's memory.
const slabFill = 1 << 15

// take returns a zeroed block of type B, the block type of class i: from
// sl's array of that class, or a new allocation if sl is nil.
func take[B any](sl *slabs, i int) *B {
	if sl == nil {
		return new(B)
	}
	rest, _ := sl.blocks[i].(*[]B)
	if rest == nil {
		rest = new([]B)
		sl.blocks[i] = rest
	}
	if len(*rest) == 0 {
		var b B
		*rest = make([]B, max(1, slabBytes/int(unsafe.Sizeof(b))))
	}
	b := &(*rest)[0]
	*rest = (*rest)[1:]
	return b
}

// slabEntries returns a zeroed entries array of length and capacity n,
// from sl's array of entries, or a new allocation if sl is nil.
func slabEntries[K comparable, V any](sl *slabs, n int) []entry[K, V] {
	if sl == nil {
		return make([]entry[K, V], n)
	}
	rest, _ := sl.ents.(*[]entry[K, V])
	if rest == nil {
		rest = new([]entry[K, V])
		sl.ents = rest
	}
	if len(*rest) < n {
		*rest = make([]entry[K, V], max(n, slabBytes/int(unsafe.Sizeof(entry[K, V]{}))))
	}
	es := (*rest)[:n:n]
	*rest = (*rest)[n:]
	return es
}
