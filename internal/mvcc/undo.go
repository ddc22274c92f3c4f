package mvcc

import (
	"slices"
	"sync/atomic"
	"unsafe"
)

// undoLog is what a Batch under way found in each slot it wrote, in the
// order it first wrote them: entry x is the slot the batch wrote as
// version base+x. A Batch gives each slot it writes a version of its own
// in a block after the published one, and publishes the version after
// the block, so that a reader of the published version that meets a
// slot the batch wrote finds what the slot held before at an index the
// slot's word gives, with no table to look it up in and nothing kept per
// slot until the batch ends (see Table.Batch).
//
// The writer reuses the entries from one batch to the next: a reader
// that read an entry checks that base did not change meanwhile.
//
// Readers never read the count of entries: a reader learns an index from
// a slot's word, which the writer stores after the entry (see find). Each
// atomic store is a locked instruction on amd64: an entry takes two, its
// word and its value (and a third in a table of pointers, when end clears
// the value). Until round forty-two it took five, the count and both
// values stored and a pointer cleared, about a fifth of the cost of a
// Store in a batch of integers.
//
// An entry holds what readers read, the slot's word and value: 16 bytes.
// Which slot it was is the writer's alone, an index kept beside the
// entries. The writer needs the slots of the array the batch began in
// only, for an array the batch grew into is read by no version before
// the batch (see Table.keepReplaced), and those are the entries before
// grew. Until round fifty an entry also held the slot's array and a
// pointer to the slot, 40 bytes, which the batch's end cleared again.
type undoLog struct {
	// base is the first version of the Batch under way, 0 outside one.
	// The writer sets it after n is 0, and clears it before it reuses
	// the entries.
	base   atomic.Uint64
	n      uint64 // entries written; the writer's alone
	blocks atomic.Pointer[[]*undoBlock]

	// The writer's alone: the array the batch began in; the index of
	// the first entry in an array the batch grew into (n while it has
	// not grown); and the index of each entry's slot in its array.
	arr   *array
	grew  uint64
	slots []uint32
}

// undoBlockSize is the number of entries in each block of an undoLog.
const undoBlockSize = 256

// undoBlock is a block of entries. A table of pointers allocates its
// blocks as pointerUndos, whose values the collector scans, and reads
// them through this type, as it does its slots (see pointerSlot).
type undoBlock [undoBlockSize]undo

// undo is a slot as it was before a Batch first wrote it: its word (0 if
// the slot was empty) and its value (a pointer in a table of pointers:
// see raw). Readers read both atomically.
type undo struct {
	w atomic.Uint64
	v uint64
}

// pointerUndo is undo with v typed as the pointer it holds.
type pointerUndo struct {
	w atomic.Uint64
	v unsafe.Pointer
}

func (u *undo) value(ptr bool) raw { return loadRaw(&u.v, ptr) }

// begin starts the log of a batch whose first version is base, made in
// the slots of arr. Writer only.
func (l *undoLog) begin(base uint64, arr *array) {
	l.n = 0
	l.arr, l.grew = arr, noGrowth
	l.slots = l.slots[:0]
	l.base.Store(base)
}

// noGrowth is undoLog.grew while the batch has not grown its table.
const noGrowth = ^uint64(0)

// add records that slot s of array a held word w and value v (a pointer
// if ptr), and returns its index: the batch writes s as version
// base+index, after add returns. Writer only.
func (l *undoLog) add(a *array, s *slot, w uint64, v raw, ptr bool) uint64 {
	x := l.n
	bp := l.blocks.Load()
	if bp == nil || x/undoBlockSize >= uint64(len(*bp)) {
		bp = l.grow(bp, ptr)
	}
	if a != l.arr && l.grew == noGrowth {
		l.grew = x
	}
	if len(l.slots) == cap(l.slots) {
		// Doubling: append grows a long slice by a quarter, which
		// allocates five times the final length over a batch of
		// 100,000 entries, where doubling allocates twice.
		l.slots = slices.Grow(l.slots, max(len(l.slots), undoBlockSize))
	}
	l.slots = append(l.slots, uint32(s.index(a.slots)))
	u := &(*bp)[x/undoBlockSize][x%undoBlockSize]
	u.w.Store(w)
	storeRaw(&u.v, v, ptr)
	l.n = x + 1
	return x
}

// grow adds a block to the list bp (nil for none), publishes the longer
// list and returns it. The list grows in place while its array has room:
// a reader indexes only below the length of the list it loaded, and the
// writer only writes past the longest it published for that array (end
// keeps a list whole or drops it), so the new element is no reader's. A
// batch of n entries copies O(n) block pointers, not a list per block.
func (l *undoLog) grow(bp *[]*undoBlock, ptr bool) *[]*undoBlock {
	var b *undoBlock
	if ptr {
		pb := make([]pointerUndo, undoBlockSize)
		b = (*undoBlock)(unsafe.Pointer(unsafe.SliceData(pb)))
	} else {
		b = new(undoBlock)
	}
	var blocks []*undoBlock
	if bp != nil {
		blocks = *bp
	}
	blocks = append(blocks, b)
	l.blocks.Store(&blocks)
	return &blocks
}

// find returns what the slot the batch under way wrote as version ver
// held before, and false if ver is not one of its versions, or the batch
// ended meanwhile: then what the slot held is in its list of older
// values, if a snapshot may read it (see Table.endBatch). Any goroutine.
//
// The caller read ver in a slot's word, before find loads base. While
// base is the same, from that load until the check at the end, ver is
// the batch's: versions before it are below base, and the writer writes
// none after the batch's until it has cleared base. So the entry's index
// is ver-base, and the entry was written before the slot's word that
// gave ver away. A version newer than the batch, read in a word the
// writer stored after clearing base, meets a base that is 0 or a later
// batch's above it, or one that changes before the check.
func (l *undoLog) find(ver uint64, ptr bool) (w uint64, v raw, ok bool) {
	base := l.base.Load()
	if base == 0 || ver < base {
		return 0, raw{}, false
	}
	x := ver - base
	if inRead != nil {
		inRead(3)
	}
	bp := l.blocks.Load()
	if bp == nil || x/undoBlockSize >= uint64(len(*bp)) {
		// Within a batch the blocks are stored before the entries are
		// counted: the batch ended, and end dropped them (a later
		// batch may have made new ones).
		return 0, raw{}, false
	}
	u := &(*bp)[x/undoBlockSize][x%undoBlockSize]
	w, v = u.w.Load(), u.value(ptr)
	if l.base.Load() != base {
		return 0, raw{}, false // the writer ended the batch, and may be reusing u
	}
	return w, v, true
}

// each calls fn with each entry, in order, and the slot it was: the
// index of that slot in the slots of the array the batch began in, and
// whether it was one (false for a slot of an array the batch grew into).
// Writer only.
func (l *undoLog) each(fn func(u *undo, slot int, began bool)) {
	bp := l.blocks.Load()
	for x := range l.n {
		fn(&(*bp)[x/undoBlockSize][x%undoBlockSize], int(l.slots[x]), x < l.grew)
	}
}

// end closes the batch's log. It keeps the blocks for the next batch
// only while they are small beside a table of keys keys, and lets go of
// the values they hold (pointers if ptr) and of the array. Writer only.
func (l *undoLog) end(keys int, ptr bool) {
	n := l.n
	l.base.Store(0) // before the entries are changed: see at
	l.arr = nil
	bp := l.blocks.Load()
	if bp == nil {
		return
	}
	if uint64(len(*bp))*undoBlockSize > uint64(max(1024, keys/8)) {
		l.blocks.Store(nil)
		l.slots = nil
		return
	}
	if ptr {
		for x := range n {
			storeRaw(&(*bp)[x/undoBlockSize][x%undoBlockSize].v, raw{}, true)
		}
	}
}

// room is the number of entries the log keeps room for. Writer only.
func (l *undoLog) room() int {
	if bp := l.blocks.Load(); bp != nil {
		return len(*bp) * undoBlockSize
	}
	return 0
}
