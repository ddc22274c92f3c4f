package hamt

import "sync/atomic"

// owners hands out the owner ids of Txns and Owners. Zero is never issued:
// it marks nodes that no one may edit.
var owners atomic.Uint64

func newOwner() uint64 { return owners.Add(1) }

// sharedEntries marks, in a node's owner, that the node shares its entries
// array with a node of another version: its owner may change its children
// in place, but must give it an array of its own before changing an entry.
// Owner ids are issued from one and never reach this bit.
const sharedEntries uint64 = 1 << 63

// edits reports whether own may edit n's children in place: own is a live
// Txn (or an Owner) that created n. Changes that add or remove a slot build
// a new node anyway.
func (n *node[K, V]) edits(own uint64) bool {
	return own != 0 && n.owner&^sharedEntries == own
}

// editsEntries reports whether own may also edit n's entries in place: it
// edits n, and n's entries array is n's alone.
func (n *node[K, V]) editsEntries(own uint64) bool {
	return own != 0 && n.owner == own
}

// copyFor returns a copy of n tagged with own. The copy gets its own
// children array (allocated with it, see newNode). A leaf's entries are
// copied with it; an inner node's entries array stays shared, and the copy
// is marked sharedEntries, so that copying the path above a changed node
// copies no entries (at a million entries they were half the bytes of a
// path copy): a change to one of them copies the array then (withEntry).
func (n *node[K, V]) copyFor(own uint64) *node[K, V] {
	es, kids := n.entries(), n.children()
	if len(kids) == 0 {
		if len(es) > fanout {
			// A collision node too large to allocate with its entries:
			// build would adopt the array, which must be the copy's own.
			es = append(make([]entry[K, V], 0, len(es)), es...)
		}
		return build(own, n.dataMap, n.nodeMap, es, nil) // a leaf: entries copied with it
	}
	c := build(own, n.dataMap, n.nodeMap, es, kids)
	if len(es) > 0 {
		c.owner |= sharedEntries
	}
	return c
}

// build allocates a node tagged with own with the given bitmaps, entries
// and children. A node with children gets the entries array as it is, and
// the children copied into an array allocated with it; a leaf, which has no
// children, gets its entries copied into an array allocated with it, so
// that a lookup that ends there reads one block rather than two.
func build[K comparable, V any](own uint64, dataMap, nodeMap uint32, es []entry[K, V], kids []*node[K, V]) *node[K, V] {
	if len(kids) == 0 && len(es) > 0 && len(es) <= fanout {
		c, arr := newLeaf[K, V](len(es))
		c.dataMap, c.nodeMap, c.owner = dataMap, nodeMap, own
		copy(arr, es)
		c.ents = &arr[0]
		return c
	}
	c, arr := newNode[K, V](len(kids))
	c.dataMap, c.nodeMap, c.owner = dataMap, nodeMap, own
	c.setEntries(es)
	if len(kids) > 0 {
		copy(arr, kids)
		c.kids = &arr[0]
	}
	return c
}

// withEntry returns n with entry i replaced by e: n itself if own may edit
// it, otherwise a copy (see copiedWith).
func (n *node[K, V]) withEntry(own uint64, i int, e entry[K, V]) *node[K, V] {
	if !n.edits(own) {
		return n.copiedWith(own, i, e)
	}
	if !n.editsEntries(own) {
		// Own children, shared entries: the array is copied once.
		n.ownEntries(own)
	}
	*entryAt(n.ents, i) = e
	return n
}

// copiedWith returns a copy of n tagged with own, with entry i replaced by
// e, in an entries array of its own: n itself is never written.
func (n *node[K, V]) copiedWith(own uint64, i int, e entry[K, V]) *node[K, V] {
	c := n.copyFor(own)
	if c.owner != own { // sharing n's entries: this change needs its own
		c.ownEntries(own)
	}
	*entryAt(c.ents, i) = e
	return c
}

// ownEntries gives n, which nothing but its owner can reach yet, a copy of
// its entries array, and tags it with own alone.
func (n *node[K, V]) ownEntries(own uint64) {
	n.setEntries(append(make([]entry[K, V], 0, len(n.entries())), n.entries()...))
	n.owner = own
}

// withChild returns n with child j replaced by child, as withEntry does.
func (n *node[K, V]) withChild(own uint64, j int, child *node[K, V]) *node[K, V] {
	c := n
	if !n.edits(own) {
		c = n.copyFor(own)
	}
	*childAt(c.kids, j) = child
	return c
}

// withEntryInserted returns a new node: n with e in the empty slot bit.
func (n *node[K, V]) withEntryInserted(own uint64, bit uint32, e entry[K, V]) *node[K, V] {
	dm := n.dataMap | bit
	return build(own, dm, n.nodeMap, inserted(n.entries(), index(dm, bit), e), n.children())
}

// withEntryRemoved returns a new node: n without the entry in slot bit.
func (n *node[K, V]) withEntryRemoved(own uint64, bit uint32) *node[K, V] {
	return build(own, n.dataMap^bit, n.nodeMap, removed(n.entries(), index(n.dataMap, bit)), n.children())
}

// withEntryPushedDown returns a new node: n with the entry in slot bit
// replaced by the child sub.
func (n *node[K, V]) withEntryPushedDown(own uint64, bit uint32, sub *node[K, V]) *node[K, V] {
	nm := n.nodeMap | bit
	kids := insertedChild(n.children(), index(nm, bit), sub)
	return build(own, n.dataMap^bit, nm, removed(n.entries(), index(n.dataMap, bit)), kids)
}

// withChildPulledUp returns a new node: n with the child in slot bit
// replaced by the entry e.
func (n *node[K, V]) withChildPulledUp(own uint64, bit uint32, e entry[K, V]) *node[K, V] {
	dm := n.dataMap | bit
	kids := n.children()
	j := index(n.nodeMap, bit)
	rest := make([]*node[K, V], 0, len(kids)-1)
	rest = append(rest, kids[:j]...)
	rest = append(rest, kids[j+1:]...)
	return build(own, dm, n.nodeMap^bit, inserted(n.entries(), index(dm, bit), e), rest)
}

// withCollisionAppended returns a new collision node: n and e.
func (n *node[K, V]) withCollisionAppended(own uint64, e entry[K, V]) *node[K, V] {
	es := n.entries()
	return collision(own, inserted(es, len(es), e))
}

// withCollisionRemoved returns a new collision node: n without entry i.
func (n *node[K, V]) withCollisionRemoved(own uint64, i int) *node[K, V] {
	return collision(own, removed(n.entries(), i))
}

// collision returns a collision node tagged with own holding es.
func collision[K comparable, V any](own uint64, es []entry[K, V]) *node[K, V] {
	return build(own, 0, uint32(len(es)), es, nil)
}

// inserted returns a new exactly sized array: es with e at i.
func inserted[K comparable, V any](es []entry[K, V], i int, e entry[K, V]) []entry[K, V] {
	out := make([]entry[K, V], 0, len(es)+1)
	out = append(out, es[:i]...)
	out = append(out, e)
	return append(out, es[i:]...)
}

// removed returns a new exactly sized array: es without entry i.
func removed[K comparable, V any](es []entry[K, V], i int) []entry[K, V] {
	if len(es) == 1 {
		return nil
	}
	out := make([]entry[K, V], 0, len(es)-1)
	out = append(out, es[:i]...)
	return append(out, es[i+1:]...)
}

// insertedChild returns kids with child at i, in a new array.
func insertedChild[K comparable, V any](kids []*node[K, V], i int, child *node[K, V]) []*node[K, V] {
	out := make([]*node[K, V], 0, len(kids)+1)
	out = append(out, kids[:i]...)
	out = append(out, child)
	return append(out, kids[i:]...)
}

// newNode allocates a node together with room for capacity children in one
// block, so that copying an inner node along a path is a single allocation
// rather than a node plus an array, and returns the node and that room.
// Capacities are rounded up to a few sizes; the Go allocator would round
// most of them anyway.
func newNode[K comparable, V any](capacity int) (*node[K, V], []*node[K, V]) {
	type kids = *node[K, V]
	switch {
	case capacity == 0:
		return new(node[K, V]), nil
	case capacity <= 1:
		b := new(struct {
			n node[K, V]
			a [1]kids
		})
		return &b.n, b.a[:capacity]
	case capacity <= 2:
		b := new(struct {
			n node[K, V]
			a [2]kids
		})
		return &b.n, b.a[:capacity]
	case capacity <= 4:
		b := new(struct {
			n node[K, V]
			a [4]kids
		})
		return &b.n, b.a[:capacity]
	case capacity <= 8:
		b := new(struct {
			n node[K, V]
			a [8]kids
		})
		return &b.n, b.a[:capacity]
	case capacity <= 12:
		b := new(struct {
			n node[K, V]
			a [12]kids
		})
		return &b.n, b.a[:capacity]
	case capacity <= 16:
		b := new(struct {
			n node[K, V]
			a [16]kids
		})
		return &b.n, b.a[:capacity]
	case capacity <= 24:
		b := new(struct {
			n node[K, V]
			a [24]kids
		})
		return &b.n, b.a[:capacity]
	default:
		b := new(struct {
			n node[K, V]
			a [fanout]kids
		})
		return &b.n, b.a[:capacity]
	}
}

// newLeaf allocates a node together with room for capacity entries in one
// block, and returns the node and that room. Capacities are rounded up to a
// few sizes; capacity is at most fanout.
func newLeaf[K comparable, V any](capacity int) (*node[K, V], []entry[K, V]) {
	type e = entry[K, V]
	switch {
	case capacity <= 1:
		b := new(struct {
			n node[K, V]
			a [1]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 2:
		b := new(struct {
			n node[K, V]
			a [2]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 3:
		b := new(struct {
			n node[K, V]
			a [3]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 4:
		b := new(struct {
			n node[K, V]
			a [4]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 5:
		b := new(struct {
			n node[K, V]
			a [5]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 6:
		b := new(struct {
			n node[K, V]
			a [6]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 8:
		b := new(struct {
			n node[K, V]
			a [8]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 12:
		b := new(struct {
			n node[K, V]
			a [12]e
		})
		return &b.n, b.a[:capacity]
	case capacity <= 16:
		b := new(struct {
			n node[K, V]
			a [16]e
		})
		return &b.n, b.a[:capacity]
	default:
		b := new(struct {
			n node[K, V]
			a [fanout]e
		})
		return &b.n, b.a[:capacity]
	}
}
