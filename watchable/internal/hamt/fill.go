package hamt

import "math/bits"

// An Item is a key, its hash (Hash(Key)) and a value, for Txn.Fill.
type Item[K comparable, V any] struct {
	Key  K
	Hash uint64
	Val  V
}

// Fill sets every item into t, which must be empty, in order: the map it
// makes is the one that SetHashedUnless for each item in turn would make.
// For a key set more than once, keep is asked, for each later item of that
// key in turn, whether the map keeps the value it holds so far (that of
// item held) rather than take that of item later; a nil keep never keeps.
//
// Fill builds the trie at once rather than one item after the other: it
// sorts the items by hash, level by level, and allocates every node once,
// at its final size, each before the nodes below it. Set one by one, the
// items would copy or grow a node per Set, leave the old ones to the
// collector, and scatter the nodes over the heap in the order of the
// keys; filled, the nodes lie in memory roughly in the order a walk of the
// trie visits them, and All reads a large map about twice as fast.
func (t *Txn[K, V]) Fill(items []Item[K, V], keep func(held, later int) bool) {
	t.live()
	if t.root != nil {
		panic("hamt: Fill of a Txn that is not empty")
	}
	if len(items) == 0 {
		return
	}
	if len(items) > 1<<31-1 {
		panic("hamt: Fill of more than 2³¹-1 items")
	}
	f := filler[K, V]{items: items, keep: keep, own: t.own}
	a := make([]int32, 2*len(items))
	src, dst := a[:len(items)], a[len(items):]
	for i := range src {
		src[i] = int32(i)
	}
	t.root = f.node(src, dst, 0)
	t.size = f.size
}

// filler builds the trie of one Fill.
type filler[K comparable, V any] struct {
	items []Item[K, V]
	keep  func(held, later int) bool
	own   uint64
	size  int // keys placed so far
}

// node returns the node at the level that starts at shift holding the
// items whose indices are in src, in the order they were set; dst is as
// long as src and is scratch. Below the root, src holds at least two
// distinct keys.
func (f *filler[K, V]) node(src, dst []int32, shift uint) *node[K, V] {
	if shift >= hashBits {
		es := f.distinct(src)
		f.size += len(es)
		return collision(f.own, es)
	}
	// Sort src into dst by the slot each item takes here, keeping the
	// order of the items within a slot (a counting sort).
	var count [fanout]int32
	for _, i := range src {
		count[(f.items[i].Hash>>shift)&levelMask]++
	}
	var start [fanout]int32
	var dataMap, nodeMap uint32
	at := int32(0)
	for s := range count {
		start[s] = at
		at += count[s]
		switch {
		case count[s] == 0:
		case count[s] == 1:
			dataMap |= 1 << s
		default:
			nodeMap |= 1 << s
		}
	}
	next := start
	for _, i := range src {
		s := (f.items[i].Hash >> shift) & levelMask
		dst[next[s]] = i
		next[s]++
	}
	// A slot whose items all set one key (always the same hash) holds
	// an entry, not a child.
	for m := nodeMap; m != 0; m &= m - 1 {
		s := bits.TrailingZeros32(m)
		if f.oneKey(dst[start[s] : start[s]+count[s]]) {
			dataMap |= 1 << s
			nodeMap &^= 1 << s
		}
	}
	nData, nKids := bits.OnesCount32(dataMap), bits.OnesCount32(nodeMap)
	var (
		n    *node[K, V]
		es   []entry[K, V]
		kids []*node[K, V]
	)
	if nKids == 0 {
		n, es = newLeaf[K, V](nData)
	} else {
		n, kids = newNode[K, V](nKids)
		if nData > 0 {
			es = make([]entry[K, V], nData)
		}
	}
	n.dataMap, n.nodeMap, n.owner = dataMap, nodeMap, f.own
	if nData > 0 {
		n.ents = &es[0]
	}
	if nKids > 0 {
		n.kids = &kids[0]
	}
	d, k := 0, 0
	for m := dataMap | nodeMap; m != 0; m &= m - 1 {
		s := bits.TrailingZeros32(m)
		group := dst[start[s] : start[s]+count[s]]
		if dataMap&(1<<s) != 0 {
			it := &f.items[f.last(group)]
			es[d] = entry[K, V]{key: it.Key, val: it.Val}
			f.size++
			d++
			continue
		}
		// The group's items, in dst, are sorted into src's same range.
		kids[k] = f.node(group, src[start[s]:start[s]+count[s]], shift+bitsPerLevel)
		k++
	}
	return n
}

// oneKey reports whether the items in group (at least two) all set the
// same key.
func (f *filler[K, V]) oneKey(group []int32) bool {
	first := &f.items[group[0]]
	for _, i := range group[1:] {
		if f.items[i].Hash != first.Hash || f.items[i].Key != first.Key {
			return false
		}
	}
	return true
}

// last returns the item whose value the map keeps of those in group, which
// all set one key, in order.
func (f *filler[K, V]) last(group []int32) int32 {
	held := group[0]
	for _, i := range group[1:] {
		if f.keep == nil || !f.keep(int(held), int(i)) {
			held = i
		}
	}
	return held
}

// distinct returns the entries of the items in group, whose hashes are all
// equal: one per key, in the order of each key's first item, with the value
// the map keeps.
func (f *filler[K, V]) distinct(group []int32) []entry[K, V] {
	var es []entry[K, V]
	var heldBy []int32 // the item each entry's value comes from
	for _, i := range group {
		it := &f.items[i]
		j := 0
		for j < len(es) && es[j].key != it.Key {
			j++
		}
		switch {
		case j == len(es):
			es = append(es, entry[K, V]{key: it.Key, val: it.Val})
			heldBy = append(heldBy, i)
		case f.keep == nil || !f.keep(int(heldBy[j]), int(i)):
			es[j].val = it.Val
			heldBy[j] = i
		}
	}
	return es
}
