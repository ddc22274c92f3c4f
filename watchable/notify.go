package watchable

import "context"

// Notify arranges for a send on ch after every effective write to the map,
// and when it becomes initialized, until ctx is done or the map is closed. Like signal.Notify, it never
// blocks sending to ch: with a buffer of one, ch holds at most one pending
// signal however many writes happen, which is what a consumer that recomputes
// from State wants. The map never closes ch.
//
// Notify is for consumers that only need to know that something changed,
// whatever the map's types (translator.Compute watches its inputs this way);
// use Subscribe to learn what changed. Notify on a closed map, or with a done
// ctx, does nothing. Notify panics if ch is nil, as signal.Notify does.
func (m *Map[K, V]) Notify(ctx context.Context, ch chan<- struct{}) {
	if ch == nil {
		panic("watchable: Notify with a nil channel")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || ctx.Err() != nil {
		return
	}
	// While the registration lasts, and its reader claims changes with
	// State.UpdatesSince, the table logs the keys each write changes, so
	// that UpdatesSince reads the keys that changed rather than every
	// slot (see mvcc.Table.LogForDiff).
	n := &notifier{ch: ch, pos: len(m.notifiers), unlog: m.tab.LogForDiff()}
	m.notifiers = append(m.notifiers, n)
	n.stop = context.AfterFunc(ctx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if n.pos < 0 {
			return // removed by Close
		}
		m.notifiers = cut(m.notifiers, n.pos)
		if n.pos < len(m.notifiers) {
			m.notifiers[n.pos].pos = n.pos
		}
		n.remove()
	})
}

// notifier is one Notify registration. pos is its index in m.notifiers, or
// -1 once removed; both are guarded by m.mu.
type notifier struct {
	ch    chan<- struct{}
	stop  func() bool
	pos   int
	unlog func() // ends the table's log of changes for this registration
}

// remove marks n removed, and lets the table stop logging for it. m.mu is
// held.
func (n *notifier) remove() {
	n.pos = -1
	n.unlog()
}

func (n *notifier) signal() { send(n.ch) }

// send signals ch without blocking: a signal already pending is enough.
func send(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
