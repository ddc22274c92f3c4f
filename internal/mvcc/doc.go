// Package mvcc is a multi-version hash table: the core of watchable's Map,
// in place of the persistent trie it was first built on (docs/design.md,
// "A multi-version table, modelled", "The decision" and "Stage two
// lands"). The benchmarks' model (lib=mvcc, with -model) uses it directly.
//
// A Table maps keys of any comparable type to values of any type. One
// writer at a time Stores and Deletes; Load and snapshots work from any
// goroutine. It grows, lists and counts a snapshot, and learns by itself
// which snapshots are still held: at its next trim (at least once a pass
// over the keys while it stores) it drops the older values that only
// snapshots let go of could read. A subscriber's cursor gives it the net
// change of each key between two of its snapshots (log.go). A Batch is
// seen whole.
//
// Each slot is three words (slot.go): where its key is, the newest value,
// and a word with the version that wrote it (or deleted the key), the
// key's length and some bits of its hash. A string key is kept as its
// bytes; a value of one word (a pointer, or a 64-bit integer or float) is
// kept in the slot; any other key or value is kept as a copy of its own,
// allocated when it is stored. Older values that snapshots may still read
// are listed beside the slots, in lists by slot (history.go); when they are
// pointers, the values themselves are in keep blocks that the snapshots
// own and the lists reach only weakly (keepblock.go), so that a value
// replaced under a snapshot dies with the last snapshot that could read
// it, in the collection that finds that snapshot gone, rather than after
// the trim that follows. A Store
// overwrites the slot in place while no snapshot holds the current
// version, as the trie's Live map changed nodes in place, and otherwise
// writes into the next version; either way, when the slot was written in
// an older version, it first keeps the old value in a record of its own
// (from a block of records), or, once the slot's page of 64 slots has kept
// a few records in a version changed in place, in one copy of the whole
// page, which keeps the page's other slots too (page.go; a copy of
// pointers puts them in a keep block of its own, as records do): the first pass
// over the keys after a lazy reader's snapshot then costs a copy a page
// rather than a record, and a cold lookup, a key. A Batch gives each slot
// it writes a version of its own after the published one, and keeps what
// the slot held in an undo log at the index that version gives (undo.go),
// where readers of the published version find it; the batch then publishes
// the version after all of those. A writer that knows its next keys can
// prefetch their slots first (Table.Prefetch, FindHashed), so that the
// cache misses of consecutive writes to a large table overlap. What it
// replaced that a snapshot may still read, it keeps: when that is a good
// part of the batch, by keeping a copy of its undo log, frozen, which the
// older snapshots go on reading by version (frozen.go; its pointers in
// keep blocks of its own), and otherwise in records; a later write to a
// slot moves what the frozen log holds of it into the slot's records. A
// snapshot is a version number and the slot array of that version, taken in O(1); Get at a version reads
// the slot, and its records and its page's copies when the slot is newer.
// A table that grows makes a new array of the newest values; snapshots
// taken before keep reading the old one, which nobody writes again. While
// a Cursor is open, each Store and Delete also appends its key to a change
// log, from which a subscriber learns which keys changed up to its
// snapshot; one that lags too far is given the changes by comparing its
// snapshots slot by slot instead. Diff, which keeps no state, walks the
// slots of a snapshot too, unless the table offers it the log
// (LogForDiff, which watchable's Notify takes): then the first Diff that
// walks asks the writer to log, and later Diffs between snapshots taken
// since read the keys that changed from the log, in O(changes), until the
// writer sees a whole log's worth of entries go by unread and stops.
//
// One thing differs from the trie's protocol, and Map's State documents
// it: a Snapshot taken while a Store changes the current
// version in place waits until that Store is done (a few stores, for what
// the change needs is allocated before it begins, unless the writer is
// descheduled). The trie's Freeze makes the change itself instead and
// never waits; that is safe there because the writer never writes a
// frozen version's nodes again, but here the next Store writes the same
// slot, and a late repeat of the earlier change would undo it. Load and
// Get never wait.
package mvcc
