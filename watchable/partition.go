package watchable

import (
	"context"
	"strings"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// Partitions indexes a map's entries by partition, the value a partition
// function gives each entry, so that each partition can be subscribed to on
// its own: the per-node fan-out where one shared map feeds one subscriber
// per node, each seeing only its node's entries.
//
// Writers call the partition function twice per changed entry (with the old
// value and with the new one) and deliver the change to the subscribers of
// those partitions only, so a write costs the same with ten partition
// subscribers as with ten thousand. A partition can also be followed
// lazily, as Map.NotifyKeys follows keys: Notify signals a reader when its
// partition changes, and the reader claims the net change from State when
// it is ready (message.HandlePartitionLazily runs that loop). Sizes lists
// the partitions that have entries, for a fan-out that starts a handler per
// partition and stops it when its partition empties.
//
// All methods are safe for concurrent use. A Partitions lives until the ctx
// given to PartitionBy is done or its map is closed; then its subscriptions
// close, its Notify registrations end, and so do the subscriptions of Sizes.
type Partitions[K comparable, V any, P comparable] struct {
	m    *Map[K, V]
	part func(K, V) P

	// Guarded by m.mu:
	// readers holds each partition's subscriptions (see keyReaders): a
	// write finds a partition's first one in a single slot of a table,
	// where a Go map of lists read a control word, a slot and the list.
	readers keyReaders[P, *subscription[K, V]]
	all     []*subscription[K, V] // each once; s.pos is its index here
	count   map[P]int
	// members holds each partition's keys, from the first Subscribe to a
	// partition with entries on (nil before): later first snapshots look
	// their keys up instead of scanning the map.
	members map[P]map[K]struct{}
	notes   keyNotifiers[P]       // Notify's registrations, by partition
	routes  []route[P]            // prepare's result, per change
	touched []*subscription[K, V] // tell's scratch space
	closed  bool

	sizes Map[P, int] // written only under m.mu
}

// route is where one change takes its entry: from partition from (if it
// had one) to partition to (if it still has one).
type route[P comparable] struct {
	from, to P
	had, has bool
}

// PartitionBy returns an index of v's entries by part(key, value). part is
// called by writers, under the map's write lock, twice per changed entry; it
// must be fast, must not call the map's methods, must not mutate the value,
// and must give the same partition for the same key and value every time.
// It is called before a write takes effect: if it panics, the panic reaches
// the writer and the write is not applied. PartitionBy itself calls part
// once per entry, to count the partitions' sizes.
//
// The index costs every write of the map those two calls, whether or not
// anyone subscribes, until ctx is done.
func PartitionBy[K comparable, V any, P comparable](ctx context.Context, v View[K, V], part func(K, V) P) *Partitions[K, V, P] {
	m := v.mp()
	p := &Partitions[K, V, P]{m: m, part: part, count: map[P]int{}}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || ctx.Err() != nil {
		p.closed = true
		p.sizes.Close()
		return p
	}
	for k, val := range m.tab.Range {
		p.count[part(k, val)]++
	}
	p.sizes.Replace(p.count)
	p.followInitialization(ctx)
	r := &router[K, V]{
		prepare:     p.prepare,
		moves:       p.moves,
		tell:        p.tell,
		flushAll:    p.flushAll,
		active:      func() bool { return true }, // Sizes must stay right
		subscribers: func() int { return len(p.all) },
		notifiers:   func() int { return len(p.notes.all) },
		closeAll:    p.closeAll,
	}
	m.routers = append(m.routers, r)
	context.AfterFunc(ctx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if p.closed {
			return // the map was closed first
		}
		m.dropRouter(r)
		p.closeAll()
	})
	return p
}

// Subscribe returns a channel of snapshots of partition part: like
// Map.Subscribe, with State holding only the entries in part, an entry that
// moves into part (a new entry, or a changed value) arriving as a store, and
// one that leaves it (deleted, or moved to another partition) as a delete
// carrying the last value the subscriber saw. Subscribing to a partition
// that has no entries yet is fine: its first snapshot is empty.
//
// The first Subscribe to a partition with entries calls the partition
// function once per entry of the map, to index every partition's keys;
// from then on a partition's first snapshot costs O(k log N) for its k
// entries, and the index costs writes that move an entry between
// partitions (a new entry, a delete, a changed partition) an update of a
// Go map of keys. A partition with no entries, or one that already has a
// subscriber, whose view the new one shares, costs none of this.
// After ctx is done, or the index or the map closes, the channel is closed.
func (p *Partitions[K, V, P]) Subscribe(ctx context.Context, part P) <-chan Snapshot[K, V] {
	m := p.m
	ch := make(chan Snapshot[K, V], 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.closed || m.closed || ctx.Err() != nil {
		close(ch)
		return ch
	}
	s := &subscription[K, V]{m: m, ch: ch, filtered: true}
	if first, _, ok := p.readers.of(part, hamt.Hash(part)); ok {
		s.view = first.view
		// Shared now: neither may change those nodes in place.
		first.viewOwn = 0
	} else {
		s.view = p.build(part)
	}
	s.start(m.tab.Stamp())
	p.readers.add(s, []P{part})
	s.pos = len(p.all)
	p.all = append(p.all, s)
	s.detach = func() { p.remove(part, s) }
	s.stop = context.AfterFunc(ctx, s.cancel)
	return ch
}

// Sizes returns a read-only map from each partition that has entries to
// how many it has. A partition appears in it with its first entry and
// disappears with its last, so a subscriber to it learns when to start and
// stop a handler per partition. It is updated by the writes of the indexed
// map, once per write, after the partitions' subscribers have been told.
// It is initialized once the indexed map is, so that a consumer waiting on
// it never acts on a partial list of partitions.
func (p *Partitions[K, V, P]) Sizes() View[P, int] { return p.sizes.View() }

// followInitialization makes Sizes wait for the indexed map's
// initialization, when that is still pending. m.mu is held: the
// initializer is registered before anyone can see Sizes, and a goroutine,
// which ends with ctx, finishes it, since a map has no hook for becoming
// initialized.
func (p *Partitions[K, V, P]) followInitialization(ctx context.Context) {
	initialized := p.m.Initialized()
	select {
	case <-initialized:
		return
	default:
	}
	done := p.sizes.RegisterInitializer("watchable.PartitionBy: " + strings.Join(p.m.PendingInitializers(), ", "))
	go func() {
		select {
		case <-initialized:
			done()
		case <-ctx.Done():
		}
	}()
}

// indexMembers builds members from the map's contents. m.mu is held.
func (p *Partitions[K, V, P]) indexMembers() {
	p.members = make(map[P]map[K]struct{}, len(p.count))
	for k, v := range p.m.tab.Range {
		part := p.part(k, v)
		keys := p.members[part]
		if keys == nil {
			keys = make(map[K]struct{}, p.count[part])
			p.members[part] = keys
		}
		keys[k] = struct{}{}
	}
}

func (p *Partitions[K, V, P]) remove(part P, s *subscription[K, V]) {
	p.readers.remove(s, []P{part})
	p.all = cut(p.all, s.pos)
	if s.pos < len(p.all) {
		p.all[s.pos].pos = s.pos
	}
}

// tellReaders records c into the subscriptions of part, if it has any.
func (p *Partitions[K, V, P]) tellReaders(part P, c *change[K, V], hasAfter bool) {
	if len(p.all) == 0 {
		return
	}
	s, more, ok := p.readers.of(part, hamt.Hash(part))
	if !ok {
		return
	}
	p.touched = touch(p.touched, s, c, hasAfter)
	for _, s := range more {
		p.touched = touch(p.touched, s, c, hasAfter)
	}
}

func (p *Partitions[K, V, P]) prepare(changes []change[K, V]) {
	p.routes = p.routes[:0]
	for i := range changes {
		c := &changes[i]
		r := route[P]{had: c.hadOld, has: c.hasNew}
		if r.had {
			r.from = p.part(c.key, c.old)
		}
		if r.has {
			r.to = p.part(c.key, c.new)
		}
		p.routes = append(p.routes, r)
	}
}

func (p *Partitions[K, V, P]) moves(changes []change[K, V]) bool {
	for i := range changes {
		if r := p.routes[i]; changes[i].silent && r.had && r.has && r.from != r.to {
			return true
		}
	}
	return false
}

func (p *Partitions[K, V, P]) tell(changes []change[K, V], rev uint64) {
	var sized []P
	for i := range changes {
		c, r := &changes[i], p.routes[i]
		moved := r.had != r.has || (r.had && r.from != r.to)
		if r.had && moved {
			p.tellReaders(r.from, c, false)
			p.signal(r.from)
			p.count[r.from]--
			sized = append(sized, r.from)
			if p.members != nil {
				keys := p.members[r.from]
				delete(keys, c.key)
				if len(keys) == 0 {
					delete(p.members, r.from)
				}
			}
		}
		if r.has {
			p.tellReaders(r.to, c, true)
			if moved || !c.silent {
				p.signal(r.to)
			}
			if moved {
				p.count[r.to]++
				sized = append(sized, r.to)
				if p.members != nil {
					if p.members[r.to] == nil {
						p.members[r.to] = map[K]struct{}{}
					}
					p.members[r.to][c.key] = struct{}{}
				}
			}
		}
	}
	p.touched = flushTouched(p.touched, rev)
	if len(sized) > 0 {
		p.sizes.Batch(func(b *Batch[P, int]) {
			for _, part := range sized {
				if n := p.count[part]; n > 0 {
					b.Store(part, n)
				} else {
					delete(p.count, part)
					b.Delete(part)
				}
			}
		})
	}
}

func (p *Partitions[K, V, P]) flushAll(rev uint64) {
	for _, s := range p.all {
		s.flush(rev, true)
	}
	p.notes.signalAll()
}

func (p *Partitions[K, V, P]) closeAll() {
	p.closed = true
	for _, s := range p.all {
		s.close()
	}
	p.all = nil
	p.readers = keyReaders[P, *subscription[K, V]]{}
	p.notes.closeAll()
	p.members = nil
	p.sizes.Close()
}
