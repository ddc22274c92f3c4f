package watchable

// Update is the net change of one key between two snapshots.
type Update[K comparable, V any] struct {
	Key K
	// Delete reports that Key is no longer present. Value then holds the
	// last value the subscriber saw for Key.
	Delete bool
	// Value is the new value, or the deleted one when Delete is true.
	// It is shared with the map's State and must not be mutated.
	Value V
}

// Snapshot is what a subscription delivers: the subscriber's view of the map
// and how it changed since the subscriber's previous snapshot.
type Snapshot[K comparable, V any] struct {
	// State is the complete current contents (for SubscribeSubset, the
	// matching entries only). It never changes after delivery.
	State State[K, V]

	// Updates holds at most one entry per key: the net change between the
	// previous snapshot's State and this one, in no particular order. A key
	// that appeared and vanished in between is not listed. The first snapshot
	// of a subscription lists every entry of State, so a consumer that only
	// reads Updates sees everything.
	Updates []Update[K, V]

	// Revision is the map's revision that State reflects. It grows by one for
	// every effective write (Store, Delete, Batch, Replace, ...) and never
	// goes back within a subscription.
	Revision uint64
}
