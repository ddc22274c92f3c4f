package watchable

// chanTable maps keys to channels: NotifyKeys' first channel of each key.
// It is a table probed linearly from the key's hamt.Hash, which a write
// has computed already, and a slot holds the hash, the channel and the key
// side by side. With thousands of keys, a write finds its channel in one
// cold cache line, where a Go map would hash the key again and read a
// group's control word and then its slot. At most three quarters of the
// slots are used, so a lookup rarely probes past the first line.
//
// Like a Go map's, a key that is not equal to itself (a NaN) is never
// found, so it cannot be deleted either.
type chanTable[K comparable] struct {
	slots []chanSlot[K] // a power of two of them, or none
	n     int           // slots in use
}

type chanSlot[K comparable] struct {
	hash uint64
	ch   chan<- struct{} // nil: the slot is empty
	key  K
}

// get returns the channel of k, whose hash is h.
func (t *chanTable[K]) get(k K, h uint64) (chan<- struct{}, bool) {
	if t.n == 0 {
		return nil, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ch == nil {
			return nil, false
		}
		if s.hash == h && s.key == k {
			return s.ch, true
		}
	}
}

// set makes ch, which is not nil, the channel of k.
func (t *chanTable[K]) set(k K, h uint64, ch chan<- struct{}) {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ch == nil {
			*s = chanSlot[K]{hash: h, ch: ch, key: k}
			t.n++
			return
		}
		if s.hash == h && s.key == k {
			s.ch = ch
			return
		}
	}
}

// delete removes k. The slots after it that a lookup reaches only by
// probing past it move back, so that no lookup stops short of them.
func (t *chanTable[K]) delete(k K, h uint64) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for {
		s := &t.slots[i]
		if s.ch == nil {
			return // not there
		}
		if s.hash == h && s.key == k {
			break
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.slots[j].ch != nil; j = (j + 1) & mask {
		// The slot at j may fill the hole at i if its probe started at i
		// or before: no further from its start than i is from j.
		if (j-t.slots[j].hash)&mask >= (j-i)&mask {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = chanSlot[K]{}
	t.n--
	if t.n == 0 {
		t.slots = nil
	}
}

// grow doubles the table (to 16 slots from none) and puts every entry
// back.
func (t *chanTable[K]) grow() {
	old := t.slots
	t.slots = make([]chanSlot[K], max(16, 2*len(old)))
	t.n = 0
	for _, s := range old {
		if s.ch != nil {
			t.set(s.key, s.hash, s.ch)
		}
	}
}
