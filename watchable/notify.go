package watchable

import "context"

// Notify arranges for a send on ch after every effective write to the map,
// and when it becomes initialized, until ctx is done or the map is closed. Like signal.Notify, it never
// blocks sending to ch, and a signal already pending in ch is enough: ch
// holds at most one pending signal however many writes happen, whatever its
// buffer, which is what a consumer that recomputes from State wants. The
// map never closes ch.
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
//
// A lazy reader between reads leaves its signal pending, and then every
// write finds it so: len(ch), one call that reads the channel's count,
// tells that before the select's two calls would (a Store of 10,000 ints
// with such a reader went from 5.7% to 3.2% over one without, medians of
// 14 alternated samples). It is as safe as the select's own test of a
// full channel: the write has taken effect before len looks, so the
// pending signal it sees is received after that, and the reader's read
// that follows finds the write. An unbuffered channel has len 0 and goes
// to the select, which sends only to a receiver waiting. A write that finds
// no signal pending makes the one call more, before the send that wakes the
// reader, which costs far more.
func send(ch chan<- struct{}) {
	if len(ch) > 0 {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}
