// Package hamt implements a persistent (immutable) hash map: a hash array
// mapped trie in the CHAMP layout (Steindorfer and Vinju, "Optimizing
// Hash-Array Mapped Tries for Fast and Lean Immutable JVM Collections").
//
// watchable.Map first kept its contents here; they are now in
// internal/mvcc, a multi-version table. What remains serves the
// subscribers that see only some entries (subset, keyed and partition
// subscriptions): each keeps its view of the map in a Map of its own,
// changed as writes arrive and handed out as the State of its snapshots,
// which readers on other goroutines may keep using for as long as they
// like without taking a lock; Diff tells what changed between two of them.
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
// SetOwned and DeleteOwned are the exception that keeps the rule: given an
// Owner, they change in place the nodes that earlier calls with the same
// Owner created, which its holder promises no one else can reach (a
// subscriber's view between two snapshots it hands out), and copy the
// others as Set and Delete do. Once a version may have been seen, the
// holder takes a new Owner, and the nodes the old one created are frozen
// for good.
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
// Set. Owners are drawn from the same ids, so that no Txn and no Owner ever
// edit each other's nodes.
//
// # Diff and iteration
//
// Diff walks two versions together and skips every subtree they share, so
// that between a version and one derived from it, it costs about the
// changed keys times the depth. All and Keys walk a version in an order
// fixed by its shape, reading a node's children (and theirs) before
// visiting them, so that the cache misses of a large map overlap.
package hamt
