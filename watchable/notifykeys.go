package watchable

import "context"

// NotifyKeys is Notify restricted to keys: it arranges for a send on ch
// after every effective write that changes one of keys (a store of a
// different value, or a delete), and when the map becomes initialized,
// until ctx is done or the map is closed. Like Notify, it never blocks
// sending to ch, and the map never closes ch. A key listed twice counts
// once; no keys at all make a registration that only the initialization
// signals.
//
// NotifyKeys is the lazy counterpart of SubscribeKeys, for fan-out to many
// readers each following a few keys (a node's handler on its node): a
// write costs O(1) for the registrations it does not concern, however many
// there are, and for each one it concerns a single attempted send, with no
// pending snapshot to merge into. The reader pays when it reads: it takes
// the map's State and asks it for State.KeyUpdatesSince the State it took
// last, in O(k log N) for its k keys (message.HandleKeysLazily runs that
// loop), or simply Loads its key. Register before taking the first State,
// so that no write in between is missed.
//
// NotifyKeys panics if ch is nil, as signal.Notify does.
func (m *Map[K, V]) NotifyKeys(ctx context.Context, ch chan<- struct{}, keys ...K) {
	if ch == nil {
		panic("watchable: NotifyKeys with a nil channel")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || ctx.Err() != nil {
		return
	}
	if m.keyNotes == nil {
		x := &keyNotifiers[K]{}
		r := &router[K, V]{
			prepare:     func([]change[K, V]) {},
			moves:       func([]change[K, V]) bool { return false },
			tell:        func(changes []change[K, V], _ uint64) { tellKeyNotifiers(x, changes) },
			flushAll:    func(uint64) { x.signalAll() },
			active:      func() bool { return len(x.all) > 0 },
			subscribers: func() int { return 0 },
			notifiers:   func() int { return len(x.all) },
			closeAll:    x.closeAll,
		}
		// The index leaves the map with its last registration (see
		// SubscribeKeys).
		x.empty = func() {
			m.keyNotes = nil
			m.dropRouter(r)
		}
		m.keyNotes = x
		m.routers = append(m.routers, r)
	}
	r := &keyNotifier[K]{ch: ch, keys: distinct(keys)}
	x := m.keyNotes
	x.add(r)
	r.stop = context.AfterFunc(ctx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if r.pos < 0 {
			return // removed by Close
		}
		x.remove(r)
	})
}

// NotifyKeys signals ch after every effective write to one of keys; see
// Map.NotifyKeys.
func (v View[K, V]) NotifyKeys(ctx context.Context, ch chan<- struct{}, keys ...K) {
	v.mp().NotifyKeys(ctx, ch, keys...)
}

// keyNotifiers is the router of NotifyKeys: for each key, the channels of
// the registrations that follow it (see keyReaders). Guarded by m.mu.
type keyNotifiers[K comparable] struct {
	readers keyReaders[K, chan<- struct{}]
	all     []*keyNotifier[K] // each once; r.pos is its index here
	// empty is called when the last registration leaves; nil for a
	// partition's, which stay with their Partitions.
	empty func()
}

// keyNotifier is one NotifyKeys registration.
type keyNotifier[K comparable] struct {
	ch   chan<- struct{}
	keys []K
	stop func() bool
	pos  int // index in keyNotifiers.all, or -1 once removed
}

func (x *keyNotifiers[K]) add(r *keyNotifier[K]) {
	x.readers.add(r.ch, r.keys)
	r.pos = len(x.all)
	x.all = append(x.all, r)
}

// remove drops r: one occurrence of its channel from each of its keys, since
// two registrations of one channel on one key signal alike.
func (x *keyNotifiers[K]) remove(r *keyNotifier[K]) {
	x.readers.remove(r.ch, r.keys)
	x.all = cut(x.all, r.pos)
	if r.pos < len(x.all) {
		x.all[r.pos].pos = r.pos
	}
	r.pos = -1
	if len(x.all) == 0 && x.empty != nil {
		x.empty()
	}
}

// tellKeyNotifiers signals the channels of the keys that changes change.
// A silent change (an equal value stored) signals nobody, even in a write
// that is effective for other reasons.
func tellKeyNotifiers[K comparable, V any](x *keyNotifiers[K], changes []change[K, V]) {
	for i := range changes {
		c := &changes[i]
		if !c.silent {
			x.signal(c.key, c.hash)
		}
	}
}

// signal signals the channels that follow k, whose hash is h, if any.
func (x *keyNotifiers[K]) signal(k K, h uint64) {
	ch, more, ok := x.readers.of(k, h)
	if !ok {
		return
	}
	send(ch)
	for _, ch := range more {
		send(ch)
	}
}

func (x *keyNotifiers[K]) signalAll() {
	for _, r := range x.all {
		send(r.ch)
	}
}

func (x *keyNotifiers[K]) closeAll() {
	for _, r := range x.all {
		r.stop()
		r.pos = -1
	}
	x.all = nil
	x.readers = keyReaders[K, chan<- struct{}]{}
}
