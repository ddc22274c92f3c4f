package hamt

import "math/bits"

// Diff calls fn for every key whose entry may differ between old and m:
// present in one and not the other, or present in both in entries that are
// not shared. It reports false as soon as fn does.
//
// Two versions of a map share every subtree that no write between them
// touched, and a shared subtree is skipped whole by comparing pointers, so
// Diff costs O(changed keys × depth) between a version and one derived from
// it, and O(N) between unrelated maps. A key present in both is passed with
// both values, which may still be equal: Diff cannot compare values, only
// tell that they are in different entries. Keys come in no particular
// order.
//
// Neither map may be changed in place (see Owner) while Diff runs.
func (m Map[K, V]) Diff(old Map[K, V], fn func(k K, oldV V, hadOld bool, newV V, hasNew bool) bool) bool {
	d := differ[K, V]{fn: fn}
	return d.nodes(old.root, m.root, 0)
}

type differ[K comparable, V any] struct {
	fn func(k K, oldV V, hadOld bool, newV V, hasNew bool) bool
}

func (d *differ[K, V]) removed(e *entry[K, V]) bool {
	var zero V
	return d.fn(e.key, e.val, true, zero, false)
}

func (d *differ[K, V]) added(e *entry[K, V]) bool {
	var zero V
	return d.fn(e.key, zero, false, e.val, true)
}

func (d *differ[K, V]) both(k K, a, b *entry[K, V]) bool {
	return d.fn(k, a.val, true, b.val, true)
}

// all calls removed (or added, with add) for every entry below n.
func (d *differ[K, V]) all(n *node[K, V], add bool) bool {
	if n == nil {
		return true
	}
	es := n.entries()
	for i := range es {
		var ok bool
		if add {
			ok = d.added(&es[i])
		} else {
			ok = d.removed(&es[i])
		}
		if !ok {
			return false
		}
	}
	kids := n.children()
	for i := range kids {
		if !d.all(kids[i], add) {
			return false
		}
	}
	return true
}

// nodes compares the subtrees a (old) and b (new), both at shift.
func (d *differ[K, V]) nodes(a, b *node[K, V], shift uint) bool {
	switch {
	case a == b:
		return true
	case a == nil:
		return d.all(b, true)
	case b == nil:
		return d.all(a, false)
	case shift >= hashBits:
		return d.collisions(a.entries(), b.entries())
	}
	if a.dataMap == b.dataMap && a.nodeMap == b.nodeMap {
		return d.sameShape(a, b, shift)
	}
	sharedEntries := a.ents == b.ents && a.dataMap == b.dataMap
	for slots := a.dataMap | a.nodeMap | b.dataMap | b.nodeMap; slots != 0; slots &= slots - 1 {
		bit := uint32(1) << bits.TrailingZeros32(slots)
		var ae, be *entry[K, V]
		var ac, bc *node[K, V]
		if a.dataMap&bit != 0 {
			ae = entryAt(a.ents, index(a.dataMap, bit))
		} else if a.nodeMap&bit != 0 {
			ac = *childAt(a.kids, index(a.nodeMap, bit))
		}
		if b.dataMap&bit != 0 {
			be = entryAt(b.ents, index(b.dataMap, bit))
		} else if b.nodeMap&bit != 0 {
			bc = *childAt(b.kids, index(b.nodeMap, bit))
		}
		var ok bool
		switch {
		case ae != nil && be != nil:
			switch {
			case sharedEntries:
				ok = true
			case ae.key == be.key:
				ok = d.both(ae.key, ae, be)
			default:
				ok = d.removed(ae) && d.added(be)
			}
		case ae != nil && bc != nil:
			ok = d.entryToTree(ae, bc)
		case ac != nil && be != nil:
			ok = d.treeToEntry(ac, be)
		case ae != nil:
			ok = d.removed(ae)
		case be != nil:
			ok = d.added(be)
		default:
			ok = d.nodes(ac, bc, shift+bitsPerLevel)
		}
		if !ok {
			return false
		}
	}
	return true
}

// sameShape compares two nodes at shift whose slots hold the same kinds
// (the usual case: writes between two versions mostly replace values), so
// that their entries and their children correspond one to one by position.
func (d *differ[K, V]) sameShape(a, b *node[K, V], shift uint) bool {
	if a.ents != b.ents {
		as, bs := a.entries(), b.entries()
		for i := range as {
			ae, be := &as[i], &bs[i]
			var ok bool
			if ae.key == be.key {
				ok = d.both(ae.key, ae, be)
			} else {
				ok = d.removed(ae) && d.added(be)
			}
			if !ok {
				return false
			}
		}
	}
	ak, bk := a.children(), b.children()
	for i := range ak {
		if ac, bc := ak[i], bk[i]; ac != bc && !d.nodes(ac, bc, shift+bitsPerLevel) {
			return false
		}
	}
	return true
}

// entryToTree compares an entry of the old map with the subtree in its slot
// in the new one: the entry's key may be in it or not.
func (d *differ[K, V]) entryToTree(ae *entry[K, V], bc *node[K, V]) bool {
	found := false
	ok := bc.each(func(k K, v V) bool {
		var zero V
		if k == ae.key {
			found = true
			return d.fn(k, ae.val, true, v, true)
		}
		return d.fn(k, zero, false, v, true)
	})
	if !ok {
		return false
	}
	return found || d.removed(ae)
}

// treeToEntry is entryToTree the other way round.
func (d *differ[K, V]) treeToEntry(ac *node[K, V], be *entry[K, V]) bool {
	found := false
	ok := ac.each(func(k K, v V) bool {
		var zero V
		if k == be.key {
			found = true
			return d.fn(k, v, true, be.val, true)
		}
		return d.fn(k, v, true, zero, false)
	})
	if !ok {
		return false
	}
	return found || d.added(be)
}

// collisions compares two collision lists, which are short.
func (d *differ[K, V]) collisions(as, bs []entry[K, V]) bool {
outer:
	for i := range as {
		for j := range bs {
			if bs[j].key == as[i].key {
				if !d.both(as[i].key, &as[i], &bs[j]) {
					return false
				}
				continue outer
			}
		}
		if !d.removed(&as[i]) {
			return false
		}
	}
next:
	for j := range bs {
		for i := range as {
			if as[i].key == bs[j].key {
				continue next
			}
		}
		if !d.added(&bs[j]) {
			return false
		}
	}
	return true
}
