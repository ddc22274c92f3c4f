package hamt

import (
	"hash/maphash"
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

// seed is shared by every Map so that the zero Map needs no setup, and so that
// maps can share subtrees: a node's layout is only meaningful under the seed
// that built it. keyhash hashes strings and integers with constants of its
// own, shared alike; seed is maphash's, for the other key types.
var seed = maphash.MakeSeed()

// hashOverride replaces the seeded hash when non-nil. It exists so tests can
// force collisions; it must only be changed while no Map is in use on another
// goroutine, and maps built under one hash must not be used under another.
var hashOverride func(any) uint64

func hashOf[K comparable](k K) uint64 {
	if hashOverride != nil {
		return hashOverride(k)
	}
	return keyhash.Of(seed, k)
}

// Hash returns k's hash, for the *Hashed and *Owned methods of Map, so
// that a caller that looks a key up and then sets it hashes it once.
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
