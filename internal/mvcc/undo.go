package mvcc

import (
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
// word and the one value the table's kind has (and a third in a table of
// pointers, when end clears the value). Until round forty-two it took
// five, the count and both values stored and a pointer cleared, about a
// fifth of the cost of a Store in a batch of integers.
type undoLog struct {
	// base is the first version of the Batch under way, 0 outside one.
	// The writer sets it after n is 0, and clears it before it reuses
	// the entries.
	base   atomic.Uint64
	n      uint64 // entries written; the writer's alone
	blocks atomic.Pointer[[]*undoBlock]
}

// undoBlockSize is the number of entries in each block of an undoLog.
const undoBlockSize = 256

type undoBlock [undoBlockSize]undo

// undo is a slot as it was before a Batch first wrote it: its word (0 if
// the slot was empty) and its value, in p in a table of pointers and in n
// in any other. a and s are the writer's; readers read w and the value,
// atomically.
type undo struct {
	a *array
	s *slot
	w atomic.Uint64
	p unsafe.Pointer // the value, when values are pointers
	n uint64         // the value, otherwise
}

func (u *undo) value(ptr bool) raw {
	if ptr {
		return raw{p: atomic.LoadPointer(&u.p)}
	}
	return raw{n: atomic.LoadUint64(&u.n)}
}

// begin starts the log of a batch whose first version is base. Writer
// only.
func (l *undoLog) begin(base uint64) {
	l.n = 0
	l.base.Store(base)
}

// add records that slot s of array a held word w and value v (a pointer
// if ptr), and returns its index: the batch writes s as version
// base+index, after add returns. Writer only.
func (l *undoLog) add(a *array, s *slot, w uint64, v raw, ptr bool) uint64 {
	x := l.n
	bp := l.blocks.Load()
	if bp == nil || x/undoBlockSize >= uint64(len(*bp)) {
		var blocks []*undoBlock
		if bp != nil {
			blocks = append(blocks, *bp...)
		}
		blocks = append(blocks, new(undoBlock))
		bp = &blocks
		l.blocks.Store(bp)
	}
	u := &(*bp)[x/undoBlockSize][x%undoBlockSize]
	u.a, u.s = a, s
	u.w.Store(w)
	if ptr {
		atomic.StorePointer(&u.p, v.p)
	} else {
		atomic.StoreUint64(&u.n, v.n)
	}
	l.n = x + 1
	return x
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

// each calls fn with each entry, in order. Writer only.
func (l *undoLog) each(fn func(u *undo)) {
	bp := l.blocks.Load()
	for x := range l.n {
		fn(&(*bp)[x/undoBlockSize][x%undoBlockSize])
	}
}

// end closes the batch's log. It keeps the blocks for the next batch
// only while they are small beside a table of keys keys, and lets go of
// the values they hold (pointers if ptr). Writer only.
func (l *undoLog) end(keys int, ptr bool) {
	n := l.n
	l.base.Store(0) // before the entries are changed: see at
	bp := l.blocks.Load()
	if bp == nil {
		return
	}
	if uint64(len(*bp))*undoBlockSize > uint64(max(1024, keys/8)) {
		l.blocks.Store(nil)
		return
	}
	for x := range n {
		u := &(*bp)[x/undoBlockSize][x%undoBlockSize]
		u.a, u.s = nil, nil
		if ptr {
			atomic.StorePointer(&u.p, nil)
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
