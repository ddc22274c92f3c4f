package hamt

import "sync/atomic"

// owners hands out Txn owner ids. Zero is never issued: it marks nodes that no
// Txn may edit.
var owners atomic.Uint64

func newOwner() uint64 { return owners.Add(1) }

// change tells take which of a node's arrays the caller is about to edit and
// whether the edit adds an element, so copies can be sized once.
type change uint8

const (
	changeEntries change = 1 << iota
	changeChildren
	addsEntry
	addsChild

	growEntries  = changeEntries | addsEntry
	growChildren = changeChildren | addsChild
)

// take returns a node the caller may edit in place on behalf of own: n itself
// if own already owns it, otherwise a copy tagged with own.
//
// A copy always gets its own children array, which costs nothing extra because
// it is allocated together with the node (see newNode). The entries array is
// copied only if it is about to change, so a plain Set or Delete (own == 0)
// leaves it shared with the old version; a Txn copies it regardless, because
// ownership is per node and later edits by the same Txn will be in place.
func (n *node[K, V]) take(own uint64, ch change) *node[K, V] {
	if own != 0 && n.owner == own {
		return n
	}
	return n.copyFor(own, ch)
}

// copyFor returns a copy of n tagged with own, whatever owns n, with room
// for the change ch. Its arrays are its own, except the entries array when
// own is zero and ch leaves the entries alone.
func (n *node[K, V]) copyFor(own uint64, ch change) *node[K, V] {
	nc := len(n.children)
	if ch&addsChild != 0 {
		nc++
	}
	c := newNode[K, V](nc)
	children := c.children
	*c = *n
	c.owner = own
	c.children = copyChildren(children, n.children)
	if own != 0 || ch&changeEntries != 0 {
		ne := len(n.entries)
		if ch&addsEntry != 0 {
			ne++
		}
		c.entries = nil
		if ne > 0 {
			c.entries = copyEntries(make([]entry[K, V], 0, ne), n.entries)
		}
	}
	return c
}

// newNode allocates a node together with room for capacity children in one
// block, so that copying an inner node along a path is a single allocation
// rather than a node plus an array. Capacities are rounded up to a few sizes;
// the Go allocator would round most of them anyway.
func newNode[K comparable, V any](capacity int) *node[K, V] {
	type kids = *node[K, V]
	switch {
	case capacity == 0:
		return new(node[K, V])
	case capacity <= 1:
		b := new(struct {
			n node[K, V]
			a [1]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	case capacity <= 2:
		b := new(struct {
			n node[K, V]
			a [2]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	case capacity <= 4:
		b := new(struct {
			n node[K, V]
			a [4]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	case capacity <= 8:
		b := new(struct {
			n node[K, V]
			a [8]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	case capacity <= 16:
		b := new(struct {
			n node[K, V]
			a [16]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	case capacity <= 24:
		b := new(struct {
			n node[K, V]
			a [24]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	default:
		b := new(struct {
			n node[K, V]
			a [fanout]kids
		})
		b.n.children = b.a[:0]
		return &b.n
	}
}
