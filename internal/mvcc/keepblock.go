package mvcc

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
	"weak"
)

// Older values that are pointers live in keep blocks, which the snapshots
// that may read them own, rather than in the records that list them.
//
// Why: the table learns that a snapshot is gone only when the collector
// runs the snapshot's cleanup, at the end of a collection cycle, and trims
// after that. Had the records held the values, every value a Store
// replaced while a reader held a snapshot (a subscriber that keeps up
// holds one at every Store) would stay reachable from the table until
// then: marked by the next cycle, as if the map were twice its size. In a
// profile of a million Kubernetes-style entries with eight subscribers,
// the live heap grew from 1.3 to 3.9 GB, and the collector's marking took
// more of the CPU than the writer. Held by their snapshots, the values
// die with the last snapshot that could read them, in the cycle that
// finds it unreachable, as a plain map's replaced values do.
//
// How: the blocks are chained from older to newer. A snapshot holds the
// block that was current when its version was published (see anchor), so
// it reaches every value kept after that: all it can read. A record keeps
// its block weakly, with the value's index in the block; the table holds
// only the current block. A record whose block is gone lists a value that
// no snapshot still held reads.

// keepBlockLen is the number of values a keep block holds.
const keepBlockLen = 64

// keepBlock is a block of older values of a table whose values are
// pointers.
type keepBlock struct {
	v [keepBlockLen]unsafe.Pointer
	// next is the block after this one that still holds a value a
	// record lists, or the newest; the collector follows it, nobody
	// else reads it. Writer only.
	next *keepBlock
	// live has a bit set for each value of the block that a record, a
	// page copy or a frozen batch lists, nil or not: a snapshot may
	// still read it. Writer only.
	live uint64
}

// keepBlocks is a table's keep blocks, as the writer sees them.
type keepBlocks struct {
	cur  *keepBlock
	ref  weak.Pointer[keepBlock] // cur's
	used int                     // values put in cur
	// moved reports that cur changed since anchor was last set.
	moved bool
	// anchor is the block a snapshot of the current version holds: the
	// current block as it was at the end of the writer's last change,
	// or an older one. A change keeps its values in the current block or
	// in newer ones, so a snapshot of a version before the change reaches
	// them all from it.
	anchor atomic.Pointer[keepBlock]
	// all is every block made that may still be alive, oldest first,
	// for relink.
	all []weak.Pointer[keepBlock]

	// drops are the values trims let go of and have not cleared from
	// their blocks yet; they wait, as relinking does, for the collector
	// to be quiet (collector.go). waited counts the trims in a row that
	// found it busy.
	drops  []blockDrop
	waited int
	gauge  gauge
}

// blockDrop is values of a keep block that no snapshot still held reads:
// those whose bits mask sets.
type blockDrop struct {
	ref  weak.Pointer[keepBlock]
	mask uint64
}

// maxWaits is how many trims in a row may find the collector busy before
// one clears the blocks all the same: a heap that the memory limit keeps
// collecting is never quiet.
const maxWaits = 4

// drop lets go of the values of the block ref whose bits mask sets, now
// or once the collector is quiet (see release). Writer only.
func (k *keepBlocks) drop(ref weak.Pointer[keepBlock], mask uint64) {
	k.drops = append(k.drops, blockDrop{ref, mask})
}

// release clears from their blocks the values drop was given, and
// relinks the blocks, when the collector is quiet or force is set;
// otherwise they wait for the next call. A trim calls it once it has
// unlinked what no snapshot reads. Writer only.
func (k *keepBlocks) release(force bool) {
	if !force && k.waited < maxWaits && !k.gauge.quiet() {
		k.waited++
		return
	}
	for _, d := range k.drops {
		b := d.ref.Value()
		if b == nil {
			continue // gone with the last snapshot that could read it
		}
		for m := d.mask; m != 0; m &= m - 1 {
			if j := bits.TrailingZeros64(m); b.v[j] != nil {
				atomic.StorePointer(&b.v[j], nil)
			}
		}
		b.live &^= d.mask
	}
	// A queue that once held a great many drops is not kept that large.
	if cap(k.drops) > 4096 {
		k.drops = nil
	} else {
		clear(k.drops)
		k.drops = k.drops[:0]
	}
	k.relink()
	k.waited = 0
}

// start makes the first block. Writer only.
func (k *keepBlocks) start() {
	k.next()
	k.settle()
}

// next makes a new current block, after the current one. Writer only.
func (k *keepBlocks) next() {
	b := new(keepBlock)
	if k.cur != nil {
		k.cur.next = b
	}
	k.cur, k.ref, k.used, k.moved = b, weak.Make(b), 0, true
	k.all = append(k.all, k.ref)
}

// adopt makes b, a block of a page copy's or a frozen batch's values
// (see pointerPageCopy, frozenBatch) whose weak pointer is ref, the
// current block: the snapshots that read the copy or the batch reach it
// as they reach the values kept before it, and the next value kept
// starts a block after it. Writer only, when the copy or the batch is
// listed.
func (k *keepBlocks) adopt(b *keepBlock, ref weak.Pointer[keepBlock]) {
	k.cur.next = b
	k.cur, k.ref, k.used, k.moved = b, ref, keepBlockLen, true
	k.all = append(k.all, ref)
}

// newKeepBlocks makes the blocks for the values of a frozen batch of n
// entries (see frozenBatch), which the writer fills and then chains, in
// order, with adopt once the batch is listed.
func newKeepBlocks(n int) []*keepBlock {
	blocks := make([]*keepBlock, (n+keepBlockLen-1)/keepBlockLen)
	for i := range blocks {
		blocks[i] = new(keepBlock)
	}
	return blocks
}

// settle makes the current block the anchor, once the change that may
// have moved it on is published or done. Writer only.
func (k *keepBlocks) settle() {
	if k.moved {
		k.anchor.Store(k.cur)
		k.moved = false
	}
}

// keptRecord is record as a slot's list of a table of pointers has it:
// its v is the keep block of the value, which it holds weakly, and the
// value's index in the block is in bits of ver that a record's version
// leaves free.
type keptRecord struct {
	ver   uint64
	block weak.Pointer[keepBlock]
	older atomic.Pointer[record]
}

// keptShift is where a keptRecord's ver keeps the index of its value,
// above the version and below gone.
const keptShift = 56

const _ = uint(1<<(63-keptShift) - keepBlockLen) // the index fits below gone

// newListRecords allocates n records for slots' lists; ptr says whether
// the table's values are pointers, which keep blocks hold.
func newListRecords(n int, ptr bool) []record {
	if !ptr {
		return make([]record, n)
	}
	r := make([]keptRecord, n)
	return unsafe.Slice((*record)(unsafe.Pointer(unsafe.SliceData(r))), n)
}

// keepValue puts v, an older value of a slot, in r, a record of the
// slot's list whose ver is set. Writer only, before r is listed.
func (t *Table[K, V]) keepValue(r *record, v raw) {
	if !t.ptr {
		storeRaw(&r.v, v, false)
		return
	}
	k := &t.blocks
	if k.used == keepBlockLen {
		k.next()
	}
	atomic.StorePointer(&k.cur.v[k.used], v.p)
	k.cur.live |= 1 << k.used
	(*keptRecord)(unsafe.Pointer(r)).block = k.ref
	r.ver |= uint64(k.used) << keptShift
	k.used++
}

// kept returns the keep block of the value r lists, or nil if it is gone,
// and the value's index in it.
func kept(r *record) (*keepBlock, uint64) {
	ref, i := keptRef(r)
	return ref.Value(), i
}

// keptRef returns the weak pointer to the keep block of the value r
// lists, and the value's index in it.
func keptRef(r *record) (weak.Pointer[keepBlock], uint64) {
	return (*keptRecord)(unsafe.Pointer(r)).block, r.ver >> keptShift & (keepBlockLen - 1)
}

// keptValue reads the older value that r lists, and reports false if its
// block is gone: then no snapshot still held reads it. Any goroutine.
func (t *Table[K, V]) keptValue(r *record) (raw, bool) {
	if !t.ptr {
		return loadRaw(&r.v, false), true
	}
	b, i := kept(r)
	if b == nil {
		return raw{}, false
	}
	return raw{p: atomic.LoadPointer(&b.v[i])}, true
}

// dropValue lets go of the older value r lists, which no snapshot still
// held reads. The writer calls it once per record, when it unlinks it. A
// value in a keep block is cleared when the trim releases its drops
// (keepBlocks.release), not here: reaching the block now could keep it
// alive (collector.go).
func (t *Table[K, V]) dropValue(r *record) {
	if !t.ptr {
		storeRaw(&r.v, raw{}, false)
		return
	}
	ref, i := keptRef(r)
	t.blocks.drop(ref, 1<<i)
}

// forget starts a new block, as if none had been made before, and makes
// it the anchor: the snapshots that held the others are gone. Writer
// only, between changes: a snapshot of the current version reads no
// value kept before.
func (k *keepBlocks) forget() {
	if k.cur == nil {
		return
	}
	clear(k.all)
	k.all = k.all[:0]
	// What trims let go of is in blocks that are gone or going.
	clear(k.drops)
	k.drops = k.drops[:0]
	k.waited = 0
	k.next()
	k.settle()
}

// relink forgets the blocks that are gone, and chains each of the others
// to the next that still holds a listed value, or to the current one: a
// snapshot that holds a block whose values were all dropped keeps none
// of those blocks alive. Writer only; O(blocks).
func (k *keepBlocks) relink() {
	if k.cur == nil {
		return
	}
	next := k.cur
	j := len(k.all) - 1 // k.all[j:] are those kept, oldest first; the last is cur's
	for i := j - 1; i >= 0; i-- {
		b := k.all[i].Value()
		if b == nil {
			continue
		}
		b.next = next
		if b.live != 0 {
			next = b
		}
		j--
		k.all[j] = k.all[i]
	}
	n := copy(k.all, k.all[j:])
	clear(k.all[n:])
	k.all = k.all[:n]
}
