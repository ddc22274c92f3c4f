package hamt

// Map is an immutable hash map. The zero value is an empty map ready to use.
// A Map value is never modified: Set and Delete return a new Map that shares
// structure with the old one. Safe for concurrent use by any number of
// goroutines.
type Map[K comparable, V any] struct {
	root *node[K, V] // nil exactly when the map is empty
	size int
}

// Len returns the number of entries.
func (m Map[K, V]) Len() int { return m.size }

// Get returns the value stored for k and whether it is present.
func (m Map[K, V]) Get(k K) (V, bool) { return m.GetHashed(k, hashOf(k)) }

// GetHashed is Get for a key whose hash, Hash(k), is h.
func (m Map[K, V]) GetHashed(k K, h uint64) (V, bool) {
	if m.root == nil {
		var zero V
		return zero, false
	}
	return m.root.get(k, h)
}

// Set returns a map with k set to v. O(log32 N) allocations of path nodes.
func (m Map[K, V]) Set(k K, v V) Map[K, V] {
	h := hashOf(k)
	if m.root == nil {
		return Map[K, V]{root: single(0, h, entry[K, V]{k, v}), size: 1}
	}
	root, added := m.root.set(0, k, v, h, 0)
	size := m.size
	if added {
		size++
	}
	return Map[K, V]{root: root, size: size}
}

// Delete returns a map without k, and whether k was present. When k is
// absent, the returned map is m itself.
func (m Map[K, V]) Delete(k K) (Map[K, V], bool) {
	if m.root == nil {
		return m, false
	}
	root, found := m.root.del(0, k, hashOf(k), 0)
	if !found {
		return m, false
	}
	if m.size == 1 {
		return Map[K, V]{}, true
	}
	return Map[K, V]{root: root, size: m.size - 1}, true
}

// Same reports whether two maps are the same version (same root pointer):
// O(1). It is not content equality: equal contents built separately are not
// Same. Two empty maps are always Same.
func (m Map[K, V]) Same(o Map[K, V]) bool { return m.root == o.root }

// single returns a root node holding e alone.
func single[K comparable, V any](own uint64, h uint64, e entry[K, V]) *node[K, V] {
	return build(own, bitpos(h, 0), 0, []entry[K, V]{e}, nil)
}

// Owner lets SetOwned and DeleteOwned change in place the nodes that
// earlier calls with the same Owner created, instead of copying them. Zero
// owns nothing. An Owner is a promise by its holder: every Map that holds a
// node created under it, other than the one passed to the next SetOwned or
// DeleteOwned, is unreachable to everyone else (never handed out, or taken
// back unseen). Once such a Map may have been seen, the holder must stop
// using the Owner and take a new one; the nodes it created are then frozen
// for good, since no Owner is ever issued twice.
type Owner uint64

// NewOwner returns an Owner never issued before.
func NewOwner() Owner { return Owner(newOwner()) }

// SetOwned is Set of a key whose hash, Hash(k), is h, except that the
// nodes own created are changed in place (see Owner): replacing a value in
// such a node allocates nothing. With a zero own it is Set.
func (m Map[K, V]) SetOwned(own Owner, k K, v V, h uint64) Map[K, V] {
	if m.root == nil {
		return Map[K, V]{root: single(uint64(own), h, entry[K, V]{k, v}), size: 1}
	}
	root, added := m.root.set(uint64(own), k, v, h, 0)
	size := m.size
	if added {
		size++
	}
	return Map[K, V]{root: root, size: size}
}

// DeleteOwned is Delete of a key whose hash, Hash(k), is h, with nodes own
// created changed in place as in SetOwned.
func (m Map[K, V]) DeleteOwned(own Owner, k K, h uint64) (Map[K, V], bool) {
	if m.root == nil {
		return m, false
	}
	root, found := m.root.del(uint64(own), k, h, 0)
	if !found {
		return m, false
	}
	if m.size == 1 {
		return Map[K, V]{}, true
	}
	return Map[K, V]{root: root, size: m.size - 1}, true
}
