package watchable

import (
	"iter"
	"unsafe"

	"github.com/switchyard-go/switchyard/internal/mvcc"
	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// State is an immutable version of a Map's contents. Taking one is O(1) and
// copies nothing; it never changes afterwards, whatever happens to the Map,
// and may be read from any goroutine for as long as the caller likes.
//
// The values it returns are shared with the Map and with every other reader:
// they MUST NOT be mutated. Use DeepCopy, or Map.Load, for a private copy.
//
// The zero State is empty, at revision 0.
type State[K comparable, V any] struct {
	// snap is a version of the map's table (Map.State, Subscribe); a
	// filtered subscriber's State is its own trie, view, instead.
	snap mvcc.Snapshot[K, V]
	view hamt.Map[K, V]
	rev  uint64
}

// table reports whether s is a version of a map's table, not a view.
func (s *State[K, V]) table() bool { return s.snap != (mvcc.Snapshot[K, V]{}) }

// Revision is the map's revision that the State reflects (see
// Map.Revision): taken with the contents, so the two always agree, where
// calling Map.Revision next to Map.State may see a later write.
func (s State[K, V]) Revision() uint64 { return s.rev }

// Get returns the value stored for k, and whether there is one.
// The value is shared and must not be mutated.
func (s State[K, V]) Get(k K) (V, bool) {
	if s.table() {
		return s.snap.Get(k)
	}
	return s.view.Get(k)
}

// Len returns the number of entries.
func (s State[K, V]) Len() int {
	if s.table() {
		return s.snap.Len()
	}
	return s.view.Len()
}

// All iterates over the entries in no particular order.
// The values are shared and must not be mutated.
func (s State[K, V]) All() iter.Seq2[K, V] {
	if s.table() {
		return s.snap.All
	}
	return s.view.All()
}

// Keys iterates over the keys in no particular order.
func (s State[K, V]) Keys() iter.Seq[K] {
	if !s.table() {
		return s.view.Keys()
	}
	return func(yield func(K) bool) {
		for k := range s.snap.All {
			if !yield(k) {
				return
			}
		}
	}
}

// Map returns the entries as a new Go map. The map is the caller's, but the
// values in it are shared and must not be mutated (see Map.LoadAll for deep
// copies).
func (s State[K, V]) Map() map[K]V {
	out := make(map[K]V, s.Len())
	for k, v := range s.All() {
		out[k] = v
	}
	return out
}

// UpdatesSince returns the net change per key from old to s: a store for
// every key that s holds and old did not, or held with a different value,
// and a delete, with old's value, for every key that old held and s does
// not. Values are compared with DeepEqual, and a value identical bit for
// bit counts as unchanged. Applying the updates to old gives s, up to
// DeepEqual. They come in no particular order, and the slice is the
// caller's.
//
// Since the zero State, it lists every entry of s, like a subscription's
// first snapshot.
//
// For two States of the same Map, UpdatesSince reads each entry's version
// and compares only the entries written between them: it costs O(N) reads
// of the map's slots, with no allocation beyond the result, and O(changes)
// comparisons. While a Map.Notify registration lasts, that first read
// makes the map log the keys each write changes from then on, and
// UpdatesSince between two States taken since reads those instead, in
// O(writes between them), when there are fewer than about N/100 of them
// (at 100,000 entries and 100 writes, 35–50 µs rather than 0.8 ms); each
// write then costs its writer an entry in the log (about 25 ns), until a
// whole log's worth of writes (a quarter of the keys) goes by with no
// UpdatesSince reading it. A subscriber's States (SubscribeSubset, SubscribeKeys,
// partitions) are its own, and between two of them it costs O(changed keys
// × log N). Other pairs are compared whole, in O(N) lookups.
//
// UpdatesSince is the reader's half of a subscription claimed lazily, for a
// consumer that may fall far behind and whose writers should not pay for
// its backlog: register a channel with Map.Notify, and on each signal take
// the Map's State and ask it for the updates since the State taken last
// (see the example, and message.HandleLazily). A write then costs such a
// consumer's writers one attempted send on a full channel, plus what any
// held State costs (the first write to each key after each read keeps the
// value it replaces), where a Subscribe channel that nobody reads costs
// each write a merge into its pending snapshot; the consumer pays instead,
// when it reads.
func (s State[K, V]) UpdatesSince(old State[K, V]) []Update[K, V] {
	var out []Update[K, V]
	p := plainKindOf[V]()
	fn := func(k K, ov V, hadOld bool, nv V, hasNew bool) bool {
		switch {
		case !hasNew:
			out = append(out, Update[K, V]{Key: k, Delete: true, Value: ov})
		case !hadOld || !identical(&ov, &nv) && !equalAs(p, ov, nv):
			out = append(out, Update[K, V]{Key: k, Value: nv})
		}
		return true
	}
	switch zero := old == (State[K, V]{}); {
	case s.table() && (zero || old.table()):
		mvcc.Diff(old.snap, s.snap, fn)
	case !s.table() && (zero || !old.table()):
		s.view.Diff(old.view, fn)
	default: // a table's State and a view: compare them whole
		for k, nv := range s.All() {
			ov, hadOld := old.Get(k)
			fn(k, ov, hadOld, nv, true)
		}
		var none V
		for k, ov := range old.All() {
			if _, has := s.Get(k); !has {
				fn(k, ov, true, none, false)
			}
		}
	}
	return out
}

// KeyUpdatesSince is UpdatesSince restricted to keys: the net change from
// old to s of each of keys, in the order of keys (a key listed twice counts
// once), compared as UpdatesSince compares. It costs O(k log N) for k
// keys, however much else changed between the two States: it is the
// reader's half of a Map.NotifyKeys registration, as UpdatesSince is of a
// Map.Notify one.
//
// Since the zero State, it lists those of keys that s holds.
func (s State[K, V]) KeyUpdatesSince(old State[K, V], keys ...K) []Update[K, V] {
	var out []Update[K, V]
	p := plainKindOf[V]()
	for _, k := range distinct(keys) {
		nv, hasNew := s.Get(k)
		ov, hadOld := old.Get(k)
		switch {
		case !hasNew && hadOld:
			out = append(out, Update[K, V]{Key: k, Delete: true, Value: ov})
		case hasNew && (!hadOld || !identical(&ov, &nv) && !equalAs(p, ov, nv)):
			out = append(out, Update[K, V]{Key: k, Value: nv})
		}
	}
	return out
}

// identical reports whether *a and *b are the same bits.
func identical[V any](a, b *V) bool {
	n := unsafe.Sizeof(*a)
	return n == 0 || unsafe.String((*byte)(unsafe.Pointer(a)), n) == unsafe.String((*byte)(unsafe.Pointer(b)), n)
}
