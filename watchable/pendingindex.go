package watchable

// pendingIndex locates a window's pending keys (their positions in the
// subscription's updates) once there are more than smallWindow of them.
//
// It is keyed by the hash the trie computes for every key (hamt.Hash), which
// each change carries: a write that concerns eight subscribers hashes its
// key once, not once per subscriber as a Go map per window would. It is an
// open-addressing table probed linearly, so the lookup that misses and the
// insert that follows it share one probe. Each slot holds the hash's low 32
// bits above the position plus one; zero is an empty slot. The table is at
// most half full.
type pendingIndex struct {
	slots []uint64 // length a power of two, or nil
	n     int
	// spare is the largest table of more than maxReusedIndex slots that
	// an earlier window grew, not cleared: the next window that outgrows
	// maxReusedIndex slots moves to it, rather than doubling its way up
	// again, and small windows keep using small tables (see reset).
	spare []uint64
}

// minIndexSlots is the size of a new table: room for the window that
// outgrew the scan (smallWindow keys) and as many again.
const minIndexSlots = 4 * smallWindow

func indexSlot(h uint64, pos int) uint64 { return uint64(uint32(h))<<32 | uint64(pos+1) }

// lookup returns key's position in updates, which h, its hash, indexes,
// and the slot holding it; or, when it is not there, the empty slot where it
// would go. The table must have slots.
func lookup[K comparable, V any](x *pendingIndex, updates []Update[K, V], key K, h uint64) (pos, slot int, ok bool) {
	mask := len(x.slots) - 1
	tag := uint32(h)
	for i := int(tag) & mask; ; i = (i + 1) & mask {
		e := x.slots[i]
		if e == 0 {
			return 0, i, false
		}
		if uint32(e>>32) == tag {
			if p := int(uint32(e)) - 1; updates[p].Key == key {
				return p, i, true
			}
		}
	}
}

// insert puts pos, for a key whose hash is h, in the empty slot lookup
// returned for it.
func (x *pendingIndex) insert(slot int, h uint64, pos int) {
	x.slots[slot] = indexSlot(h, pos)
	x.n++
	if 2*x.n > len(x.slots) {
		x.grow(2 * len(x.slots))
	}
}

// add puts pos, for a key that is not in the table, without a lookup.
func (x *pendingIndex) add(h uint64, pos int) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(max(minIndexSlots, 2*len(x.slots)))
	}
	x.place(indexSlot(h, pos))
	x.n++
}

// place puts slot value e in the first empty slot from its home.
func (x *pendingIndex) place(e uint64) {
	mask := len(x.slots) - 1
	i := int(uint32(e>>32)) & mask
	for x.slots[i] != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = e
}

// grow moves the table to size slots, or to the spare if it has more and
// size is past maxReusedIndex.
func (x *pendingIndex) grow(size int) {
	old := x.slots
	if size > maxReusedIndex && len(x.spare) >= size {
		x.slots, x.spare = x.spare, nil
		clear(x.slots)
	} else {
		x.slots = make([]uint64, size)
	}
	for _, e := range old {
		if e != 0 {
			x.place(e)
		}
	}
}

// remove empties slot i, moving back the entries after it that would
// otherwise no longer be found from their home slots.
func (x *pendingIndex) remove(i int) {
	mask := len(x.slots) - 1
	for j := (i + 1) & mask; x.slots[j] != 0; j = (j + 1) & mask {
		home := int(uint32(x.slots[j]>>32)) & mask
		// The entry at j may move to i unless its home lies cyclically
		// in (i, j]: then it is found before reaching i.
		if (i < j && (home <= i || home > j)) || (i > j && home <= i && home > j) {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = 0
	x.n--
}

// setPos changes the position stored in slot i.
func (x *pendingIndex) setPos(i, pos int) {
	x.slots[i] = x.slots[i]&^(1<<32-1) | uint64(pos+1)
}

// reset empties the table for the next window. A table grown past
// maxReusedIndex slots is not cleared now, which would cost every later
// window, however small, as much as the large one: it becomes the spare
// (if it is larger than the spare) up to 2*maxKeptWindow slots, and is
// dropped beyond (typically the table of a subscription's first snapshot,
// which lists every entry).
func (x *pendingIndex) reset() {
	switch {
	case len(x.slots) > 2*maxKeptWindow:
		x.slots = nil
	case len(x.slots) > maxReusedIndex:
		if len(x.slots) > len(x.spare) {
			x.spare = x.slots
		}
		x.slots = nil
	case x.n > 0:
		clear(x.slots)
	}
	x.n = 0
}
