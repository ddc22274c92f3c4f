package watchable

import (
	"iter"
	"unsafe"

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
	m   hamt.Map[K, V]
	rev uint64
}

// Revision is the map's revision that the State reflects (see
// Map.Revision): taken with the contents, so the two always agree, where
// calling Map.Revision next to Map.State may see a later write.
func (s State[K, V]) Revision() uint64 { return s.rev }

// Get returns the value stored for k, and whether there is one.
// The value is shared and must not be mutated.
func (s State[K, V]) Get(k K) (V, bool) { return s.m.Get(k) }

// Len returns the number of entries.
func (s State[K, V]) Len() int { return s.m.Len() }

// All iterates over the entries in no particular order.
// The values are shared and must not be mutated.
func (s State[K, V]) All() iter.Seq2[K, V] { return s.m.All() }

// Keys iterates over the keys in no particular order.
func (s State[K, V]) Keys() iter.Seq[K] { return s.m.Keys() }

// Map returns the entries as a new Go map. The map is the caller's, but the
// values in it are shared and must not be mutated (see Map.LoadAll for deep
// copies).
func (s State[K, V]) Map() map[K]V {
	out := make(map[K]V, s.m.Len())
	for k, v := range s.m.All() {
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
// Two States of the same Map share every part of the map that no write
// between them touched, and UpdatesSince skips those parts by comparing
// pointers: it costs O(changed keys × log N), however large the map. For
// States of different maps it compares them whole, in O(N).
//
// UpdatesSince is the reader's half of a subscription claimed lazily, for a
// consumer that may fall far behind and whose writers should not pay for
// its backlog: register a channel with Map.Notify, and on each signal take
// the Map's State and ask it for the updates since the State taken last
// (see the example, and message.HandleLazily). A write then costs such a
// consumer's writers one attempted send on a full channel, plus what any
// held State costs (the first write after each read copies the path it
// touches), where a Subscribe channel that nobody reads costs each write a
// merge into its pending snapshot; the consumer pays instead, when it
// reads.
func (s State[K, V]) UpdatesSince(old State[K, V]) []Update[K, V] {
	var out []Update[K, V]
	p := plainKindOf[V]()
	s.m.Diff(old.m, func(k K, ov V, hadOld bool, nv V, hasNew bool) bool {
		switch {
		case !hasNew:
			out = append(out, Update[K, V]{Key: k, Delete: true, Value: ov})
		case !hadOld || !identical(&ov, &nv) && !equalAs(p, ov, nv):
			out = append(out, Update[K, V]{Key: k, Value: nv})
		}
		return true
	})
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
		h := hamt.Hash(k)
		nv, hasNew := s.m.GetHashed(k, h)
		ov, hadOld := old.m.GetHashed(k, h)
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
