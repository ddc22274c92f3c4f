package message

import (
	"context"

	"github.com/switchyard-go/switchyard/watchable"
)

// HandleLazily is HandleSubscription for a reader of src (Map.View gives a
// Map's) that claims its changes when it is ready, rather than having them
// merged into a subscription for it at every write (see
// watchable.State.UpdatesSince): however far behind it falls, writers pay
// such a reader only a signal, what the State it holds costs and, while it
// reads, an entry a write in the map's log of changed keys, and the loop
// pays for the difference when it reads, in proportion to the writes since
// its last read when they are few, to the size of the map otherwise.
//
// handle is called once per entry of the initial contents, then, each time
// the map has changed since the loop last read it, once per key whose value
// differs (up to watchable.DeepEqual) from the one handled last, in no
// particular order. A key that changed and changed back in between is not
// handled. Errors and panics are treated as in HandleSubscription.
//
// HandleLazily blocks until ctx is done, which stops it before the next
// update. The map never ends the loop: after the map is closed it simply
// sees no more changes.
func HandleLazily[K comparable, V any](ctx context.Context, loop Loop, src watchable.View[K, V], handle func(ctx context.Context, u watchable.Update[K, V]) error, opts ...Option) {
	changed := make(chan struct{}, 1)
	src.Notify(ctx, changed) // before the first State: no write is missed
	handleLazily(ctx, loop, src.State, changed, watchable.State[K, V].UpdatesSince, handle, opts)
}

// HandleKeysLazily is HandleLazily restricted to keys, for fan-out to many
// loops each following a few keys (a node's handler on its node): it
// follows src with watchable.Map.NotifyKeys and
// watchable.State.KeyUpdatesSince, so that a write costs O(1) for the
// loops it does not concern however many there are, and a read costs the
// loop O(k log N) for its k keys.
//
// handle is called once per key of keys present initially, then, each time
// one of keys has changed since the loop last read it, once per such key
// whose value differs from the one handled last (a delete carries that
// value), in the order of keys. Errors, panics, ctx and the map's closing
// are treated as in HandleLazily.
func HandleKeysLazily[K comparable, V any](ctx context.Context, loop Loop, src watchable.View[K, V], keys []K, handle func(ctx context.Context, u watchable.Update[K, V]) error, opts ...Option) {
	keys = append([]K(nil), keys...) // the caller may reuse its slice
	changed := make(chan struct{}, 1)
	src.NotifyKeys(ctx, changed, keys...) // before the first State
	since := func(cur, last watchable.State[K, V]) []watchable.Update[K, V] {
		return cur.KeyUpdatesSince(last, keys...)
	}
	handleLazily(ctx, loop, src.State, changed, since, handle, opts)
}

// HandlePartitionLazily is HandleLazily for one partition of an index
// (watchable.PartitionBy), for a per-node fan-out of many loops each
// following its node's partition: it follows it with
// watchable.Partitions.Notify and watchable.Partitions.State, so that a
// write costs O(1) for the loops it does not concern however many there
// are. A read costs the loop O(k log N) to take the partition's State, for
// its k entries, and O(k) to compare it with the last; while the partition
// also has a Subscribe subscriber, the State is that subscriber's, taken
// in O(1), and the comparison skips what did not change. The first read of
// a partition with entries indexes every partition's keys, calling the
// partition function once per entry of the map (see
// watchable.Partitions.Subscribe).
//
// handle is called once per entry of the partition initially, then, each
// time the partition has changed since the loop last read it, once per key
// whose value in it differs from the one handled last, in no particular
// order: an entry that entered the partition comes as a store, and one
// that left it (deleted, or moved to another partition) as a delete
// carrying the value handled last. Errors, panics and ctx are treated as in
// HandleLazily. After the index or its map closes the loop sees no more
// changes; it still ends with ctx.
func HandlePartitionLazily[K comparable, V any, P comparable](ctx context.Context, loop Loop, parts *watchable.Partitions[K, V, P], part P, handle func(ctx context.Context, u watchable.Update[K, V]) error, opts ...Option) {
	changed := make(chan struct{}, 1)
	parts.Notify(ctx, part, changed) // before the first State
	state := func() watchable.State[K, V] { return parts.State(part) }
	handleLazily(ctx, loop, state, changed, watchable.State[K, V].UpdatesSince, handle, opts)
}

// handleLazily is the loop of the lazy handlers: on each signal on changed
// it takes a State from state and handles since(it, the State it took
// last).
func handleLazily[K comparable, V any](ctx context.Context, loop Loop, state func() watchable.State[K, V], changed <-chan struct{}, since func(cur, last watchable.State[K, V]) []watchable.Update[K, V], handle func(ctx context.Context, u watchable.Update[K, V]) error, opts []Option) {
	h := newHandler(ctx, loop, opts)
	var last watchable.State[K, V]
	for ctx.Err() == nil {
		cur := state()
		updates := since(cur, last)
		last = cur
		if len(updates) > 0 {
			h.delivered(len(updates))
		}
		handled := 0
		for _, u := range updates {
			if ctx.Err() != nil {
				break
			}
			if p, err := call(ctx, h, handle, u); p != nil || err != nil {
				h.failed(p, err, "key", u.Key, "delete", u.Delete, "revision", cur.Revision())
			}
			handled++
		}
		h.handled(handled)
		select {
		case <-ctx.Done():
		case <-changed:
		}
	}
}
