package hamt

import (
	"slices"
	"sync/atomic"
)

// owners hands out Txn owner ids. Zero is never issued: it marks nodes that no
// Txn may edit.
var owners atomic.Uint64

func newOwner() uint64 { return owners.Add(1) }

// take returns a header through which n can be changed on behalf of own, and
// whether its arrays may be edited in place.
//
// For a plain Set or Delete (own == 0) nothing is copied here: the array
// helpers copy just the one array that changes, so the other stays shared.
// For a Txn, a node it does not own yet is claimed: both arrays are copied
// once, and from then on every change the Txn makes to the node is in place.
// Both must be copied because ownership is per node, not per array.
func (n *node[K, V]) take(own uint64) (node[K, V], bool) {
	switch {
	case own == 0:
		c := *n
		c.owner = 0
		return c, false
	case n.owner == own:
		return *n, true
	default:
		c := *n
		c.owner = own
		c.entries = slices.Clone(n.entries)
		c.children = slices.Clone(n.children)
		return c, true
	}
}

// The helpers below edit s in place when inPlace is set and otherwise return
// a fresh array of exactly the needed length, leaving s untouched for the
// versions that share it.

func replaceAt[T any](inPlace bool, s []T, i int, x T) []T {
	if !inPlace {
		s = slices.Clone(s)
	}
	s[i] = x
	return s
}

func insertAt[T any](inPlace bool, s []T, i int, x T) []T {
	if inPlace {
		return slices.Insert(s, i, x)
	}
	out := make([]T, len(s)+1)
	copy(out, s[:i])
	out[i] = x
	copy(out[i+1:], s[i:])
	return out
}

func removeAt[T any](inPlace bool, s []T, i int) []T {
	if inPlace {
		return slices.Delete(s, i, i+1)
	}
	if len(s) == 1 {
		return nil
	}
	out := make([]T, len(s)-1)
	copy(out, s[:i])
	copy(out[i:], s[i+1:])
	return out
}
