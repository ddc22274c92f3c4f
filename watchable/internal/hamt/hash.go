package hamt

import (
	"math/bits"

	"github.com/switchyard-go/switchyard/internal/keyhash"
)

const (
	bitsPerLevel = 5
	fanout       = 1 << bitsPerLevel
	levelMask    = fanout - 1
	// hashBits is the shift at which a key's hash is used up; nodes at or
	// below it are collision nodes.
	hashBits = 64
)

// hashOverride replaces the seeded hash when non-nil. It exists so tests can
// force collisions; it must only be changed while no Map is in use on another
// goroutine, and maps built under one hash must not be used under another.
var hashOverride func(any) uint64

// hashOf is the hash of k. keyhash's is the same for every Map of the
// process, so that the zero Map needs no setup, and so that maps can share
// subtrees: a node's layout is only meaningful under the hash that built
// it.
func hashOf[K comparable](k K) uint64 {
	if hashOverride != nil {
		return hashOverride(k)
	}
	return keyhash.Of(k)
}

// Hash returns k's hash, for the *Hashed and *Owned methods of Map, so
// that a caller that looks a key up and then sets it hashes it once. It is
// keyhash.Of's, the hash internal/mvcc's tables probe by too (unless a
// test replaced either): a writer hands the hash its table found a key by
// to the tries.
func Hash[K comparable](k K) uint64 { return hashOf(k) }

// bitpos is the bitmap bit of h's slot at the level that starts at shift.
//
// bitpos and index are generic only so that they are inlined. The trie's
// code is generic, and it is instantiated in the user's package through
// watchable's generic Map; compiled there, these two helpers were not
// inlined while they were plain functions: every level of every lookup made
// two calls, about a fifth of what a Load of an int cost in a map of 100
// entries. watchable's TestTrieHelpersInlined checks it.
func bitpos[H ~uint64](h H, shift uint) uint32 {
	return 1 << ((h >> shift) & levelMask)
}

// index is the position of bit's slot in the dense array described by bitmap.
func index[B ~uint32](bitmap, bit B) int {
	return bits.OnesCount32(uint32(bitmap & (bit - 1)))
}
