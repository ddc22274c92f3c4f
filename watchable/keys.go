package watchable

import (
	"context"
	"slices"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// router delivers changes to the subscriptions they concern through an
// index, instead of asking every subscription: SubscribeKeys' key index and
// PartitionBy's partitions. A write costs a router O(1) per change plus the
// work for the subscriptions the change concerns, however many others there
// are. Every function is called with m.mu held.
type router[K comparable, V any] struct {
	// prepare works out where changes go. It may call the user's code, and
	// so panic: it runs before anything changes, and changes nothing.
	prepare func(changes []change[K, V])
	// moves reports whether a silent change (an equal value stored) moves
	// an entry from some subscriptions to others: that makes the write a
	// new revision. It uses what prepare worked out.
	moves func(changes []change[K, V]) bool
	// tell records the changes prepare routed into the subscriptions they
	// concern, and delivers them at revision rev.
	tell func(changes []change[K, V], rev uint64)
	// flushAll delivers a snapshot at rev to every subscription, changed
	// or not (the map became initialized).
	flushAll func(rev uint64)
	// active reports whether writes must keep the router informed.
	active      func() bool
	subscribers func() int
	notifiers   func() int // registrations signalled rather than sent snapshots
	closeAll    func()
}

// SubscribeKeys is like Subscribe, restricted to the given keys: State holds
// those of them that are present, and only changes to them are delivered,
// with the same guarantees as Subscribe (the first snapshot lists their
// current entries, changes coalesce, a delete carries the last value the
// subscriber saw, and the channel closes when ctx is done or the map is
// closed). A key listed twice counts once; no keys at all make a
// subscription that only ever delivers its first, empty, snapshot (and the
// one announcing initialization).
//
// Keyed subscriptions are indexed by key, so a write costs O(1) for the
// keyed subscriptions it does not concern, however many there are: a
// thousand subscribers each on its own key cost a write about what one
// does. (SubscribeSubset asks every subscriber's include function on every
// write.) Subscribing costs O(k log N) for k keys.
func (m *Map[K, V]) SubscribeKeys(ctx context.Context, keys ...K) <-chan Snapshot[K, V] {
	ch := make(chan Snapshot[K, V], 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || ctx.Err() != nil {
		close(ch)
		return ch
	}
	if m.keys == nil {
		x := &keyIndex[K, V]{}
		r := &router[K, V]{
			prepare:     func([]change[K, V]) {},
			moves:       func([]change[K, V]) bool { return false },
			tell:        x.tell,
			flushAll:    x.flushAll,
			active:      func() bool { return len(x.all) > 0 },
			subscribers: func() int { return len(x.all) },
			notifiers:   func() int { return 0 },
			closeAll:    x.closeAll,
		}
		// The index leaves the map with its last subscription, so that a
		// map whose keyed subscribers have all gone writes as one that
		// never had any.
		x.empty = func() {
			m.keys = nil
			m.dropRouter(r)
		}
		m.keys = x
		m.routers = append(m.routers, r)
	}
	s := &subscription[K, V]{m: m, ch: ch, filtered: true}
	own := distinct(keys)
	txn := hamt.Map[K, V]{}.Txn()
	for _, k := range own {
		if v, ok := m.tab.Load(k); ok {
			txn.Set(k, v)
		}
	}
	s.view = txn.Commit()
	s.start(m.tab.Stamp())
	m.keys.add(s, own)
	index := m.keys
	s.detach = func() { index.remove(s, own) }
	s.stop = context.AfterFunc(ctx, s.cancel)
	return ch
}

// keyIndex is the router of SubscribeKeys: for each key, the subscriptions
// to it (see keyReaders).
type keyIndex[K comparable, V any] struct {
	readers keyReaders[K, *subscription[K, V]]
	all     []*subscription[K, V] // each once; s.pos is its index here
	touched []*subscription[K, V] // tell's scratch space
	empty   func()                // called when the last subscription leaves
}

func (x *keyIndex[K, V]) add(s *subscription[K, V], keys []K) {
	x.readers.add(s, keys)
	s.pos = len(x.all)
	x.all = append(x.all, s)
}

func (x *keyIndex[K, V]) remove(s *subscription[K, V], keys []K) {
	x.readers.remove(s, keys)
	x.all = cut(x.all, s.pos)
	if s.pos < len(x.all) {
		x.all[s.pos].pos = s.pos
	}
	if len(x.all) == 0 {
		x.empty()
	}
}

// cut removes s[i] by moving the last element into its place, and clears
// the vacated slot so that it keeps nothing alive. Lists that keep their
// elements' positions must tell the moved one its new index.
func cut[T any](s []T, i int) []T {
	last := len(s) - 1
	s[i] = s[last]
	var zero T
	s[last] = zero
	return s[:last]
}

// distinct returns keys without repeats, in their first order, in a slice
// of its own.
func distinct[K comparable](keys []K) []K {
	out := make([]K, 0, len(keys))
	if len(keys) <= 8 {
		for _, k := range keys {
			if !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		return out
	}
	seen := make(map[K]bool, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func (x *keyIndex[K, V]) tell(changes []change[K, V], rev uint64) {
	for i := range changes {
		c := &changes[i]
		s, more, ok := x.readers.of(c.key, c.hash)
		if !ok {
			continue
		}
		x.touched = touch(x.touched, s, c, c.hasNew)
		for _, s := range more {
			x.touched = touch(x.touched, s, c, c.hasNew)
		}
	}
	x.touched = flushTouched(x.touched, rev)
}

func (x *keyIndex[K, V]) flushAll(rev uint64) {
	for _, s := range x.all {
		s.flush(rev, true)
	}
}

func (x *keyIndex[K, V]) closeAll() {
	for _, s := range x.all {
		s.close()
	}
	x.all = nil
	x.readers = keyReaders[K, *subscription[K, V]]{}
}

// touch records c into s, and adds s to touched the first time a change of
// this write opens its window.
func touch[K comparable, V any](touched []*subscription[K, V], s *subscription[K, V], c *change[K, V], hasAfter bool) []*subscription[K, V] {
	was := s.opened
	s.record(c, hasAfter)
	if !was && s.opened {
		touched = append(touched, s)
	}
	return touched
}

// flushTouched delivers the windows of the subscriptions a write touched,
// and returns the emptied list for reuse.
func flushTouched[K comparable, V any](touched []*subscription[K, V], rev uint64) []*subscription[K, V] {
	for i, s := range touched {
		s.flush(rev, false)
		touched[i] = nil
	}
	return touched[:0]
}

// SubscribeKeys is Map.SubscribeKeys.
func (v View[K, V]) SubscribeKeys(ctx context.Context, keys ...K) <-chan Snapshot[K, V] {
	return v.mp().SubscribeKeys(ctx, keys...)
}
