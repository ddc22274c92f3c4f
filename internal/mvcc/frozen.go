package mvcc

import (
	"slices"
	"sync/atomic"
	"unsafe"
	"weak"
)

// frozenBatch is what a Batch's undo log held when the batch ended while
// a snapshot of a version before it was held: what each slot the batch
// wrote held before, at the index of the version the batch gave the slot.
// Snapshots go on reading it as readers of the published version read the
// undo log while the batch was under way, found by that version: ending
// the batch costs a copy of its log, where moving each value into its
// slot's list cost a record and a cold probe of the history table. What
// readers read is never changed once frozen.
//
// An entry is live while a held snapshot may read its value and no list
// has it: a Store that replaces a value the batch wrote first moves the
// live entries on the slot's way into the slot's list (see thaw), and so
// does a later batch that replaces it when nobody reads what it replaces
// (see keepReplaced). A frozen batch is dropped once
// none of its entries is live, or no snapshot older than the batch is
// held; its last few live entries are moved into their lists first, so
// that the frozen batches alive hold no more than freezeShare entries
// for each value still read.
type frozenBatch struct {
	base uint64 // the batch wrote versions base to base+len(olds)-1
	// olds holds, by index, a slot's word as a record's ver (0 if the key
	// was new to the batch, or the slot is of an array the batch grew
	// into) and, if the entry is live when frozen, its value as a
	// record's v.
	olds []record
	// blocks, in a table of pointers, hold the values of a batch that
	// was frozen, entry x's at index x%keepBlockLen of blocks[x/
	// keepBlockLen], and olds no values: as a page copy's (see
	// pointerPageCopy), they die with the last snapshot that could read
	// them rather than when a trim drops the batch. A batch that is
	// not frozen but moved into the lists at once holds its values in
	// olds, until its records take them.
	blocks []weak.Pointer[keepBlock]

	// The writer's own.
	slots []uint32 // by index, the slot's index in the array
	dead  []uint64 // a bit by index: not live
	live  int
}

// freezeShare is how many entries a frozen batch may hold for each live
// one (see frozenBatch).
const freezeShare = 4

func (f *frozenBatch) isLive(x uint64) bool { return f.dead[x/64]&(1<<(x%64)) == 0 }

func (f *frozenBatch) kill(x uint64) {
	f.dead[x/64] |= 1 << (x % 64)
	f.live--
}

// frozenAt returns what the slot of a that a frozen batch wrote as version
// ver held before, and false if no frozen batch of a wrote ver. lost
// reports that the value's keep block is gone: no snapshot still held
// reads it. Any goroutine.
func (a *array) frozenAt(ver uint64, ptr bool) (w uint64, v raw, ok, lost bool) {
	f, x := a.frozenOf(ver)
	if f == nil {
		return 0, raw{}, false, false
	}
	w = f.olds[x].ver
	if f.blocks == nil {
		return w, loadRaw(&f.olds[x].v, ptr), true, false
	}
	b := f.blocks[x/keepBlockLen].Value()
	if b == nil {
		return w, raw{}, true, true
	}
	return w, raw{p: atomic.LoadPointer(&b.v[x%keepBlockLen])}, true, false
}

// frozenOf returns the frozen batch of a that wrote version ver, and the
// index of ver in it, or nil.
func (a *array) frozenOf(ver uint64) (*frozenBatch, uint64) {
	fp := a.frozen.Load()
	if fp == nil {
		return nil, 0
	}
	for _, f := range *fp {
		if ver >= f.base && ver-f.base < uint64(len(f.olds)) {
			return f, ver - f.base
		}
	}
	return nil, 0
}

// keepReplaced keeps what the Batch that just ended, under way on arr
// when it began, replaced in arr that a snapshot may still read: a value
// written at or before newest, the newest version held. When those values
// are a good part of the batch's entries, it freezes the entries (a
// frozenBatch of arr); when they are few, it keeps each in its slot's
// list, as a Store would. It returns the number of older values it kept.
// Writer only.
//
// A replaced value that a frozen batch wrote, and that no held snapshot
// reads, leads only to what the frozen batch holds of the slot: that
// moves into the slot's list (see thaw), so that no frozen entry leads to
// another through values nobody reads, and a batch after this one that
// replaces the same values keeps nothing.
//
// An entry of an array the batch grew into is left empty: only versions
// after the batch read that array, and none of them is older than its
// slots' versions. A Load of the version before the batch that read an
// entry reads again, for the trims counter moved on.
func (t *Table[K, V]) keepReplaced(arr *array, newest uint64) int {
	n := t.undo.n
	kept, thawed := 0, 0
	t.undo.each(func(u *undo, i int, began bool) {
		w := u.w.Load()
		switch {
		case w == 0 || !began:
		case w&verMask <= newest:
			kept++
		case arr.frozen.Load() != nil:
			var buf [4]*record
			older := t.thaw(arr, w, buf[:0])
			for j := len(older) - 1; j >= 0; j-- {
				arr.keep(i, older[j])
			}
			thawed += len(older)
		}
	})
	if kept > 0 {
		// Frozen, entry x is the slot the batch wrote as version base+x;
		// kept in records, the entries are only those kept, in order.
		freeze := uint64(kept)*freezeShare >= n
		size := uint64(kept)
		if freeze {
			size = n
		}
		blocked := freeze && t.ptr
		f := &frozenBatch{base: t.undo.base.Load(), olds: newRecords(int(size), t.ptr && !blocked), slots: make([]uint32, size), dead: make([]uint64, (size+63)/64), live: kept}
		var blocks []*keepBlock
		if blocked {
			blocks = newKeepBlocks(int(size))
			f.blocks = make([]weak.Pointer[keepBlock], len(blocks))
			for i, b := range blocks {
				f.blocks[i] = weak.Make(b)
			}
		}
		x := uint64(0)
		t.undo.each(func(u *undo, i int, began bool) {
			w := u.w.Load()
			if w != 0 && began && w&verMask <= newest {
				f.olds[x].ver = w
				if blocked {
					// Plain stores: nobody reads the batch before it
					// is listed.
					b := blocks[x/keepBlockLen]
					b.v[x%keepBlockLen] = u.value(true).p
					b.live |= 1 << (x % keepBlockLen)
				} else {
					storeRaw(&f.olds[x].v, u.value(t.ptr), t.ptr)
				}
				f.slots[x] = uint32(i)
				x++
				return
			}
			if !freeze {
				return
			}
			if began {
				f.olds[x].ver = w // leads a reader on to the slot's list
			}
			f.dead[x/64] |= 1 << (x % 64)
			x++
		})
		if freeze {
			var list []*frozenBatch
			if old := arr.frozen.Load(); old != nil {
				list = append(list, *old...)
			}
			list = append(list, f)
			arr.frozen.Store(&list)
			for i, b := range blocks {
				t.blocks.adopt(b, f.blocks[i])
			}
		} else {
			t.unfreeze(arr, f)
		}
	}
	t.settleFrozen(arr) // thaws and unfreeze may have left frozen batches few live entries
	return kept + thawed
}

// thaw returns records of what the live entries of the frozen batches of
// a hold of a slot whose word is w, newest first: what the slot held
// before the batch that wrote w, and, if a frozen batch wrote that too,
// what it held before that, and so on; none if no frozen batch wrote w.
// Those entries die: the caller links the records into the slot's list,
// oldest first, before it replaces the slot's value, and then calls
// settleFrozen. Writer only.
func (t *Table[K, V]) thaw(a *array, w uint64, into []*record) []*record {
	for w != 0 {
		f, x := a.frozenOf(w & verMask)
		if f == nil {
			break
		}
		if f.isLive(x) {
			r := t.record()
			into = append(into, t.fromFrozen(f, x, r))
			f.kill(x)
		}
		w = f.olds[x].ver
	}
	return into
}

// fromFrozen fills r with entry x of f, as a slot's list keeps it. A
// frozen batch of pointers hands its value's place in the keep block to
// r, which holds it as any record does: the value stays where it is, and
// may be gone already if no snapshot still held reads it.
func (t *Table[K, V]) fromFrozen(f *frozenBatch, x uint64, r *record) *record {
	o := &f.olds[x]
	r.ver = o.ver & verMask
	if o.ver&deleted != 0 {
		r.ver |= gone
	}
	if f.blocks != nil {
		(*keptRecord)(unsafe.Pointer(r)).block = f.blocks[x/keepBlockLen]
		r.ver |= x % keepBlockLen << keptShift
		return r
	}
	t.keepValue(r, loadRaw(&o.v, t.ptr))
	return r
}

// unfreeze moves the live entries of f, a frozen batch of a or one not
// yet frozen, into their slots' lists, each after what the frozen batches
// hold of its slot before it. Writer only.
func (t *Table[K, V]) unfreeze(a *array, f *frozenBatch) {
	var recs []record
	for x := range uint64(len(f.olds)) {
		if !f.isLive(x) {
			continue
		}
		var buf [4]*record
		older := t.thaw(a, f.olds[x].ver, buf[:0])
		if len(recs) == 0 {
			// In blocks: one record a snapshot holds keeps its block
			// alive.
			recs = newListRecords(min(f.live, 256), t.ptr)
		}
		r := t.fromFrozen(f, x, &recs[0])
		recs = recs[1:]
		f.kill(x)
		i := int(f.slots[x])
		for j := len(older) - 1; j >= 0; j-- {
			a.keep(i, older[j])
		}
		a.keep(i, r)
	}
}

// settleFrozen drops the frozen batches of a whose entries are all dead,
// and moves those of the others that hold more than freezeShare entries
// for each live one into their lists first. A list with none to drop
// stays as it is, and nothing is allocated: every batch that ends under a
// held snapshot settles the list. Writer only.
func (t *Table[K, V]) settleFrozen(a *array) {
	fp := a.frozen.Load()
	if fp == nil {
		return
	}
	list := *fp
	i := slices.IndexFunc(list, (*frozenBatch).spent)
	if i < 0 {
		return
	}
	keep := make([]*frozenBatch, i, len(list)-1)
	copy(keep, list[:i])
	for _, f := range list[i:] {
		switch {
		case !f.spent():
			keep = append(keep, f)
		case f.live > 0:
			t.unfreeze(a, f)
		}
	}
	a.setFrozen(fp, keep)
}

// spent reports whether f holds more than freezeShare entries for each
// live one, or none live: settleFrozen drops it.
func (f *frozenBatch) spent() bool { return f.live*freezeShare < len(f.olds) || f.live == 0 }

// setFrozen makes keep, what is left of the list fp, a's frozen batches.
// Writer only.
func (a *array) setFrozen(fp *[]*frozenBatch, keep []*frozenBatch) {
	switch {
	case len(keep) == 0:
		a.frozen.Store(nil)
	case len(keep) < len(*fp):
		a.frozen.Store(&keep)
	}
}

// trimFrozen drops the frozen batches of a that no held version reads:
// those that no snapshot taken before them is held for. readBy reports
// whether a held version lies in [from, to); k is the table's keep blocks
// (nil in a table of values that are not pointers), through which it lets
// go of the values of those it drops. It returns the
// number of live entries of those it keeps. Writer only.
func (a *array) trimFrozen(readBy func(from, to uint64) bool, k *keepBlocks) int {
	fp := a.frozen.Load()
	if fp == nil {
		return 0
	}
	var keep []*frozenBatch
	left := 0
	for _, f := range *fp {
		if f.live > 0 && readBy(0, f.base) {
			keep = append(keep, f)
			left += f.live
			continue
		}
		if k != nil {
			f.dropValues(k)
		}
	}
	a.setFrozen(fp, keep)
	return left
}

// dropValues lets go of the values of f's live entries, in a batch of
// pointers that trim drops, as dropValue does of a record's, through k,
// the table's keep blocks: a snapshot that holds their keep block for
// other values does not keep them. The entries that moved into lists are
// the records'. Writer only.
func (f *frozenBatch) dropValues(k *keepBlocks) {
	for i, ref := range f.blocks {
		var mask uint64
		for j := range keepBlockLen {
			if x := uint64(i*keepBlockLen + j); x < uint64(len(f.olds)) && f.isLive(x) {
				mask |= 1 << j
			}
		}
		if mask != 0 {
			k.drop(ref, mask)
		}
	}
}

// frozenCount is the number of live entries of a's frozen batches: older
// values kept for held snapshots. Writer only.
func (a *array) frozenCount() int {
	fp := a.frozen.Load()
	if fp == nil {
		return 0
	}
	n := 0
	for _, f := range *fp {
		n += f.live
	}
	return n
}
