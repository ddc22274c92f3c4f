// Package mirror keeps a watchable map equal to an etcd key prefix.
//
// A Mirror lists the prefix, publishes what it found as the map's contents
// (Map.Replace) and marks the map initialized; then it watches the prefix
// from the revision after the list, applying each watch response as one
// Batch, so that subscribers see the writes of one etcd transaction
// together. It is a runner: Run does all of this until its context ends, and
// the map it owns is handed out as a read-only View.
//
// What it survives, and how:
//
//   - A lost connection: the etcd client resumes the watch where it was, and
//     events at or below the revision the mirror holds are ignored, so none
//     is applied twice.
//   - A compaction past the revision it holds (a long partition, a restarted
//     etcd): it lists again and publishes only the net difference (Replace
//     leaves equal values silent), so subscribers see what changed while it
//     was away and nothing else.
//   - A value that does not decode, or a key the key function refuses: the
//     entry is left out of the map (a previous value for it is removed),
//     reported through runner.HealthOf(ctx) under the etcd key, and the rest
//     of the response is applied. The report is cleared when the key decodes
//     again or is deleted.
//
// Read-your-writes: a writer that got revision R from etcd calls
// WaitRevision(ctx, R); once it returns, the map reflects every change of
// the prefix up to R. The mirror asks etcd for a progress notification when
// a waiter needs a revision that no event of the prefix will bring.
//
// Revisions are etcd's (int64), not the map's own (Map.Revision counts the
// map's effective writes): Revision and Meta report etcd's.
package mirror
