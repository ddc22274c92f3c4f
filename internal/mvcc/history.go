package mvcc

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// array is a slot array and the older values of its slots. The older
// values live beside the slots rather than in them, so that a slot is
// three words: few slots have any, and only until the writer's next trim
// after the snapshots that read them are gone.
type array struct {
	slots []slot
	older atomic.Pointer[history]
	pages atomic.Pointer[pageHeads] // copies of pages of slots (page.go); nil while there are none
	// frozen is the undo logs of Batches that ended on this array while
	// a snapshot before them was held (frozen.go); nil while there are
	// none. The writer replaces the list, never changes it.
	frozen atomic.Pointer[[]*frozenBatch]
}

// newArray makes an array of n empty slots; ptr says whether their
// values are pointers (see slot).
func newArray(n int, ptr bool) *array {
	a := &array{slots: newSlots(n, ptr)}
	a.older.Store(newHistory(16))
	return a
}

// history maps a slot's index to its list of older values, newest first:
// an open-addressed table that only the writer changes, and readers read
// without locks. An entry once given to a slot stays that slot's; the
// writer makes a new table, of the entries that still hold a list, when
// too many are taken.
type history struct {
	e     []entry // a power of two of them
	shift uint8   // 32 - log2(len(e))
	used  int     // entries given to a slot; writer only
}

type entry struct {
	slot atomic.Uint32 // the slot's index + 1; 0 while free
	head atomic.Pointer[record]
}

func newHistory(n int) *history {
	return &history{e: make([]entry, n), shift: uint8(32 - bits.TrailingZeros(uint(n)))}
}

// record is a value a slot held before, for the snapshots older than the
// slot's version.
type record struct {
	ver   uint64                 // | gone (| the value's index in its keep block: see keptRecord)
	v     uint64                 // the value's word, as a slot's v (a pointer in a pointerRecord; its keep block in a keptRecord)
	older atomic.Pointer[record] // cut by the writer while readers walk it
}

// pointerRecord is record with v typed as the pointer it holds, as
// pointerSlot is slot.
type pointerRecord struct {
	ver   uint64
	v     unsafe.Pointer
	older atomic.Pointer[record]
}

// newRecords allocates n records; ptr says whether their values are
// pointers.
func newRecords(n int, ptr bool) []record {
	if !ptr {
		return make([]record, n)
	}
	r := make([]pointerRecord, n)
	return unsafe.Slice((*record)(unsafe.Pointer(unsafe.SliceData(r))), n)
}

// spot returns the first entry to look at for slot i: the high bits of
// i times 2^32 divided by the golden ratio, which spread neighbours apart.
func (h *history) spot(i int) uint32 {
	return uint32(i) * 0x9E3779B1 >> h.shift
}

// list returns the newest older value of slot i, or nil. A reader calls it
// after it read the slot's word: the writer adds a value to the list
// before it changes the word, and to the newest table.
func (a *array) list(i int) *record {
	h := a.older.Load()
	for j := h.spot(i); ; j = (j + 1) & uint32(len(h.e)-1) {
		switch h.e[j].slot.Load() {
		case uint32(i) + 1:
			return h.e[j].head.Load()
		case 0:
			return nil
		}
	}
}

// room makes sure the next keep finds room without rebuilding the table.
// Writer only.
func (a *array) room() {
	if h := a.older.Load(); (h.used+1)*4 > len(h.e)*3 {
		a.rebuild(h)
	}
}

// keep puts r at the head of slot i's list. Writer only.
func (a *array) keep(i int, r *record) {
	a.room()
	h := a.older.Load()
	for j := h.spot(i); ; j = (j + 1) & uint32(len(h.e)-1) {
		e := &h.e[j]
		switch e.slot.Load() {
		case uint32(i) + 1:
		case 0:
			e.slot.Store(uint32(i) + 1)
			h.used++
		default:
			continue
		}
		r.older.Store(e.head.Load())
		e.head.Store(r)
		return
	}
}

// rebuild publishes a table of the entries of h that hold a list, with
// room for as many again. A reader on h reads the lists as they were, and
// the writer changes only the new one: that is safe for the reader,
// whose values were kept before it read its slot. Writer only.
func (a *array) rebuild(h *history) *history {
	live := 0
	for j := range h.e {
		if h.e[j].head.Load() != nil {
			live++
		}
	}
	n := 16
	for n*3 < (live+1)*2*4 {
		n *= 2
	}
	nh := newHistory(n)
	for j := range h.e {
		e := &h.e[j]
		if r := e.head.Load(); r != nil {
			i := int(e.slot.Load() - 1)
			k := nh.spot(i)
			for nh.e[k].slot.Load() != 0 {
				k = (k + 1) & uint32(n-1)
			}
			nh.e[k].slot.Store(uint32(i) + 1)
			nh.e[k].head.Store(r)
			nh.used++
		}
	}
	a.older.Store(nh)
	return nh
}

// clear empties h in place, for a reader that reads again when the writer
// trims. Writer only.
func (h *history) clear() {
	for j := range h.e {
		if h.e[j].slot.Load() != 0 {
			h.e[j].head.Store(nil)
			h.e[j].slot.Store(0)
		}
	}
	h.used = 0
}

// count is the number of older values kept. Writer only.
func (a *array) count() int {
	n := 0
	h := a.older.Load()
	for j := range h.e {
		for r := h.e[j].head.Load(); r != nil; r = r.older.Load() {
			n++
		}
	}
	return n
}
