package watchable

import (
	"context"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// Notify is Map.NotifyKeys for a partition: it arranges for a send on ch
// after every effective write that changes the entries of partition part
// (an entry entering it, leaving it, or taking a different value within
// it), and when the indexed map becomes initialized, until ctx is done or
// the index or the map closes. Like Map.Notify, it never blocks sending to
// ch, and ch is never closed. Registering for a partition that has no
// entries yet is fine.
//
// Notify is the lazy counterpart of Subscribe, for a per-node fan-out of
// many handlers that may each fall behind: a write costs O(1) for the
// registrations it does not concern, however many there are, and for each
// one it concerns an attempted send per change to the partition, with no
// pending snapshot to merge into. The reader pays when it reads: it takes State(part) and asks
// it for State.UpdatesSince the one it took last (message.HandlePartitionLazily
// runs that loop). Register before taking the first State, so that no
// write in between is missed.
//
// Notify panics if ch is nil, as signal.Notify does.
func (p *Partitions[K, V, P]) Notify(ctx context.Context, part P, ch chan<- struct{}) {
	if ch == nil {
		panic("watchable: Partitions.Notify with a nil channel")
	}
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.closed || m.closed || ctx.Err() != nil {
		return
	}
	r := &keyNotifier[P]{ch: ch, keys: []P{part}}
	p.notes.add(r)
	r.stop = context.AfterFunc(ctx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if r.pos < 0 {
			return // removed when the index or the map closed
		}
		p.notes.remove(r)
	})
}

// State returns the entries of partition part, all read at one revision of
// the map, as a State of their own: its Revision is the map's, Get and All
// see only part's entries, and State.UpdatesSince between two of them is
// the partition's net change, an entry that left it (deleted, or moved to
// another partition) coming as a delete with the value the older State
// held.
//
// While part has a Subscribe subscriber, State shares that subscriber's
// view: O(1), and two such States share what no write touched in between,
// which UpdatesSince skips. Otherwise State builds the partition's trie
// from its keys, O(k log N) for its k entries, and two such States share
// nothing, so UpdatesSince compares them whole, O(k). The first State or
// Subscribe of a partition with entries indexes every partition's keys,
// calling the partition function once per entry of the map, as Subscribe
// describes. After the index closes it no longer follows writes, and
// State calls the partition function on every entry of the map, O(N).
func (p *Partitions[K, V, P]) State(part P) State[K, V] {
	m := p.m
	m.mu.Lock()
	defer m.mu.Unlock()
	rev := m.tab.Stamp()
	if p.closed {
		in := m.matching(func(k K, v V) bool { return p.part(k, v) == part })
		return State[K, V]{view: in, rev: rev}
	}
	if s, _, ok := p.readers.of(part, hamt.Hash(part)); ok {
		// Shared now: the subscriber may no longer change its nodes in
		// place.
		s.viewOwn = 0
		return State[K, V]{view: s.view, rev: rev}
	}
	return State[K, V]{view: p.build(part), rev: rev}
}

// build returns a trie of part's entries, read from the map's current
// version through the members index. m.mu is held, and the index is open.
func (p *Partitions[K, V, P]) build(part P) hamt.Map[K, V] {
	if p.count[part] == 0 {
		return hamt.Map[K, V]{}
	}
	if p.members == nil {
		p.indexMembers()
	}
	txn := hamt.Map[K, V]{}.Txn()
	for k := range p.members[part] {
		if v, ok := p.m.tab.Load(k); ok {
			txn.Set(k, v)
		}
	}
	return txn.Commit()
}

// signal signals the Notify registrations of part, if it has any.
func (p *Partitions[K, V, P]) signal(part P) {
	if len(p.notes.all) > 0 {
		p.notes.signal(part, hamt.Hash(part))
	}
}
