package watchable

import "math/bits"

// putIndex finds a Batch's overwrite of a value by the address of the word
// it replaces (hamt.Put.Addr), so that a key stored twice in one batch is
// replaced once, with its last value. Open addressing with linear probing,
// at most half full; the zero putIndex is empty and ready to use.
type putIndex struct {
	slots []putSlot
	shift uint // 64 - log2(len(slots))
	n     int
}

// putSlot is eight bytes, so that the index of a large batch stays small
// enough for the cache: the address is known by 32 bits of it, and the
// caller checks the whole address of what a slot points to (see
// findOrAdd).
type putSlot struct {
	tag uint32 // 0 for an empty slot
	at  int32  // the put's position in the batch
}

func tagOf(a uintptr) uint32 { return uint32(a>>3) | 1 }

// probe returns the slot that holds address a, and true; or the empty
// slot where a would go, and false. addr returns the address of the put at
// a position.
func (x *putIndex) probe(a uintptr, addr func(int) uintptr) (int, bool) {
	mask := len(x.slots) - 1
	// Fibonacci hashing: the top bits of the product depend on every bit
	// of the address.
	i, tag := int(uint64(a)*0x9E3779B97F4A7C15>>x.shift), tagOf(a)
	for {
		s := &x.slots[i]
		switch {
		case s.tag == 0:
			return i, false
		case s.tag == tag && addr(int(s.at)) == a:
			return i, true
		}
		i = (i + 1) & mask
	}
}

// findOrAdd returns the position recorded for address a and true, or
// records at for it and returns false.
func (x *putIndex) findOrAdd(a uintptr, at int, addr func(int) uintptr) (int, bool) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(addr)
	}
	i, found := x.probe(a, addr)
	if found {
		return int(x.slots[i].at), true
	}
	x.slots[i] = putSlot{tag: tagOf(a), at: int32(at)}
	x.n++
	return at, false
}

// find returns the position recorded for address a, if any.
func (x *putIndex) find(a uintptr, addr func(int) uintptr) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	i, found := x.probe(a, addr)
	return int(x.slots[i].at), found
}

func (x *putIndex) grow(addr func(int) uintptr) {
	old := x.slots
	size := max(64, 2*len(old))
	x.slots, x.shift = make([]putSlot, size), uint(64-bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s.tag != 0 {
			i, _ := x.probe(addr(int(s.at)), addr) // distinct: never found
			x.slots[i] = s
		}
	}
}

// reset empties the index, keeping its array unless it is far larger than
// this batch needed (a batch much larger than the others made it).
func (x *putIndex) reset() {
	switch {
	case x.n == 0:
	case len(x.slots) > 1<<12 && len(x.slots) > 16*x.n:
		*x = putIndex{}
	default:
		clear(x.slots)
		x.n = 0
	}
}
