// Package hamt implements a persistent (immutable) hash map: a hash array
// mapped trie in the CHAMP layout (Steindorfer and Vinju, "Optimizing
// Hash-Array Mapped Tries for Fast and Lean Immutable JVM Collections").
// It is the storage under watchable.Map, where every Store publishes a new
// version that readers on other goroutines may keep using for as long as they
// like without taking a lock.
//
// # Structure
//
// A key's 64-bit hash is consumed five bits at a time, one 32-way fan-out per
// level, starting from the low bits. Each node keeps two bitmaps: dataMap
// marks slots holding an inline key/value entry and nodeMap marks slots
// holding a child node. The entries and the children live in two
// dense arrays ordered by slot, so the array index of a slot is the population
// count of the bitmap below its bit. Splitting the two kinds of slot (the
// CHAMP idea) keeps entries contiguous for iteration and lookups, and lets a
// node be stored without any per-slot type tag.
//
// A node is 32 bytes: its bitmaps, its owner and pointers to its first
// entry and its first child, the arrays' lengths being the bitmaps'
// population counts. The children's array is allocated together with the
// node (a few fixed capacities), so copying an inner node along a path costs
// a single allocation; the entries array is separate and exactly sized, so
// that it can stay shared when only a child changes.
//
// When all 64 bits have been used (thirteen levels, the last using four bits)
// keys that are still together have equal hashes; they are kept in a
// collision node, a plain list compared with ==.
//
// # Persistence
//
// A Map is never changed in place. Set and Delete copy only the nodes on the
// path from the root to the affected slot (O(log32 N) of them); every other
// node is shared with the previous version, and so is the entries array of
// each copied node whose entries did not change. Old versions therefore stay
// valid, and since nothing reachable from a published Map is ever written
// again, any number of goroutines may read any version concurrently.
//
// Live (live.go) is the exception that keeps the rule: it changes in place
// only the nodes of the current version that no Map handed out can reach,
// one atomic word at a time, so that concurrent readers never see half a
// change, and Freeze turns the current version into such a Map without
// waiting for the writer.
//
// # Canonical shape
//
// Deletion compacts eagerly: a child that is left with a single entry and no
// children of its own is replaced by that entry inline in its parent, and the
// rule repeats up the path. Insertion pushes two entries down only as far as
// their hashes agree. Together these keep the invariant that a key sits at the
// shallowest level where no other key shares its hash prefix, so the trie has
// exactly one shape for a given set of keys regardless of the order of
// operations (only the order inside a collision list can differ). Canonical
// shape keeps lookups short after heavy churn and makes structural
// comparison meaningful.
//
// # Transactions
//
// Txn batches changes. Each Txn has a unique owner id; nodes it creates carry
// that id and are edited in place by later changes in the same Txn instead of
// being copied again, as long as the change keeps their size (one that adds
// or removes a slot builds a new, exactly sized node). Nodes with any other
// id (including zero, used by plain Set and Delete) are shared and are copied
// before being changed. Commit retires the id, after which no Txn can ever
// edit those nodes, so the committed Map is as immutable as one built with
// Set; a Live map that applies the Txn makes the id its new version's epoch.
//
// Txn.Fill builds the trie of an empty Txn from many entries at once,
// sorting them by hash one level at a time and allocating each node once,
// at its final size, just before the nodes below it. Besides doing without
// the copies and regrown nodes of one Set after another, this lays the
// nodes out in memory roughly in the order All visits them: in a map too
// large for the caches, a walk then reads memory that lies close together
// instead of jumping across the heap, which is what made All at a million
// entries two and a half times slower than on a filled map.
package hamt
