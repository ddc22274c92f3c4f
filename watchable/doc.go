// Package watchable provides Map, a typed key/value map that any number of
// goroutines can write to and subscribe to.
//
// A subscriber receives Snapshots: the complete current contents of the map
// (an immutable State) together with the net changes since the subscriber's
// previous read. Snapshots are coalesced: a subscriber never has a backlog,
// and whatever it reads is the newest state. A slow or stalled subscriber
// never slows down writers.
//
// The programming model is the one of github.com/telepresenceio/watchable,
// which Envoy Gateway uses to connect its components. The cost model is not:
// the map is a persistent hash trie, so taking a State is O(1), a Store is
// O(log N) whatever the number of subscribers, and a delivered snapshot costs
// the same at a hundred entries as at a hundred thousand. See docs/design.md
// in the repository for the data structures and the measured figures.
//
// Values are deep-copied when they enter the map (Store) and when they leave
// it through Load and LoadAll, so callers may keep mutating their own copies.
// Values reached through a State or a Snapshot are shared by every reader and
// MUST NOT be mutated. See DeepCopy for the types that can be stored.
package watchable
