package hamt

import (
	"math/bits"
	"unsafe"
)

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
func (t *Txn[K, V]) Get(k K) (V, bool) { return t.GetHashed(k, hashOf(k)) }

// Len returns the number of entries as of the changes made so far.
func (t *Txn[K, V]) Len() int {
	t.live()
	return t.size
}

// Set sets k to v.
func (t *Txn[K, V]) Set(k K, v V) { t.SetHashed(k, hashOf(k), v) }

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

// Hash returns k's hash, for the *Hashed methods and Warm, so that a key
// looked up and then set is hashed once.
func Hash[K comparable](k K) uint64 { return hashOf(k) }

// GetHashed is Get for a key whose hash, Hash(k), is h.
func (t *Txn[K, V]) GetHashed(k K, h uint64) (V, bool) {
	t.live()
	if t.root == nil {
		var zero V
		return zero, false
	}
	return t.root.get(k, h, shapeOf[V]())
}

// SetHashed is Set for a key whose hash, Hash(k), is h.
func (t *Txn[K, V]) SetHashed(k K, h uint64, v V) { t.SetHashedUnless(k, h, v, nil) }

// SetHashedUnless is SetHashed in the same descent as a look at the value
// it replaces: if k is present and keep, called with its value, returns
// true, nothing changes. A nil keep keeps nothing.
func (t *Txn[K, V]) SetHashedUnless(k K, h uint64, v V, keep func(old V) bool) {
	t.live()
	if t.root == nil {
		t.root = single(t.own, h, entry[K, V]{k, v})
		t.size = 1
		return
	}
	var added bool
	t.root, added = t.root.set(t.own, k, v, h, 0, keep)
	if added {
		t.size++
	}
}

// WarmGroup is the most hashes Warm takes at once.
const WarmGroup = 16

// Warm reads the nodes on the paths of up to WarmGroup hashes, level by
// level for all of them together, and changes nothing. Descending one key
// after the other makes each descent a chain of dependent loads from
// memory that is cold in a large map; descending the group in lockstep
// lets the processor fetch the group's nodes of one level at once, so the
// Gets and Sets that follow find their paths in cache. It returns a value
// derived from what it read, only so that the reads are not optimized away.
func (t *Txn[K, V]) Warm(hs []uint64) uint32 {
	t.live()
	var ns [WarmGroup]*node[K, V]
	hs = hs[:min(len(hs), WarmGroup)]
	for i := range hs {
		ns[i] = t.root
	}
	var sum uint32
	for shift := uint(0); shift < hashBits; shift += bitsPerLevel {
		more := false
		for i, n := range ns[:len(hs)] {
			if n == nil {
				continue
			}
			bit := bitpos(hs[i], shift)
			if n.nodeMap&bit == 0 {
				if n.dataMap&bit != 0 && unsafe.Sizeof(entry[K, V]{}) > 0 {
					// The entry, whose key is compared next, and the
					// node's last one, since a Set copies them all. A
					// first byte is a key's, which no writer changes.
					sum += uint32(*(*uint8)(unsafe.Pointer(entryAt(n.ents, index(n.dataMap, bit)))))
					sum += uint32(*(*uint8)(unsafe.Pointer(entryAt(n.ents, bits.OnesCount32(n.dataMap)-1))))
				}
				ns[i] = nil
				continue
			}
			ns[i] = loadChild(childAt(n.kids, index(n.nodeMap, bit)))
			more = true
		}
		if !more {
			break
		}
	}
	return sum
}
