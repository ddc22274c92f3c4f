package watchable

import (
	"slices"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// keyTable maps keys to the first reader of each key: NotifyKeys' channel,
// SubscribeKeys' subscription. T is a pointer-like type (a channel, a
// pointer) whose zero value marks an empty slot.
//
// It is a table probed linearly from the key's hamt.Hash, which a write
// has computed already, and a slot holds the hash, the reader and the key
// side by side. With thousands of keys, a write finds its reader in one
// cold cache line, where a Go map would hash the key again and read a
// group's control word and then its slot. At most three quarters of the
// slots are used, so a lookup rarely probes past the first line.
//
// Like a Go map's, a key that is not equal to itself (a NaN) is never
// found, so it cannot be deleted either.
type keyTable[K comparable, T comparable] struct {
	slots []keySlot[K, T] // a power of two of them, or none
	n     int             // slots in use
}

type keySlot[K comparable, T comparable] struct {
	hash uint64
	val  T // the zero T: the slot is empty
	key  K
}

// get returns the reader of k, whose hash is h.
func (t *keyTable[K, T]) get(k K, h uint64) (T, bool) {
	var zero T
	if t.n == 0 {
		return zero, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val == zero {
			return zero, false
		}
		if s.hash == h && s.key == k {
			return s.val, true
		}
	}
}

// set makes v, which is not the zero T, the reader of k.
func (t *keyTable[K, T]) set(k K, h uint64, v T) {
	var zero T
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.val == zero {
			*s = keySlot[K, T]{hash: h, val: v, key: k}
			t.n++
			return
		}
		if s.hash == h && s.key == k {
			s.val = v
			return
		}
	}
}

// delete removes k. The slots after it that a lookup reaches only by
// probing past it move back, so that no lookup stops short of them.
func (t *keyTable[K, T]) delete(k K, h uint64) {
	var zero T
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for {
		s := &t.slots[i]
		if s.val == zero {
			return // not there
		}
		if s.hash == h && s.key == k {
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.slots[j].val != zero; j = (j + 1) & mask {
		// The slot at j may fill the hole at i if its probe started at i
		// or before: no further from its start than i is from j.
		if (j-t.slots[j].hash)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = keySlot[K, T]{}
	t.n--
	if t.n == 0 {
		t.slots = nil
	}
}

// grow doubles the table (to 16 slots from none) and puts every entry
// back.
func (t *keyTable[K, T]) grow() {
	var zero T
	old := t.slots
	t.slots = make([]keySlot[K, T], max(16, 2*len(old)))
	t.n = 0
	for _, s := range old {
		if s.val != zero {
			t.set(s.key, s.hash, s.val)
		}
	}
}

// keyReaders indexes readers by the keys they follow: the first reader of
// each key in a keyTable, the second and later ones in more, which a write
// consults only when some key has more than one reader. It serves
// NotifyKeys' channels and SubscribeKeys' subscriptions alike.
type keyReaders[K comparable, T comparable] struct {
	first keyTable[K, T]
	more  map[K][]T
}

// add makes r a reader of each of keys, which hold no repeats. A key not
// equal to itself (a NaN) is skipped: no write's key can ever equal it, and
// remove could never find it again.
func (x *keyReaders[K, T]) add(r T, keys []K) {
	for _, k := range keys {
		if k != k {
			continue
		}
		h := hamt.Hash(k)
		if _, ok := x.first.get(k, h); !ok {
			x.first.set(k, h, r)
			continue
		}
		if x.more == nil {
			x.more = map[K][]T{}
		}
		x.more[k] = append(x.more[k], r)
	}
}

// remove drops one occurrence of r from each of keys: two additions of
// one reader to one key are alike, so which of them goes does not matter.
func (x *keyReaders[K, T]) remove(r T, keys []K) {
	for _, k := range keys {
		if k != k {
			continue // never added
		}
		h := hamt.Hash(k)
		more := x.more[k]
		if first, _ := x.first.get(k, h); first == r {
			if n := len(more); n > 0 {
				x.first.set(k, h, more[n-1])
				more = cut(more, n-1)
			} else {
				x.first.delete(k, h)
			}
		} else if i := slices.Index(more, r); i >= 0 {
			more = cut(more, i)
		}
		if len(more) == 0 {
			delete(x.more, k)
		} else {
			x.more[k] = more
		}
	}
}

// of returns the readers of k, whose hash is h: the first, and the others
// (nil unless some key has more than one reader).
func (x *keyReaders[K, T]) of(k K, h uint64) (first T, more []T, ok bool) {
	first, ok = x.first.get(k, h)
	if ok && len(x.more) > 0 {
		more = x.more[k]
	}
	return first, more, ok
}
