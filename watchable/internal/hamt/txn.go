package hamt

// Txn applies many changes to a map at once. Nodes it creates are tagged with
// its owner id and edited in place by its later changes, so a batch of k
// changes allocates far less than k Set calls; nodes shared with other
// versions are copied before their first change, exactly as Set would.
//
// A Txn is not safe for concurrent use. After Commit the Txn must not be used
// again; every method panics if it is.
type Txn[K comparable, V any] struct {
	root *node[K, V]
	size int
	own  uint64 // 0 once committed
}

// Txn starts a batch of changes based on m. m itself is never changed.
func (m Map[K, V]) Txn() *Txn[K, V] {
	return &Txn[K, V]{root: m.root, size: m.size, own: newOwner()}
}

func (t *Txn[K, V]) live() {
	if t.own == 0 {
		panic("hamt: Txn used after Commit")
	}
}

// Get returns the value for k as of the changes made so far.
func (t *Txn[K, V]) Get(k K) (V, bool) {
	t.live()
	if t.root == nil {
		var zero V
		return zero, false
	}
	return t.root.get(k, hashOf(k))
}

// Len returns the number of entries as of the changes made so far.
func (t *Txn[K, V]) Len() int {
	t.live()
	return t.size
}

// Set sets k to v.
func (t *Txn[K, V]) Set(k K, v V) {
	t.live()
	h := hashOf(k)
	if t.root == nil {
		t.root = single(t.own, h, entry[K, V]{k, v})
		t.size = 1
		return
	}
	var added bool
	t.root, added = t.root.set(t.own, k, v, h, 0)
	if added {
		t.size++
	}
}

// Delete removes k and reports whether it was present.
func (t *Txn[K, V]) Delete(k K) bool {
	t.live()
	if t.root == nil {
		return false
	}
	root, found := t.root.del(t.own, k, hashOf(k), 0)
	if !found {
		return false
	}
	t.size--
	t.root = root
	if t.size == 0 {
		t.root = nil
	}
	return true
}

// Commit returns the new immutable map and ends the Txn. The map it started
// from is unchanged; if no change was made the result is Same as that map.
func (t *Txn[K, V]) Commit() Map[K, V] {
	t.live()
	m := Map[K, V]{root: t.root, size: t.size}
	// Retiring the id is what freezes the nodes: no Txn will ever hold it
	// again, so nothing reachable from m can be edited in place any more.
	t.own = 0
	t.root = nil
	t.size = 0
	return m
}
