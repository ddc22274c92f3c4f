package watchable

import (
	"iter"

	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// State is an immutable version of a Map's contents. Taking one is O(1) and
// copies nothing; it never changes afterwards, whatever happens to the Map,
// and may be read from any goroutine for as long as the caller likes.
//
// The values it returns are shared with the Map and with every other reader:
// they MUST NOT be mutated. Use DeepCopy, or Map.Load, for a private copy.
//
// The zero State is empty.
type State[K comparable, V any] struct {
	m hamt.Map[K, V]
}

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
