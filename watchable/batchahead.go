package watchable

import (
	"math"
	"unsafe"
)

// storesAhead holds the last few Stores of a Batch into a large map,
// which have not been applied yet. A Store into a large map is a cache
// miss: the slot of its key is somewhere in megabytes of table, and a
// Store cannot go on before it has read it. One after another, a
// batch's Stores wait for their misses one at a time. So a Store into a
// large map is not applied at once: the table prefetches its key's slot
// (mvcc.Table.Prefetch) and the Store waits here while the next few are
// made, each prefetching its own; the oldest is applied when a new one
// comes, by then in the cache. The misses of consecutive Stores overlap.
//
// A Map keeps one, made by its first large batch and reused by the next
// (batches hold the map's lock). A small map's tables fit in the cache,
// and a Store applied at once costs less there; so do Stores of large
// keys and values, which would be copied in and out.
type storesAhead[K comparable, V any] struct {
	waiting  [aheadStores]waitingStore[K, V]
	first, n int // waiting[first] is the oldest of n
}

// aheadStores is how many Stores wait: enough for the misses of the
// first to be over by the time it is applied. (16 measured the same.)
const aheadStores = 8

// maxWaitingSize is the largest waitingStore a batch holds back: a key
// and a value of up to 48 bytes together, such as a string and a pointer
// or a word.
const maxWaitingSize = 64

// waitingStore is a Store not applied yet: the key, the map's copy of the
// value, and the key's hash, which the table probes by.
type waitingStore[K comparable, V any] struct {
	key   K
	value V
	hash  uint64
}

// startAhead reports whether b's Stores should wait from now on, and if
// so gives b the map's storesAhead: when the map's table is large and the
// key and value small. Otherwise b asks again after recheckStores more
// Stores, for a batch that fills a map may make its table large. m.mu is
// held.
func (b *Batch[K, V]) startAhead() bool {
	if unsafe.Sizeof(waitingStore[K, V]{}) > maxWaitingSize {
		b.recheck = math.MaxInt32
		return false
	}
	if !b.m.tab.Large() {
		b.recheck = recheckStores
		return false
	}
	if b.m.ahead == nil {
		b.m.ahead = new(storesAhead[K, V])
	}
	b.ahead = b.m.ahead
	return true
}

// replaceAhead reports whether Replace should hold its entries back as a
// batch holds Stores (see storesAhead): when the key and value are small,
// and the table is large or n entries will make it so. m.mu is held.
func replaceAhead[K comparable, V any](m *Map[K, V], n int) bool {
	return unsafe.Sizeof(waitingStore[K, V]{}) <= maxWaitingSize && (m.tab.Large() || n >= largeReplace)
}

// largeReplace is the number of entries from which Replace holds them
// back even into a table that is not large yet: it will grow large on
// the way (the table is large from 65,536 slots).
const largeReplace = 1 << 16

// recheckStores is how many Stores into a map that is not large a batch
// makes before it asks again: a table grows to several times its size at
// once, so a batch that makes it large starts its Stores waiting a few
// dozen Stores later than it could.
const recheckStores = 64

// flush applies every Store waiting, oldest first, and keeps no value.
func (b *Batch[K, V]) flush() {
	a := b.ahead
	if a == nil {
		return
	}
	for ; a.n > 0; a.n-- {
		w := &a.waiting[a.first]
		b.apply(w.key, &w.value, w.hash)
		*w = waitingStore[K, V]{}
		a.first = (a.first + 1) % aheadStores
	}
}

// drop forgets the Stores waiting: the batch's function panicked, and
// none of them is applied.
func (a *storesAhead[K, V]) drop() {
	clear(a.waiting[:])
	a.first, a.n = 0, 0
}
