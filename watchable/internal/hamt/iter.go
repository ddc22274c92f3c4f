package hamt

import "iter"

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

// each calls yield for every entry below n and reports false as soon as yield
// does, so an early break stops the whole walk.
func (n *node[K, V]) each(yield func(K, V) bool) bool {
	es := n.entries()
	for i := range es {
		if !yield(es[i].key, loadVal(&es[i].val)) {
			return false
		}
	}
	kids := n.children()
	for i := range kids {
		if !loadChild(&kids[i]).each(yield) {
			return false
		}
	}
	return true
}
