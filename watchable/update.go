package watchable

// Update is the net change of one key between two snapshots. Its Value is
// shared with the map and MUST NOT be mutated.
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
// and how it changed since the subscriber's previous snapshot. A Snapshot may
// be kept and read from any goroutine for as long as the caller likes; the
// values it reaches MUST NOT be mutated.
type Snapshot[K comparable, V any] struct {
	// State is the complete current contents (for SubscribeSubset, the
	// matching entries only). It never changes after delivery.
	State State[K, V]

	// Updates holds at most one entry per key: the net change between the
	// previous snapshot's State and this one, in no particular order. A key
	// that appeared and vanished in between is not listed. The first snapshot
	// of a subscription lists every entry of State, so a consumer that only
	// reads Updates sees everything.
	//
	// A key whose value changed and then changed back to the one the
	// subscriber last saw is listed, with that value: telling would cost a
	// DeepEqual per subscriber per write. Applying Updates in order to the
	// previous State gives this State, up to DeepEqual: a value replaced by
	// an equal one (see Map.Store) is not listed, but State holds the new
	// one.
	//
	// The slice belongs to the reader: the map never touches it after
	// delivery. It has no spare capacity, so appending to it copies.
	Updates []Update[K, V]

	// Revision is the map's revision that State reflects. It grows by one for
	// every effective write (Store, Delete, Batch, Replace, ...) and when the
	// map becomes initialized, and never goes back within a subscription.
	Revision uint64

	// Initialized reports whether the map was initialized (see
	// Map.RegisterInitializer) at Revision. A map becomes initialized once,
	// and every subscriber then receives a snapshot saying so, with empty
	// Updates when nothing else changed.
	Initialized bool
}
