// Package watchable provides Map, a typed key/value map that publishes its
// changes. Any goroutine may Store and Delete; any goroutine may Subscribe
// and then read Snapshots from a channel: the first holds everything, and
// each later one holds the complete contents (an immutable State) together
// with the net change per key since the subscriber's previous read. Changes
// are coalesced, never queued, so a slow reader sees the newest state and
// never slows writers down. The zero Map is ready to use; subscriptions end
// when their context is done or the map is closed.
//
// The programming model is the one of github.com/telepresenceio/watchable,
// which Envoy Gateway uses to connect its components. The cost model is not:
// the map is a multi-version hash table, so taking a State is O(1), a Store
// is O(1) expected plus O(1) per subscriber it concerns, and a delivered
// snapshot costs the same at a hundred entries as at a hundred thousand.
// While nobody holds the current version, writes change it in place, so a
// map nobody watches costs about what a Go map does; once a State holds a
// version, the first write to each key after it keeps the value it replaces
// for that State, until the State is unreachable. Load never waits for
// writers; State waits at most for the one Store under way in place. See
// docs/design.md in the repository for the data structures and the
// measured figures.
//
// Besides Subscribe, a subscriber may watch a subset of the entries
// (SubscribeSubset, with a predicate), a set of keys (SubscribeKeys), or one
// partition of the entries (PartitionBy, for a fan-out with one subscriber
// per node): keyed and partition subscriptions are indexed, so a write costs
// the same with one of them as with ten thousand.
//
// A reader that may fall far behind can claim its changes lazily instead,
// so that its writers do not pay for its backlog: Notify tells it that the
// map changed, and when it is ready it takes the map's State and asks it
// for the net change since the State it took last (State.UpdatesSince). An
// unread subscription costs each write a merge into its pending snapshot; a
// lazy reader costs one attempted send on a full channel, plus what any
// held State costs (the first write to each key after each of its reads
// keeps the value it replaces), and pays for the difference itself when it
// reads.
// NotifyKeys and State.KeyUpdatesSince are the same for a few keys, and
// Partitions.Notify and Partitions.State for a partition, for a fan-out: a
// write signals only the readers of the key or partition it changes.
//
// Values are deep-copied when they enter the map (Store) and when they leave
// it through Load and LoadAll, so callers may keep mutating their own copies.
// Values reached through a State or a Snapshot are shared by every reader and
// MUST NOT be mutated. Plain data needs no DeepCopy method: structs,
// pointers, slices, maps and interfaces are copied part by part, immutable
// standard types such as time.Time are shared, and a type's own DeepCopy
// method is used where there is one, and proto messages are copied as
// proto.Clone copies them. What cannot be copied
// safely, such as a func, is refused at the first Store, before anything
// changes. DeepCopy states the rules, and DeepEqual how a Store is found to
// change nothing.
//
// A component that writes a map hands out its View, the read-only face of
// the map, so that nobody else can write to it. A writer that loads initial
// contents registers an initializer (Map.RegisterInitializer); consumers wait
// for Initialized, or look at Snapshot.Initialized, instead of acting on a
// partial picture. A map nobody registers an initializer with is
// initialized from the start.
package watchable
