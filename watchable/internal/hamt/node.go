package hamt

import (
	"math/bits"
	"unsafe"
)

type entry[K comparable, V any] struct {
	key K
	val V
}

// node is one level of the trie. Below hashBits it is a bitmap node; at or
// beyond it (which the caller knows from the shift) it is a collision node
// that uses only entries, in insertion order, with dataMap zero and nodeMap
// holding the number of entries.
//
// The node itself is small (32 bytes) because its arrays are reached by a
// pointer to their first element, their lengths being the population
// counts of the bitmaps: a trie has about one node per three entries, so
// every word of the node costs close to three bytes per entry. The
// children's array is allocated together with the node (see newNode); the
// entries' array is allocated apart, exactly sized.
//
// A node reachable from a committed Map is never written again (an
// Owner's holder promises that no one else can reach the nodes it edits in
// place). Its entries array may be shared with other nodes of other
// versions.
type node[K comparable, V any] struct {
	dataMap uint32
	nodeMap uint32
	owner   uint64       // Txn or Owner allowed to edit the node in place, 0 for none; may carry sharedEntries
	ents    *entry[K, V] // the first entry, nil when there are none
	kids    **node[K, V] // the first child, nil when there are none
}

// entries returns the node's entries. A node without children and without
// inline entries is a collision node (or an empty one), whose count is in
// nodeMap.
func (n *node[K, V]) entries() []entry[K, V] {
	if n.ents == nil {
		return nil
	}
	c := n.nodeMap
	if n.dataMap != 0 || n.kids != nil {
		c = n.dataMap
		return unsafe.Slice(n.ents, bits.OnesCount32(c))
	}
	return unsafe.Slice(n.ents, c)
}

// children returns the node's children.
func (n *node[K, V]) children() []*node[K, V] {
	if n.kids == nil {
		return nil
	}
	return unsafe.Slice(n.kids, bits.OnesCount32(n.nodeMap))
}

// setEntries makes es the entries of a bitmap node, whose dataMap must
// already say how many there are.
func (n *node[K, V]) setEntries(es []entry[K, V]) {
	n.ents = unsafe.SliceData(es)
	if len(es) == 0 {
		n.ents = nil
	}
}

// singleton reports whether n holds exactly one entry and nothing else, the
// case in which a child must be folded back into its parent to keep the shape
// canonical.
func (n *node[K, V]) singleton() bool {
	return n.kids == nil && len(n.entries()) == 1
}

// get returns the value for k, whose hash is h, in the trie below n.
func (n *node[K, V]) get(k K, h uint64) (V, bool) {
	for shift := uint(0); ; shift += bitsPerLevel {
		if shift >= hashBits {
			es := n.entries()
			for i := range es {
				if es[i].key == k {
					return es[i].val, true
				}
			}
			break
		}
		bit := bitpos(h, shift)
		if n.dataMap&bit != 0 {
			e := entryAt(n.ents, index(n.dataMap, bit))
			if e.key == k {
				return e.val, true
			}
			break
		}
		if n.nodeMap&bit == 0 {
			break
		}
		n = *childAt(n.kids, index(n.nodeMap, bit))
	}
	var zero V
	return zero, false
}

// entryAt returns the i-th of the entries that start at first.
func entryAt[K comparable, V any](first *entry[K, V], i int) *entry[K, V] {
	return (*entry[K, V])(unsafe.Add(unsafe.Pointer(first), uintptr(i)*unsafe.Sizeof(*first)))
}

// childAt returns the i-th of the child pointers that start at first.
func childAt[K comparable, V any](first **node[K, V], i int) **node[K, V] {
	return (**node[K, V])(unsafe.Add(unsafe.Pointer(first), uintptr(i)*unsafe.Sizeof(*first)))
}

// set returns n with k set to v, and whether k was new. n itself is changed
// only when own owns it and the change adds nothing, and then n is what is
// returned.
func (n *node[K, V]) set(own uint64, k K, v V, h uint64, shift uint) (*node[K, V], bool) {
	if shift >= hashBits {
		es := n.entries()
		for i := range es {
			if es[i].key == k {
				return n.withEntry(own, i, entry[K, V]{k, v}), false
			}
		}
		return n.withCollisionAppended(own, entry[K, V]{k, v}), true
	}
	bit := bitpos(h, shift)
	switch {
	case n.dataMap&bit != 0:
		i := index(n.dataMap, bit)
		old := *entryAt(n.ents, i)
		if old.key == k {
			return n.withEntry(own, i, entry[K, V]{k, v}), false
		}
		// Two keys now share this slot: push both one level down.
		sub := pair(own, old, hashOf(old.key), entry[K, V]{k, v}, h, shift+bitsPerLevel)
		return n.withEntryPushedDown(own, bit, sub), true
	case n.nodeMap&bit != 0:
		j := index(n.nodeMap, bit)
		child := *childAt(n.kids, j)
		sub, added := child.set(own, k, v, h, shift+bitsPerLevel)
		if sub == child {
			// Edited in place, so that own owns the child and therefore
			// n too.
			return n, added
		}
		return n.withChild(own, j, sub), added
	default:
		return n.withEntryInserted(own, bit, entry[K, V]{k, v}), true
	}
}

// pair builds the smallest subtree holding a and b at the level that starts at
// shift: a chain of single-child nodes while their hashes agree, ending in a
// node where they split, or in a collision node when the hashes are equal.
func pair[K comparable, V any](own uint64, a entry[K, V], ha uint64, b entry[K, V], hb uint64, shift uint) *node[K, V] {
	if shift >= hashBits {
		return collision(own, []entry[K, V]{a, b})
	}
	ba, bb := bitpos(ha, shift), bitpos(hb, shift)
	if ba == bb {
		return build(own, 0, ba, nil, []*node[K, V]{pair(own, a, ha, b, hb, shift+bitsPerLevel)})
	}
	if ba > bb {
		a, b = b, a
	}
	return build(own, ba|bb, 0, []entry[K, V]{a, b}, nil)
}

// del returns n without k, and whether k was present. When k is absent
// nothing is copied and the result is nil. Ownership works as in set.
func (n *node[K, V]) del(own uint64, k K, h uint64, shift uint) (*node[K, V], bool) {
	if shift >= hashBits {
		es := n.entries()
		for i := range es {
			if es[i].key == k {
				return n.withCollisionRemoved(own, i), true
			}
		}
		return nil, false
	}
	bit := bitpos(h, shift)
	switch {
	case n.dataMap&bit != 0:
		if entryAt(n.ents, index(n.dataMap, bit)).key != k {
			return nil, false
		}
		return n.withEntryRemoved(own, bit), true
	case n.nodeMap&bit != 0:
		j := index(n.nodeMap, bit)
		child := *childAt(n.kids, j)
		sub, found := child.del(own, k, h, shift+bitsPerLevel)
		switch {
		case !found:
			return nil, false
		case sub.singleton():
			// A non-root node always holds at least two entries in its
			// subtree; the one left behind moves up to take the child's slot.
			return n.withChildPulledUp(own, bit, *sub.ents), true
		case sub == child:
			return n, true
		default:
			return n.withChild(own, j, sub), true
		}
	default:
		return nil, false
	}
}
