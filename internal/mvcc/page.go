package mvcc

import (
	"sync/atomic"
	"unsafe"
	"weak"
)

// pageSize is the number of slots in a page: the slots whose older
// values a page copy keeps together.
const pageSize = 64

// pageCopy is the words of the slots of one page as they were at version
// asOf, and their values (valuePageCopy, pointerPageCopy), kept for the
// snapshots that read them. A Store in
// place makes one rather than a record when its page has kept a few
// records in the version already (see copyAfter): the snapshot of the
// version before, held by a lazy reader through a whole pass over the
// keys, then costs the writer a few records and a copy of 64 adjacent
// slots per page, where it cost a record, and a cold probe of the history
// table, per key; the trie's first write to a leaf after a State copies
// the leaf in the same way. A copy's words are never changed once it is
// linked; a trim that unlinks a copy of pointers lets go of its values,
// and a reader holding no snapshot that reads one sees the trim and
// reads again, as it does a record's (heldSnapshots.trims).
type pageCopy struct {
	asOf  uint64
	older atomic.Pointer[pageCopy] // the page's copy before; cut by the writer while readers walk it
	words [pageSize]uint64
}

// valuePageCopy is a page copy in a table whose values are not pointers,
// which holds them as a slot's v: its pageCopy is its first field, so a
// *pageCopy of one points at it.
type valuePageCopy struct {
	pageCopy
	vals [pageSize]uint64
}

// pointerPageCopy is a page copy in a table whose values are pointers. Its
// values are in a keep block of their own, which it holds weakly, as a
// record holds its value's block (keepblock.go): the snapshots that read
// the copy hold the block, and the values die with the last of them
// rather than when a trim unlinks the copy, a collection cycle or more
// later. A map of 100 Kubernetes-style values with eight subscribers
// that lag kept about 3,500 replaced values alive through its page
// copies, 9.8 MB of live heap where a Go map's is 2.
type pointerPageCopy struct {
	pageCopy
	block weak.Pointer[keepBlock]
}

// values returns c, a copy in a table of values that are not pointers,
// as it was made.
func (c *pageCopy) values() *valuePageCopy {
	return (*valuePageCopy)(unsafe.Pointer(c))
}

// pointers returns c, a copy in a table of pointers, as it was made.
func (c *pageCopy) pointers() *pointerPageCopy {
	return (*pointerPageCopy)(unsafe.Pointer(c))
}

// pageHeads holds each page's copies, newest first, by page index, and
// the writer's count of the records each page kept in a version.
type pageHeads struct {
	heads []atomic.Pointer[pageCopy]
	// keeps is, by page, the version of the page's last record in its
	// high bits and the number of records it kept in that version, up
	// to copyAfter, in its low 8. Writer only.
	keeps []uint64
}

// copyAfter is how many records a page keeps in a version before a Store
// in place copies the page instead: a page written once or twice in a
// version (readers that each take a snapshot as they read make the
// writer move on to a new version every few Stores) keeps records, 24
// bytes a value where a copy is a kilobyte, and one written more (a lazy
// reader's snapshot leaves the version open through a pass over the
// keys) is copied once and kept by the copy from then on. Tests set it to
// 0, and to a number no page reaches, to run each way alone.
var copyAfter = 4

// makePages returns the page heads of a, made when first needed: before a
// Store's change begins, for a snapshot may wait for the change. Writer
// only.
func (a *array) makePages() *pageHeads {
	ps := a.pages.Load()
	if ps == nil {
		n := (len(a.slots) + pageSize - 1) / pageSize
		ps = &pageHeads{heads: make([]atomic.Pointer[pageCopy], n), keeps: make([]uint64, n)}
		a.pages.Store(ps) // no copies yet: readers find none
	}
	return ps
}

// copying reports whether the Store in place of version ver to slot i
// should keep what it replaces by a copy of the slot's page, and counts
// a record for the page if it should not. Writer only.
func (a *array) copying(i int, ver uint64) bool {
	k := &a.makePages().keeps[i/pageSize]
	if *k>>8 != ver {
		*k = ver << 8
	}
	if int(*k&0xff) >= copyAfter {
		return true
	}
	*k++
	return false
}

// copyPage returns a copy of the page of slot i as it is, to be kept for
// the snapshots of version ver-1 by a Store writing ver in place, or nil
// if the page was copied in ver already; in a table of pointers, also the
// keep block of the copy's values, which the caller holds until it
// chains it (keepBlocks.adopt) or drops the copy. The copy is allocated
// before the Store's change begins. Writer only.
func (a *array) copyPage(i int, ver uint64, ptr bool) (*pageCopy, *keepBlock) {
	ps := a.makePages()
	p := i / pageSize
	if h := ps.heads[p].Load(); h != nil && h.asOf == ver-1 {
		return nil, nil
	}
	var c *pageCopy
	var vals *[pageSize]uint64
	var b *keepBlock
	if ptr {
		pc := new(pointerPageCopy)
		b = new(keepBlock)
		pc.block = weak.Make(b)
		c = &pc.pageCopy
	} else {
		vc := new(valuePageCopy)
		c, vals = &vc.pageCopy, &vc.vals
	}
	c.asOf = ver - 1
	lo := p * pageSize
	for j := range min(len(a.slots)-lo, pageSize) {
		s := &a.slots[lo+j]
		w := s.word.Load()
		c.words[j] = w
		// Plain stores: nobody reads the copy before it is linked.
		if v := loadRaw(&s.v, ptr); ptr {
			b.v[j] = v.p
			if w != 0 && w&deleted == 0 {
				b.live |= 1 << j // read, nil or not (see pageCopyAt)
			}
		} else {
			vals[j] = v.n
		}
	}
	return c, b
}

// linkPage puts c at the head of the copies of slot i's page. Writer
// only; the Store that made c calls it before it changes the slot.
func (a *array) linkPage(i int, c *pageCopy) {
	head := &a.pages.Load().heads[i/pageSize]
	c.older.Store(head.Load())
	head.Store(c)
}

// pageCopyAt returns the copy of slot i's page that a reader of version
// at reads, and the copy's word for the slot, or nil if it reads none.
// That is the oldest copy made as of at or later: the one trimPages keeps
// while at is held. Its word may be newer than at, if the slot was
// written in place in the version the copy was made in before the copy
// was: then a record has the value, and so nil. A newer copy whose word
// for the slot is not newer than at holds the same value, but trimPages
// may unlink it and let go of its values while a reader reads it. A word
// of 0 (the slot was empty when the page was copied) gives the key's
// absence at version 0: it came later.
//
// It does not reach the copy's keep block: a newer record may hold the
// value read at version at, and a copy that is not read must not have its
// block made strong while the collector marks, which would bring back
// every value kept since (collector.go). Read the value with
// (*pageCopy).value once it is the one read.
func (a *array) pageCopyAt(i int, at uint64) (*pageCopy, uint64) {
	ps := a.pages.Load()
	if ps == nil {
		return nil, 0
	}
	var read *pageCopy
	for c := ps.heads[i/pageSize].Load(); c != nil && c.asOf >= at; c = c.older.Load() {
		read = c
	}
	if read == nil {
		return nil, 0
	}
	if w := read.words[i%pageSize]; w == 0 || w&verMask <= at {
		return read, w
	}
	return nil, 0
}

// value returns the value of slot i that c keeps, whose word for it holds
// one, and reports false if c's keep block is gone: no snapshot still
// held reads it.
func (c *pageCopy) value(i int, ptr bool) (raw, bool) {
	if !ptr {
		return loadRaw(&c.values().vals[i%pageSize], false), true
	}
	b := c.pointers().block.Value()
	if b == nil {
		return raw{}, false
	}
	return raw{p: atomic.LoadPointer(&b.v[i%pageSize])}, true
}

// trimPages unlinks each copy that no held version reads: a copy is read
// by the versions after the one its page's older copy was made as of, up
// to its own. readBy reports whether a held version lies in [from, to).
// In a table of pointers, whose keep blocks are k (nil otherwise), it lets
// go of an unlinked copy's values as it does of an unlinked record's
// (Table.dropValue). It returns the number of copies left. Writer only.
func (a *array) trimPages(readBy func(from, to uint64) bool, k *keepBlocks) int {
	ps := a.pages.Load()
	if ps == nil {
		return 0
	}
	left := 0
	for p := range ps.heads {
		link := &ps.heads[p]
		for c := link.Load(); c != nil; c = c.older.Load() {
			var lo uint64
			if o := c.older.Load(); o != nil {
				lo = o.asOf
			}
			if readBy(lo+1, c.asOf+1) {
				link = &c.older
				left++
				continue
			}
			link.Store(c.older.Load()) // a reader on c goes on through c.older
			if k != nil {
				k.drop(c.pointers().block, ^uint64(0))
			}
		}
	}
	return left
}

// copies is the number of page copies kept. Writer only.
func (a *array) copies() int {
	ps := a.pages.Load()
	if ps == nil {
		return 0
	}
	n := 0
	for p := range ps.heads {
		for c := ps.heads[p].Load(); c != nil; c = c.older.Load() {
			n++
		}
	}
	return n
}
