package watchable

import (
	"context"
	"slices"
	"unsafe"

	"github.com/switchyard-go/switchyard/internal/mvcc"
	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// Subscribe returns a channel of snapshots of the whole map.
//
// The channel holds a snapshot of the current contents as soon as Subscribe
// returns (even when the map is empty), and becomes readable again whenever
// the map has changed since the subscriber's previous read. Changes never
// queue up: everything that happened since the previous read arrives as one
// Snapshot, the newest, whose Updates are the net change per key; when the
// net change is empty (a key that appeared and vanished again), nothing is
// delivered, except when the map has just become initialized (see
// Snapshot.Initialized). A subscriber that does not read never blocks writers: each
// write merges into its pending snapshot in O(1), and it holds at most one
// pending entry per changed key.
//
// The channel is closed when ctx is done or the map is closed; a snapshot
// that was pending then is still read before the close. Subscribing to a
// closed map, or with a done ctx, returns a closed channel. No goroutine is
// started, and nothing needs closing by hand: cancel ctx to unsubscribe.
//
// Subscribe may be called from any goroutine. It lists every entry for the
// first snapshot, so it costs O(N) in the number of entries; so does, once,
// the first write while that first snapshot is still unread.
func (m *Map[K, V]) Subscribe(ctx context.Context) <-chan Snapshot[K, V] {
	return m.subscribe(ctx, nil)
}

// SubscribeSubset is like Subscribe, but the subscriber sees only the entries
// for which include returns true: State holds only those, an entry that
// starts matching arrives as a store and one that stops matching as a
// delete, and changes to entries that match neither before nor after deliver
// nothing. A nil include selects every entry, as Subscribe does.
//
// include is called by writers, under the map's write lock, once per changed
// entry; it must be fast, must not call the Map's methods, and must not
// mutate the value. It is called before the write takes effect: if it
// panics, the panic reaches the writer and the write is not applied, so the
// map and every subscriber stay as they were.
func (m *Map[K, V]) SubscribeSubset(ctx context.Context, include func(K, V) bool) <-chan Snapshot[K, V] {
	return m.subscribe(ctx, include)
}

// matching returns a trie of the current entries for which include
// returns true, scanning the whole map. m.mu is held.
func (m *Map[K, V]) matching(include func(K, V) bool) hamt.Map[K, V] {
	txn := hamt.Map[K, V]{}.Txn()
	for k, v := range m.tab.Range {
		if include(k, v) {
			txn.Set(k, v)
		}
	}
	return txn.Commit()
}

func (m *Map[K, V]) subscribe(ctx context.Context, include func(K, V) bool) <-chan Snapshot[K, V] {
	ch := make(chan Snapshot[K, V], 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || ctx.Err() != nil {
		close(ch)
		return ch
	}
	s := &subscription[K, V]{m: m, ch: ch, include: include, filtered: include != nil, pos: len(m.subs)}
	if include != nil {
		s.view = m.matching(include)
	}
	s.start(m.tab.Stamp())
	m.subs = append(m.subs, s)
	s.stop = context.AfterFunc(ctx, s.cancel)
	return ch
}

// start puts the subscription's first snapshot in its channel: every entry
// of its view, at revision rev. m.mu is held.
func (s *subscription[K, V]) start(rev uint64) {
	st := s.state(rev)
	s.updates = make([]Update[K, V], 0, st.Len())
	for k, v := range st.All() {
		s.updates = append(s.updates, Update[K, V]{Key: k, Value: v})
	}
	s.ch <- Snapshot[K, V]{State: st, Updates: s.updates, Revision: rev, Initialized: !s.m.uninitialized}
	s.sent = true
	s.first = true
}

// state returns the State of the snapshot the subscription delivers at
// rev: its view, or the map's current version, sealed. m.mu is held.
func (s *subscription[K, V]) state(rev uint64) State[K, V] {
	if s.filtered {
		return State[K, V]{view: s.view, rev: rev}
	}
	s.sealed = s.m.tab.Seal()
	return State[K, V]{snap: s.sealed, rev: rev}
}

// subscription is one subscriber's channel and its pending window: the net
// changes since the last snapshot the subscriber took. All fields are guarded
// by m.mu.
//
// The channel has room for one snapshot. A writer that finds the previous
// snapshot still unread takes it back out of the channel, merges the new
// changes into its Updates and puts the merged snapshot back, so the reader
// always finds at most one, the newest. Taking it back is what makes the
// window's Updates slice the writer's again; once the reader has it, the
// writer never touches it again, and the next window starts after it in
// the same chunk (see chunked).
type subscription[K comparable, V any] struct {
	// The fields a write to a keyed subscription's key uses come first, so
	// that with thousands of subscriptions, whose structs are cold, a write
	// meets two cache lines of this one rather than four.
	ch chan Snapshot[K, V]

	// filtered reports that the subscriber sees only some entries (a
	// subset, keys or a partition): its State is view, its own trie, kept up
	// to date by record. The others see the map's version, sealed (see
	// mvcc.Table.Seal) while a snapshot of it is in the channel.
	filtered bool
	sent     bool // a snapshot was put in ch and may still be there
	// first reports that the snapshot in ch is the subscription's first,
	// unread: it is delivered even if writes since leave it no net change,
	// because a reader counts on finding it. always reports the same of a
	// snapshot that announced the map's initialization.
	first   bool
	always  bool
	opened  bool // record has prepared the window in this write
	indexed bool // befores (and index, if needed) are made: see befores
	closed  bool

	view hamt.Map[K, V]
	// viewOwn lets record change in place the view's nodes it made since
	// the subscriber last took a snapshot (see hamt.Owner): no snapshot
	// the subscriber has, nor one in the channel, holds them. Zero until
	// the window's first change to the view; open forgets it when it finds
	// the previous snapshot taken, and so does sharing the view.
	viewOwn hamt.Owner
	updates []Update[K, V]
	// befores, parallel to updates, remembers what the subscriber saw of
	// each pending key before the window; index locates the pending keys in
	// updates once there are more than smallWindow of them. Both are made
	// lazily: a subscriber that reads every snapshot before the next write
	// never needs them for the first snapshot's (possibly large) list.
	befores []before[V]
	index   pendingIndex
	// last is how many keys the previous window held, up to
	// maxReusedIndex (0 after the first snapshot): see grown.
	last int

	m       *Map[K, V]
	sealed  mvcc.Snapshot[K, V]
	include func(K, V) bool // nil: the whole map, or routed (filtered)
	stop    func() bool     // stops the context.AfterFunc
	pos     int             // index in m.subs, or in the router's list
	// detach removes a routed subscription from its router's index; nil
	// for those in m.subs.
	detach func()
}

// maxReusedIndex bounds the window size a subscription sizes its next
// window's updates for (see grown and chunked), the rest of a chunk it
// starts the next window in, and the index table (in slots) it clears and
// reuses as it is; a larger table is set aside (see pendingIndex.reset).
const maxReusedIndex = 1024

// maxKeptWindow bounds the befores (in entries; the index at twice that in
// slots) a subscription clears and keeps for its next window rather than
// dropping; maxKeptBefores bounds the befores in bytes too, for large
// values. A subscriber that lags now and then, a window of thousands of
// keys among windows of a few, would otherwise make both again, doubling
// its way up, at every lag. What is kept is no more than an earlier window
// needed, and such a window held fewer keys than the map; a window past
// these bounds (typically the first snapshot, which lists every entry) is
// not kept.
const (
	maxKeptWindow  = 8192
	maxKeptBefores = 256 << 10
)

// keptBefores reports whether the befores b of the last window are kept
// for the next.
func keptBefores[V any](b []before[V]) bool {
	n := cap(b)
	return n <= maxReusedIndex || n <= maxKeptWindow && n*int(unsafe.Sizeof(before[V]{})) <= maxKeptBefores
}

// smallWindow is the most pending keys a window finds by scanning its
// updates; past it, it builds an index. Most windows hold a key or two (a
// subscriber that keeps up, a keyed subscription), and a scan of a few
// keys costs less than an index, in time and in memory touched.
const smallWindow = 8

// before is what the subscriber saw of a pending key in its previous
// snapshot.
type before[V any] struct {
	val  V
	had  bool
	hash uint64 // hamt.Hash of the key; 0 if not computed yet
}

// open makes the window ready for changes: it reclaims an unread snapshot,
// or starts a new window when the subscriber has read the last one.
func (s *subscription[K, V]) open() {
	if s.opened {
		return
	}
	s.opened = true
	if s.sent {
		s.sent = false
		select {
		case <-s.ch: // unread: keep merging into its updates
			// Nobody saw that snapshot's State, so a write may change
			// the version it holds in place again.
			if !s.filtered {
				s.m.tab.Unseal(s.sealed)
				s.sealed = mvcc.Snapshot[K, V]{}
			}
		default: // read: the reader owns those updates now
			// And that snapshot's State: the view's nodes are frozen.
			// The map's version is the reader's to hold or let go.
			s.viewOwn = 0
			s.sealed = mvcc.Snapshot[K, V]{}
			if s.first {
				s.last = 0 // it listed every entry: no guide to the next
			} else {
				// A peak that decays: a subscriber whose windows
				// alternate between a key and hundreds (one that is
				// scheduled in bursts) sizes for the hundreds.
				s.last = min(max(len(s.updates), s.last-s.last/4), maxReusedIndex)
			}
			s.first = false
			s.always = false
			// The next window starts in the rest of the chunk the last
			// one used (see chunked): the reader's slice ends where this
			// one begins. The rest of a large window's chunk (the first
			// snapshot's, grown by a write) is not kept for the next.
			if rest := s.updates[len(s.updates):]; cap(rest) <= 2*maxReusedIndex {
				s.updates = rest
			} else {
				s.updates = nil
			}
			s.indexed = true
			// An index or a befores slice that once held a very large
			// window (typically the whole first snapshot) is dropped
			// rather than kept that large for the life of the
			// subscription; the others are kept (see maxKeptWindow).
			s.index.reset()
			if keptBefores(s.befores) {
				clear(s.befores)
				s.befores = s.befores[:0]
			} else {
				s.befores = nil
			}
		}
	}
	if !s.indexed {
		// The first snapshot: nothing before any of its keys.
		s.befores = make([]before[V], len(s.updates))
		if len(s.updates) > smallWindow {
			s.buildIndex()
		}
		s.indexed = true
	}
}

// grown returns s with room for one more element. A full slice grows by
// doubling, except that once it holds a quarter of hint (the size the
// previous window reached) it gets room for all of hint at once: a
// subscriber that reads every so many writes then allocates a window about
// once, while one whose windows vary, a key now and hundreds later, does
// not pay for hundreds when a key comes alone. (append would grow a large
// slice by a quarter at a time, allocating a window of thousands of keys
// about five times over.)
func grown[T any](s []T, hint int) []T {
	if len(s) < cap(s) {
		return s
	}
	n := max(len(s), 1)
	if 4*len(s) >= hint {
		n = max(n, hint-len(s))
	}
	return slices.Grow(s, n)
}

// chunkBytes is the least memory a subscription's new chunk of updates
// takes, unless one update is larger.
const chunkBytes = 1024

// chunked returns a window's updates with room for one more. The windows of
// a subscription follow one another in a chunk: the reader gets its window
// with no spare capacity (so appending to it copies), and the next window
// starts after it. A window that fills its chunk moves to a new one, of
// twice its length, twice hint (see grown), or chunkBytes, whichever is
// largest: a subscriber that reads every write allocates once per 32
// writes of string keys and pointer values rather than once per write, and
// one that reads every hundred allocates about once per window, not the
// seven times doubling from one would. A snapshot the reader keeps keeps
// its chunk, at most twice the largest recent window or chunkBytes.
func chunked[T any](s []T, hint int) []T {
	if len(s) < cap(s) {
		return s
	}
	var zero T
	least := chunkBytes / max(int(unsafe.Sizeof(zero)), 1)
	out := make([]T, len(s), max(least, 2*len(s), 2*hint, 1))
	copy(out, s)
	return out
}

// buildIndex indexes the window's keys by position.
func (s *subscription[K, V]) buildIndex() {
	for i := range s.updates {
		s.index.add(s.hashAt(i), i)
	}
}

// hashAt returns the hash of the window's i-th pending key.
func (s *subscription[K, V]) hashAt(i int) uint64 {
	b := &s.befores[i]
	if b.hash == 0 { // a key of the first snapshot
		b.hash = hamt.Hash(s.updates[i].Key)
	}
	return b.hash
}

// find returns the position of key, whose hash is h, in the window, if it
// is pending; when the index is in use, also its slot there, or the empty
// slot where it goes.
func (s *subscription[K, V]) find(key K, h uint64) (pos, slot int, ok bool) {
	if s.index.n > 0 {
		return lookup(&s.index, s.updates, key, h)
	}
	for i := range s.updates {
		if s.updates[i].Key == key {
			return i, 0, true
		}
	}
	return 0, 0, false
}

// record merges one change into the window. hasAfter reports whether the
// subscriber sees the key after the change: for a subset subscription,
// whether the new value is included.
func (s *subscription[K, V]) record(c *change[K, V], hasAfter bool) {
	prev, hadPrev, after := c.old, c.hadOld, c.new
	if s.filtered {
		prev, hadPrev = s.view.GetHashed(c.key, c.hash)
		if !hadPrev && !hasAfter {
			return
		}
		var own hamt.Owner
		if !c.silent || hadPrev != hasAfter {
			// Something to tell: open the window first, which takes back
			// an unread snapshot. Then no snapshot in the channel or in the
			// subscriber's hands holds the nodes this window made, and the
			// view changes in place; a keyed subscriber's Store allocates
			// nothing. (A silent change leaves the window, and any snapshot
			// in the channel, alone: it copies.)
			s.open()
			if s.viewOwn == 0 {
				s.viewOwn = hamt.NewOwner()
			}
			own = s.viewOwn
		}
		if hasAfter {
			s.view = s.view.SetOwned(own, c.key, after, c.hash)
		} else {
			s.view, _ = s.view.DeleteOwned(own, c.key, c.hash)
		}
	}
	if c.silent && hadPrev == hasAfter {
		// An equal value replaced the one the subscriber knows: its next
		// State holds the new value, but there is nothing to tell.
		return
	}
	s.open()
	pos, slot, ok := s.find(c.key, c.hash)
	if !ok {
		// Untouched since the previous snapshot, so the subscriber saw the
		// value from just before this change.
		pos = len(s.updates)
		s.updates = append(chunked(s.updates, s.last), Update[K, V]{Key: c.key})
		s.befores = append(grown(s.befores, s.last), before[V]{val: prev, had: hadPrev, hash: c.hash})
		switch {
		case s.index.n > 0:
			s.index.insert(slot, c.hash, pos)
		case len(s.updates) > smallWindow:
			s.buildIndex()
		}
	}
	// befores is read only for a delete: a pending key written again (a
	// subscriber that lags, a keyed subscriber that does not read) leaves
	// its cache line alone, one miss fewer a write with thousands of
	// subscriptions, whose windows are cold.
	switch {
	case hasAfter:
		s.updates[pos] = Update[K, V]{Key: c.key, Value: after}
	case s.befores[pos].had:
		s.updates[pos] = Update[K, V]{Key: c.key, Delete: true, Value: s.befores[pos].val}
	default: // appeared and vanished within the window: no net change
		s.forget(pos)
	}
}

// forget removes the pending key at pos from the window, moving the last
// one into its place.
func (s *subscription[K, V]) forget(pos int) {
	last := len(s.updates) - 1
	if s.index.n > 0 {
		_, slot, _ := lookup(&s.index, s.updates, s.updates[pos].Key, s.hashAt(pos))
		s.index.remove(slot)
		if pos != last {
			_, slot, _ = lookup(&s.index, s.updates, s.updates[last].Key, s.hashAt(last))
			s.index.setPos(slot, pos)
		}
	}
	if pos != last {
		s.updates[pos] = s.updates[last]
		s.befores[pos] = s.befores[last]
	}
	s.updates[last] = Update[K, V]{}
	s.befores[last] = before[V]{}
	s.updates = s.updates[:last]
	s.befores = s.befores[:last]
	if s.index.n > 0 && len(s.updates) <= smallWindow {
		s.index.reset() // back to scanning
	}
}

// flush delivers the window at revision rev, if this write touched it and it
// is not empty. With always, it delivers a snapshot even when nothing
// changed for this subscriber, as it must when the map becomes initialized.
func (s *subscription[K, V]) flush(rev uint64, always bool) {
	if always {
		s.open()
		s.always = true
	}
	if !s.opened {
		return
	}
	s.opened = false
	if len(s.updates) == 0 && !s.first && !s.always {
		return
	}
	var updates []Update[K, V] // none: nil, holding no chunk alive
	if n := len(s.updates); n > 0 {
		updates = s.updates[:n:n]
	}
	s.ch <- Snapshot[K, V]{State: s.state(rev), Updates: updates, Revision: rev, Initialized: !s.m.uninitialized}
	s.sent = true
}

// cancel ends the subscription when its context is done.
func (s *subscription[K, V]) cancel() {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.closed {
		return
	}
	if s.detach != nil {
		s.detach()
		s.close()
		return
	}
	last := len(m.subs) - 1
	m.subs[s.pos] = m.subs[last]
	m.subs[s.pos].pos = s.pos
	m.subs[last] = nil
	m.subs = m.subs[:last]
	s.close()
}

// close closes the channel; an unread snapshot stays readable before the
// close is seen. m.mu is held.
func (s *subscription[K, V]) close() {
	s.closed = true
	s.stop()
	close(s.ch)
}
