// Package sink writes the entries of a watchable map under an etcd key
// prefix, attached to the writer's session lease, so that they live exactly
// as long as the writer does.
//
// A Sink is a runner. Once its input map is initialized it grants a lease,
// writes every entry, then follows the map: each snapshot's updates are
// written in one etcd transaction (or a few, for large snapshots), a deleted
// entry deletes its key. The lease is kept alive while Run runs:
//
//   - If the writer dies, its keys vanish when the lease expires, one TTL
//     later; if Run returns (the writer stops cleanly), the lease is revoked
//     and the keys vanish at once.
//   - If the lease is lost (etcd unreachable for longer than the TTL, an
//     etcd restarted after the lease ran out), the sink grants a new one and
//     writes every entry again, moving the keys it still had to the new
//     lease; the old lease is then revoked, taking with it the keys of
//     entries deleted meanwhile.
//
// Writes are fenced: the sink creates a key that is absent, and changes or
// deletes only a key attached to a lease of its own. A key that another
// writer holds is left alone, and reported through runner.HealthOf(ctx)
// under the etcd key until a later write of that entry succeeds (the sink
// tries again when the entry changes and after it re-grants its lease).
// Keys deleted by someone else while the lease lives are not written back
// until their entry changes.
//
// Read-your-writes: Sync waits until what the map held when Sync was called
// is written, and returns the etcd revision to wait for in a mirror of the
// prefix (see the mirror package's WaitRevision).
package sink
