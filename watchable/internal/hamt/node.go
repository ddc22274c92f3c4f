package hamt

import "slices"

type entry[K comparable, V any] struct {
	key K
	val V
}

// node is one level of the trie. Below hashBits it is a bitmap node; at or
// beyond it (which the caller knows from the shift) it is a collision node
// that uses only entries, in insertion order, with both bitmaps zero.
//
// A node reachable from a committed Map is never written again. Its arrays
// may be shared with other nodes of other versions.
type node[K comparable, V any] struct {
	dataMap  uint32
	nodeMap  uint32
	owner    uint64 // Txn allowed to edit the node in place; 0 for none
	entries  []entry[K, V]
	children []*node[K, V]
}

// singleton reports whether n holds exactly one entry and nothing else, the
// case in which a child must be folded back into its parent to keep the shape
// canonical.
func (n *node[K, V]) singleton() bool {
	return len(n.entries) == 1 && len(n.children) == 0
}

func (n *node[K, V]) get(k K, h uint64) (V, bool) {
	for shift := uint(0); ; shift += bitsPerLevel {
		if shift >= hashBits {
			for i := range n.entries {
				if n.entries[i].key == k {
					return loadVal(&n.entries[i].val), true
				}
			}
			break
		}
		bit := bitpos(h, shift)
		if n.dataMap&bit != 0 {
			e := &n.entries[index(n.dataMap, bit)]
			if e.key == k {
				return loadVal(&e.val), true
			}
			break
		}
		if n.nodeMap&bit == 0 {
			break
		}
		n = loadChild(&n.children[index(n.nodeMap, bit)])
	}
	var zero V
	return zero, false
}

// set returns n with k set to v, and whether k was new. n itself is changed
// only when own owns it, and then n is what is returned.
func (n *node[K, V]) set(own uint64, k K, v V, h uint64, shift uint) (*node[K, V], bool) {
	if shift >= hashBits {
		return n.setCollision(own, k, v)
	}
	bit := bitpos(h, shift)
	switch {
	case n.dataMap&bit != 0:
		i := index(n.dataMap, bit)
		if n.entries[i].key == k {
			c := n.take(own, changeEntries)
			c.entries[i] = entry[K, V]{k, v}
			return c, false
		}
		// Two keys now share this slot: push both one level down. Build the
		// subtree first, since an in-place edit overwrites entry i.
		old := loadEntry(&n.entries[i])
		sub := pair(own, old, hashOf(old.key), entry[K, V]{k, v}, h, shift+bitsPerLevel)
		c := n.take(own, changeEntries|growChildren)
		c.dataMap ^= bit
		c.entries = slices.Delete(c.entries, i, i+1)
		c.nodeMap |= bit
		c.children = slices.Insert(c.children, index(c.nodeMap, bit), sub)
		return c, true
	case n.nodeMap&bit != 0:
		j := index(n.nodeMap, bit)
		child := loadChild(&n.children[j])
		sub, added := child.set(own, k, v, h, shift+bitsPerLevel)
		if sub == child {
			// Edited in place, so own owns the child and therefore n too.
			return n, added
		}
		c := n.take(own, changeChildren)
		c.children[j] = sub
		return c, added
	default:
		c := n.take(own, growEntries)
		c.dataMap |= bit
		c.entries = slices.Insert(c.entries, index(c.dataMap, bit), entry[K, V]{k, v})
		return c, true
	}
}

func (n *node[K, V]) setCollision(own uint64, k K, v V) (*node[K, V], bool) {
	for i := range n.entries {
		if n.entries[i].key == k {
			c := n.take(own, changeEntries)
			c.entries[i] = entry[K, V]{k, v}
			return c, false
		}
	}
	c := n.take(own, growEntries)
	c.entries = append(c.entries, entry[K, V]{k, v})
	return c, true
}

// pair builds the smallest subtree holding a and b at the level that starts at
// shift: a chain of single-child nodes while their hashes agree, ending in a
// node where they split, or in a collision node when the hashes are equal.
func pair[K comparable, V any](own uint64, a entry[K, V], ha uint64, b entry[K, V], hb uint64, shift uint) *node[K, V] {
	if shift >= hashBits {
		return &node[K, V]{owner: own, entries: []entry[K, V]{a, b}}
	}
	ba, bb := bitpos(ha, shift), bitpos(hb, shift)
	if ba == bb {
		c := newNode[K, V](1)
		c.owner = own
		c.nodeMap = ba
		c.children = append(c.children, pair(own, a, ha, b, hb, shift+bitsPerLevel))
		return c
	}
	if ba > bb {
		a, b = b, a
	}
	return &node[K, V]{owner: own, dataMap: ba | bb, entries: []entry[K, V]{a, b}}
}

// del returns n without k, and whether k was present. When k is absent
// nothing is copied and the result is nil. Ownership works as in set.
func (n *node[K, V]) del(own uint64, k K, h uint64, shift uint) (*node[K, V], bool) {
	if shift >= hashBits {
		for i := range n.entries {
			if n.entries[i].key == k {
				c := n.take(own, changeEntries)
				c.entries = slices.Delete(c.entries, i, i+1)
				return c, true
			}
		}
		return nil, false
	}
	bit := bitpos(h, shift)
	switch {
	case n.dataMap&bit != 0:
		i := index(n.dataMap, bit)
		if n.entries[i].key != k {
			return nil, false
		}
		c := n.take(own, changeEntries)
		c.dataMap ^= bit
		c.entries = slices.Delete(c.entries, i, i+1)
		return c, true
	case n.nodeMap&bit != 0:
		j := index(n.nodeMap, bit)
		child := loadChild(&n.children[j])
		sub, found := child.del(own, k, h, shift+bitsPerLevel)
		switch {
		case !found:
			return nil, false
		case sub.singleton():
			// A non-root node always holds at least two entries in its
			// subtree; the one left behind moves up to take the child's slot.
			c := n.take(own, changeChildren|growEntries)
			c.nodeMap ^= bit
			c.children = slices.Delete(c.children, j, j+1)
			c.dataMap |= bit
			c.entries = slices.Insert(c.entries, index(c.dataMap, bit), loadEntry(&sub.entries[0]))
			return c, true
		case sub == child:
			return n, true
		default:
			c := n.take(own, changeChildren)
			c.children[j] = sub
			return c, true
		}
	default:
		return nil, false
	}
}
