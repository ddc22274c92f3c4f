package mvcc

import (
	"runtime"
	"sync/atomic"
)

// Entry is one Store or Delete as the change log records it: the version
// it wrote and its key. The value is read from a snapshot, so that the log
// holds no value the table let go of.
type Entry[K comparable] struct {
	Ver uint64
	Key K
}

// chunkSize is the number of entries in each block of the log.
const chunkSize = 256

// chunk is a block of the log. The writer fills e in order and publishes
// each entry by counting it in n; readers read e[i] only for i below n.
// A block the writer drops is marked dropped and unlinked from the next,
// so that a cursor left on it holds no more than the block.
type chunk[K comparable] struct {
	n       atomic.Int64
	next    atomic.Pointer[chunk[K]]
	dropped atomic.Bool
	e       [chunkSize]Entry[K]
}

// changeLog is where subscribers learn which keys changed, the part of a
// library built on the table that the trie gets by comparing two
// versions. The writer keeps its blocks from head to tail, at most enough
// for Stores to a quarter of the keys (and a few blocks more): a cursor
// that lags further finds its block dropped, and learns the changes by
// comparing its snapshots slot by slot (Cursor.Changes), which costs it
// no more than a few reads per Store it lagged by. At a million keys the
// log holds up to 6 MB.
type changeLog[K comparable] struct {
	tail    atomic.Pointer[chunk[K]]
	readers atomic.Int64  // open cursors; the writer records nothing while there are none
	last    atomic.Uint64 // the version of the newest entry
	head    *chunk[K]     // the oldest block kept; writer only
	blocks  int           // blocks from head to tail; writer only
	limit   int           // blocks to keep beyond the tail and that quarter (tests lower it)

	// keepers counts the LogForDiff holds. The writer logs for them only
	// once a Diff asked (asked), and while it does (logging, counted in
	// readers) dir lists the blocks from head to tail, for Diff, and from
	// is 1 more than a version after which every change has its entry in
	// them (0 when there is none). read says a Diff read the log since
	// the writer last dropped a block; unread counts the blocks dropped
	// since one did, and once the whole log went by unread, the writer
	// stops logging until a Diff asks again.
	keepers atomic.Int64
	asked   atomic.Bool
	read    atomic.Bool
	logging bool // writer only
	unread  int  // writer only
	dir     atomic.Pointer[[]*chunk[K]]
	from    atomic.Uint64
}

// reserve makes room for one more entry: when the tail block is full, it
// links a fresh one, and drops the oldest blocks beyond what a table of
// keys keys keeps. Store calls it before the change it makes, so that a snapshot
// waiting for the change does not wait for an allocation too. Writer only.
func (l *changeLog[K]) reserve(keys int) {
	c := l.tail.Load()
	if c.n.Load() < chunkSize {
		return
	}
	next := new(chunk[K])
	c.next.Store(next)
	l.tail.Store(next)
	l.blocks++
	var dir []*chunk[K]
	if l.logging {
		// Appended past the end of every dir published: a Diff that
		// holds one reads none of what this writes.
		dir = append(*l.dir.Load(), next)
	}
	for l.blocks > 1+l.limit+keys/4/chunkSize {
		h := l.head
		if l.logging {
			// The log no longer holds every change after the versions
			// up to the dropped block's last: say so before dir
			// leaves the block out (see differ.viaLog).
			if v := h.e[chunkSize-1].Ver + 1; v > l.from.Load() {
				l.from.Store(v)
			}
			dir = dir[1:]
			if l.read.Swap(false) {
				l.unread = 0
			} else {
				l.unread++
			}
		}
		l.head = h.next.Load()
		h.dropped.Store(true) // before the link is cut: see Cursor.read
		h.next.Store(nil)
		l.blocks--
	}
	if l.logging {
		l.dir.Store(&dir)
		if l.unread > l.blocks {
			l.stop() // the whole log went by with no Diff reading it
		}
	}
}

// LogForDiff offers the table's change log to Diff, until release is
// called: once a Diff between two snapshots of the table has walked its
// slots (see Diff), the writer records each Store and Delete in the log
// from its next change on, so that a later Diff between two snapshots of
// versions since reads the keys that changed from the log while it
// reaches back that far (it keeps about a quarter of the keys' worth of
// entries). Each Store then costs an entry, and so the writer stops once
// a whole log's worth of entries went by without a Diff reading any, until
// a Diff asks again. Any goroutine, and so is release, which must be
// called once.
func (t *Table[K, V]) LogForDiff() (release func()) {
	t.log.keepers.Add(1)
	var released atomic.Bool
	return func() {
		if released.Swap(true) {
			panic("mvcc: LogForDiff released twice")
		}
		if t.log.keepers.Add(-1) == 0 {
			t.log.asked.Store(true) // the writer stops logging at its next change
		}
	}
}

// ask asks the writer to log changes for Diff, if a LogForDiff holds.
// Any goroutine.
func (l *changeLog[K]) ask() {
	if l.keepers.Load() > 0 && !l.asked.Load() {
		l.asked.Store(true)
	}
}

// answer starts logging for Diff, or stops, as LogForDiff's holds and the
// Diffs that asked want: the writer calls it before a change, outside a
// Batch, when asked is set.
func (t *Table[K, V]) answer() {
	l := &t.log
	l.asked.Store(false)
	switch on := l.keepers.Load() > 0; {
	case on && !l.logging:
		var dir []*chunk[K]
		for c := l.head; c != nil; c = c.next.Load() {
			dir = append(dir, c)
		}
		l.dir.Store(&dir)
		// No change is under way: every change from now on writes a
		// version after the current one, or the current one in place.
		l.from.Store(t.state.Load()>>statusShift + 1)
		l.logging, l.unread = true, 0
		l.read.Store(false)
		l.readers.Add(1)
	case !on && l.logging:
		l.stop()
	}
}

// stop stops logging for Diff. Writer only.
func (l *changeLog[K]) stop() {
	l.from.Store(0) // before dir goes: see differ.viaLog
	l.dir.Store(nil)
	l.logging = false
	l.readers.Add(-1)
}

// append records e, in room that reserve made. Writer only.
func (l *changeLog[K]) append(e Entry[K]) {
	c := l.tail.Load()
	i := c.n.Load()
	c.e[i] = e
	c.n.Store(i + 1)
	l.last.Store(e.Ver)
}

// Cursor reads the change log of a table for one subscriber, and gives it
// the keys that changed between two of its snapshots.
type Cursor[K comparable, V any] struct {
	t *Table[K, V]
	c *chunk[K]
	i int64
	// since is the version after which every Store and Delete has its
	// entry after the cursor's place.
	since uint64
	run   run[K]         // Changes' keys of one version
	lost  map[K]struct{} // Changes' keys deleted before growth
}

// Cursor opens a cursor at the end of the change log, and from then on
// every Store and Delete is recorded until it is closed. Take it before
// the first snapshot it follows. A Store or a Batch already under way when
// the cursor opens may go unrecorded. It writes versions after the current
// one (a Store the next, a Batch one for each slot and the one it
// publishes), and no snapshot is taken of any but the last: the cursor's
// changes from a snapshot before it are therefore found by comparing
// snapshots, and its log is read for the changes from a snapshot of the
// version after the current one or later.
func (t *Table[K, V]) Cursor() *Cursor[K, V] {
	t.ready()
	t.log.readers.Add(1)
	c := &Cursor[K, V]{t: t}
	v := t.state.Load() >> statusShift
	c.moveToTail(v)
	c.since = max(c.since, v+1)
	return c
}

// moveToTail puts the cursor at the end of the log, stepped back over
// the entries of versions after upTo, so that every Store of a version
// after upTo has its entry after the place (since = upTo). Entries come in
// the order of their versions, and one of a version not yet published may
// already be there; when the step back reaches the beginning of a block,
// the log's last version says whether the blocks before hold any such.
func (c *Cursor[K, V]) moveToTail(upTo uint64) {
	l := &c.t.log
	c.c = l.tail.Load()
	c.i = c.c.n.Load()
	v := c.t.state.Load() >> statusShift
	upTo = min(upTo, v)
	for c.i > 0 && c.c.e[c.i-1].Ver > upTo {
		c.i--
	}
	c.since = upTo
	if c.i == 0 && l.last.Load() > upTo {
		// The block before may end with entries after upTo: the
		// place covers only versions no Store had begun, after
		// the next one.
		c.since = v + 1
	}
}

// Close stops the cursor's reading and lets go of the log; once every
// cursor is closed, Stores record nothing. A cursor must be closed once,
// and not read after.
func (c *Cursor[K, V]) Close() {
	if c.t == nil {
		panic("mvcc: Cursor closed twice")
	}
	c.t.log.readers.Add(-1)
	c.t, c.c = nil, nil
}

// read calls fn with each entry after the last one read, up to the first
// of a version newer than upTo, and returns how many it read, and false if
// the writer dropped entries the cursor had not read. Store records an
// entry before a snapshot of its version can be taken, so a cursor read up
// to a snapshot's version has every change the snapshot holds.
func (c *Cursor[K, V]) read(upTo uint64, fn func(Entry[K])) (int, bool) {
	if c.t == nil {
		panic("mvcc: read of a closed Cursor")
	}
	read := 0
	for {
		for c.i < c.c.n.Load() {
			e := &c.c.e[c.i]
			if e.Ver > upTo {
				return read, true
			}
			fn(*e)
			c.i++
			read++
		}
		next := c.c.next.Load()
		if next == nil && c.c.dropped.Load() {
			return read, false
		}
		if c.i < chunkSize || next == nil {
			return read, true
		}
		c.c, c.i = next, 0
	}
}

// Changes calls fn once with each key whose value at to differs from its
// value at from, with its value at to (ok false: the key is not there).
// from is the snapshot the subscriber read before, or an empty Snapshot
// for its first; to is a later one. It reads the log from where the last
// call stopped, and reports a key at the entry that wrote the value to
// holds, so that a key stored many times is reported once, with no set of
// the keys seen. When the writer has dropped entries the cursor did not
// read, or the cursor's entries begin after from, it compares the two
// snapshots slot by slot instead, in O(slots). It returns the number of
// keys it gave.
func (c *Cursor[K, V]) Changes(from, to Snapshot[K, V], fn func(k K, v V, ok bool)) int {
	if c.t == nil {
		panic("mvcc: Changes of a closed Cursor")
	}
	var fromVer uint64
	if from.snapshot != nil {
		fromVer = from.ver
	}
	n := 0
	give := func(k K, v raw, ok bool) {
		var was raw
		var had bool
		if from.snapshot != nil {
			was, had, _ = from.lookup(k)
		}
		if ok != had || ok && v != was {
			fn(k, c.t.fromRaw(v), ok)
			n++
		}
	}
	c.run.reset(0)
	if len(c.lost) > 1024 {
		c.lost = nil
	}
	clear(c.lost)
	// Entries of every version from fromVer+1 up to lastVer, not
	// counting lastVer, have been read.
	lastVer := fromVer + 1
	logged := fromVer >= c.since // the entries after the place reach back to from
	_, whole := c.read(to.ver, func(e Entry[K]) {
		if !logged || e.Ver <= fromVer {
			return
		}
		lastVer = e.Ver
		v, ok, ver := to.lookup(e.Key)
		switch {
		case ver == 0:
			// Not in to's array: deleted before the table grew,
			// which dropped the deleted, and not stored again by
			// to. Given once, whatever its entries.
			if c.lost == nil {
				c.lost = map[K]struct{}{}
			}
			if _, dup := c.lost[e.Key]; !dup {
				c.lost[e.Key] = struct{}{}
				give(e.Key, v, ok)
			}
		case ver == e.Ver && c.run.add(e.Ver, e.Key):
			// The entry that wrote what to holds, the first time:
			// a key stored twice in one version in place has two.
			give(e.Key, v, ok)
		}
	})
	if whole {
		// The place is after every entry up to to: the next call,
		// from to, reads the log.
		c.since = max(c.since, to.ver)
		if logged {
			return n
		}
	} else {
		c.moveToTail(to.ver)
	}
	// The log does not reach back to from, or not all the way to to:
	// compare the snapshots for what it did not give.
	for i := range to.arr.slots {
		sl := &to.arr.slots[i]
		w := sl.word.Load()
		if w == 0 {
			continue
		}
		v, ok, _, ver := to.t.heldAt(to.arr, sl, w, to.ver)
		if k := key[K](sl, w); !(ver <= fromVer || ver < lastVer || ver == lastVer && c.run.has(ver, k)) {
			give(k, v, ok) // not unchanged, nor given from the log
		}
	}
	if from.snapshot != nil && from.arr != to.arr {
		// The table grew between the two, and dropped the deleted keys
		// from the new array: look for from's keys that to's lacks.
		from.All(func(k K, _ V) bool {
			if v, ok, ver := to.lookup(k); ver == 0 {
				if _, given := c.lost[k]; !given {
					give(k, v, ok)
				}
			}
			return true
		})
	}
	// The walk above read to's older values through its array alone:
	// to, and from, stay held until it is done.
	runtime.KeepAlive(to.snapshot)
	runtime.KeepAlive(from.snapshot)
	return n
}

// run is the keys given at one version, so that a key stored more than
// once in one version in place is given once. Most versions hold one
// Store; a long run, from Stores no snapshot came between, goes into a
// set.
type run[K comparable] struct {
	ver  uint64
	keys []K
	set  map[K]struct{}
}

func (r *run[K]) reset(ver uint64) {
	r.ver, r.keys = ver, r.keys[:0]
	if len(r.set) > 1024 {
		r.set = nil
	}
	clear(r.set)
}

// add adds k to the run of version ver, beginning it if it is another
// version's, and reports whether k was not in it.
func (r *run[K]) add(ver uint64, k K) bool {
	if ver != r.ver {
		r.reset(ver)
	}
	if r.has(ver, k) {
		return false
	}
	if len(r.keys) < 16 {
		r.keys = append(r.keys, k)
		return true
	}
	if r.set == nil {
		r.set = map[K]struct{}{}
	}
	r.set[k] = struct{}{}
	return true
}

// has reports whether k is in the run of version ver.
func (r *run[K]) has(ver uint64, k K) bool {
	if ver != r.ver {
		return false
	}
	for _, x := range r.keys {
		if x == k {
			return true
		}
	}
	_, ok := r.set[k]
	return ok
}
