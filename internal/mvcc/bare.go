package mvcc

// A Store that changes the current version in place, and replaces a value
// written in an older version, keeps that value for the snapshots of the
// versions in between (a record, or a copy of its page). When no snapshot
// of an older version is held, nobody can read it: no snapshot of a
// version is taken once the writer has moved past it. So the writer asks
// the marks once per version, at the first Store that would keep a value,
// and while none is held it keeps nothing. That spares the first write to
// each key after a Batch (a provider's initial load), or after the last
// snapshot went, a record and a probe of the table of older values, which
// trim dropped unread a quarter of the keys later: at a million integers
// the first pass of Stores over the keys took 2.4 times as long as the
// passes after it.

// bareAt reports whether no snapshot of a version older than ver, the
// current version, is held, so that a Store changing ver in place need
// keep nothing of what it replaces. Writer only; the caller must then
// change ver in place (a Store that finds ver frozen by a snapshot taken
// meanwhile writes the next version and keeps, as before).
//
// A snapshot of an older version froze it while it was current, and then
// added its mark. A look that finds no mark held may come between the two:
// it finds none, adds one to trims, and looks again, as trim does. A
// snapshot whose mark the second look missed sees trims move and is taken
// again, of the current version (see Snapshot).
func (t *Table[K, V]) bareAt(ver uint64) bool {
	if t.bare == ver {
		return true
	}
	if t.olderHeld && t.held.dropped.Load() == t.droppedSeen {
		// The last look found an older snapshot held, and none has
		// gone since: it is older than ver too.
		return false
	}
	if t.holdsOlder(ver) {
		return false
	}
	// None found: a snapshot may have frozen a version and not yet added
	// its mark. Moving trims makes it take itself again, or shows the mark.
	t.held.trims.Add(1)
	if t.holdsOlder(ver) {
		return false
	}
	t.bare, t.olderHeld = ver, false
	return true
}

// holdsOlder reports whether a snapshot of a version older than ver is
// held, and if so notes how many marks had gone, for bareAt to look again
// only once another goes. Writer only.
func (t *Table[K, V]) holdsOlder(ver uint64) bool {
	h := &t.held
	h.mu.Lock()
	defer h.mu.Unlock()
	dropped := h.dropped.Load() // before the marks: one that goes after shows
	// Newest first: a reader that holds its latest snapshot is found at
	// once, rather than after the marks of those it let go of.
	for i := len(h.marks) - 1; i >= 0; i-- {
		if m := h.marks[i]; m.ver < ver && !m.gone.Load() {
			t.olderHeld, t.droppedSeen = true, dropped
			return true
		}
	}
	return false
}
