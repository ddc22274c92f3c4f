package watchable

import (
	"slices"
	"sync"
)

// initialization is a Map's bookkeeping for RegisterInitializer. Its mutex
// is taken after Map.mu when both are needed, and alone by Initialized and
// PendingInitializers, so those never wait for a Batch in progress.
type initialization struct {
	mu      sync.Mutex
	pending []*initializer
	done    bool          // an initialization completed: initialized for good
	ch      chan struct{} // made on demand while pending; closed when done
}

type initializer struct {
	name     string
	finished bool
}

// closedChan is what Initialized returns for an initialized map.
var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// RegisterInitializer declares that the caller is loading the map's initial
// contents, and returns the function to call once they are published. The
// map is initialized when no initializer is pending: until then Initialized
// is not closed and snapshots report Initialized false, so that consumers
// can wait for a complete picture instead of acting on a partial one. name
// says who is pending, in PendingInitializers and in diagnostics.
//
// A map nobody registers an initializer with is initialized from the start,
// so a plain map never keeps its consumers waiting. Register initializers
// when constructing the component that fills the map, before anything
// waits on it: registering on a map that has never completed an
// initialization makes it uninitialized until every registered initializer
// is done. Once that has happened the map is initialized for good, and a
// later RegisterInitializer returns a function that does nothing.
//
// The map becoming initialized is published like a write: the revision
// grows by one, every subscriber receives a snapshot with Initialized true
// (its Updates empty when nothing else changed), and Notify channels are
// signalled. The returned function may be called any number of times, from
// any goroutine, also after Close; only the first call counts. It must not
// be called inside Batch.
func (m *Map[K, V]) RegisterInitializer(name string) (done func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init.mu.Lock()
	if m.init.done {
		m.init.mu.Unlock()
		return func() {}
	}
	in := &initializer{name: name}
	wasInitialized := len(m.init.pending) == 0
	m.init.pending = append(m.init.pending, in)
	m.init.mu.Unlock()
	if wasInitialized {
		m.uninitialized = true
	}
	return func() { m.finishInitializer(in) }
}

// finishInitializer marks in done, and publishes the map's initialization
// when it was the last one pending.
func (m *Map[K, V]) finishInitializer(in *initializer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init.mu.Lock()
	if in.finished {
		m.init.mu.Unlock()
		return
	}
	in.finished = true
	if len(m.init.pending) > 1 {
		m.init.pending = slices.DeleteFunc(m.init.pending, func(p *initializer) bool { return p == in })
		m.init.mu.Unlock()
		return
	}
	m.init.mu.Unlock()

	// The last one: the new revision is stamped before Initialized and
	// PendingInitializers say so, so that whoever Initialized wakes reads
	// the initialized revision (writers are held off by m.mu meanwhile).
	m.uninitialized = false
	rev := m.tab.Stamp()
	if !m.closed {
		rev++
		m.tab.Restamp(rev)
	}
	m.init.mu.Lock()
	m.init.pending = m.init.pending[:0]
	m.init.done = true
	if m.init.ch != nil {
		close(m.init.ch)
		m.init.ch = nil
	}
	m.init.mu.Unlock()

	for _, s := range m.subs {
		s.flush(rev, true)
	}
	for _, r := range m.routers {
		r.flushAll(rev)
	}
	m.signal()
}

// Initialized returns a channel that is closed while the map is initialized:
// when no initializer registered with RegisterInitializer is pending. For a
// map that nobody registered an initializer with, it is closed already.
// Once it is closed, Revision is at least the revision that published the
// initialization. Initialized may be called from any goroutine and never waits for writers.
func (m *Map[K, V]) Initialized() <-chan struct{} {
	m.init.mu.Lock()
	defer m.init.mu.Unlock()
	if len(m.init.pending) == 0 {
		return closedChan
	}
	if m.init.ch == nil {
		m.init.ch = make(chan struct{})
	}
	return m.init.ch
}

// PendingInitializers returns the names of the initializers that have not
// finished, in the order they registered: who the map's consumers are
// waiting for. It is empty when the map is initialized.
func (m *Map[K, V]) PendingInitializers() []string {
	m.init.mu.Lock()
	defer m.init.mu.Unlock()
	names := make([]string, len(m.init.pending))
	for i, p := range m.init.pending {
		names[i] = p.name
	}
	return names
}
