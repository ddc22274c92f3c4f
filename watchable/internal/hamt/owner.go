package hamt

import (
	"slices"
	"sync/atomic"
)

// owners hands out Txn owner ids. Zero is never issued: it marks nodes that no
// Txn may edit.
var owners atomic.Uint64

func newOwner() uint64 { return owners.Add(1) }

// arrays names a node's arrays, to tell take which ones an edit will change.
type arrays uint8

const (
	entriesArray arrays = 1 << iota
	childrenArray
)

// take returns a header through which n can be changed on behalf of own, and
// whether the arrays in changing may be edited in place. When they may not,
// the array helpers below write fresh copies of exactly the needed size.
//
// For a plain Set or Delete (own == 0) nothing is copied here, so the arrays
// that do not change stay shared with the old version. For a Txn, a node it
// does not own yet is claimed: tagged with own, with the arrays that are not
// changing copied here (ownership is per node, so the Txn must hold private
// copies of both) and the changing ones copied by the helpers. Later edits by
// the same Txn are then made in place.
func (n *node[K, V]) take(own uint64, changing arrays) (node[K, V], bool) {
	c := *n
	switch {
	case own == 0:
		c.owner = 0
		return c, false
	case n.owner == own:
		return c, true
	default:
		c.owner = own
		if changing&entriesArray == 0 {
			c.entries = slices.Clone(n.entries)
		}
		if changing&childrenArray == 0 {
			c.children = slices.Clone(n.children)
		}
		return c, false
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
