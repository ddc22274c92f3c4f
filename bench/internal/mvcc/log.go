package mvcc

import "sync/atomic"

// Entry is one Store or Delete as the change log records it: the version
// it wrote, its key, and its value or that it deleted the key.
type Entry[V any] struct {
	Ver uint64
	Key string
	Val V
	Del bool
}

// chunkSize is the number of entries in each block of the log.
const chunkSize = 256

// chunk is a block of the log. The writer fills e in order and publishes
// each entry by counting it in n; readers read e[i] only for i below n.
type chunk[V any] struct {
	n    atomic.Int64
	next atomic.Pointer[chunk[V]]
	e    [chunkSize]Entry[V]
}

// changeLog is the updates that subscribers receive, the part of a library
// built on the table that the trie gets by comparing two versions. The
// table keeps only its tail: a block nobody's cursor has reached any more
// is garbage.
type changeLog[V any] struct {
	tail    atomic.Pointer[chunk[V]]
	readers atomic.Int64 // open cursors; the writer records nothing while there are none
}

// reserve makes room for one more entry: when the tail block is full, it
// links a fresh one. Store calls it before the change it makes, so that a
// snapshot waiting for the change does not wait for an allocation too.
// Writer only.
func (l *changeLog[V]) reserve() {
	if c := l.tail.Load(); c.n.Load() == chunkSize {
		next := new(chunk[V])
		c.next.Store(next)
		l.tail.Store(next)
	}
}

// append records e, in room that reserve made. Writer only.
func (l *changeLog[V]) append(e Entry[V]) {
	c := l.tail.Load()
	i := c.n.Load()
	c.e[i] = e
	c.n.Store(i + 1)
}

// Cursor reads the change log from where it was opened.
type Cursor[V any] struct {
	l *changeLog[V]
	c *chunk[V]
	i int64
}

// Cursor opens a cursor at the end of the change log, and from then on
// every Store is recorded until it is closed. Take it before the snapshot
// it follows: a Store made between the two is then read as an update of
// that snapshot. (A Store already under way when the cursor opens may go
// unrecorded; a library would open its first cursor under the writer's
// lock.)
func (t *Table[V]) Cursor() *Cursor[V] {
	t.log.readers.Add(1)
	c := t.log.tail.Load()
	return &Cursor[V]{l: &t.log, c: c, i: c.n.Load()}
}

// Close stops the cursor's reading and lets go of the log; once every
// cursor is closed, Stores record nothing. A cursor must be closed once,
// and not read after.
func (c *Cursor[V]) Close() {
	if c.l == nil {
		panic("mvcc: Cursor closed twice")
	}
	c.l.readers.Add(-1)
	c.l, c.c = nil, nil
}

// Read calls fn with each entry after the last one read, up to the first
// of a version newer than upTo, and returns how many it read. Store records
// an entry before a snapshot of its version can be taken, so a cursor read
// up to a snapshot's version has every change the snapshot holds.
func (c *Cursor[V]) Read(upTo uint64, fn func(Entry[V])) int {
	if c.l == nil {
		panic("mvcc: Read of a closed Cursor")
	}
	read := 0
	for {
		for c.i < c.c.n.Load() {
			e := &c.c.e[c.i]
			if e.Ver > upTo {
				return read
			}
			fn(*e)
			c.i++
			read++
		}
		next := c.c.next.Load()
		if c.i < chunkSize || next == nil {
			return read
		}
		c.c, c.i = next, 0
	}
}
