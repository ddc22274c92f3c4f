package watchable_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

func TestNotify(t *testing.T) {
	var m watchable.Map[string, int]
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	m.Notify(ctx, ch)
	if n, s := m.Notifiers(), m.Subscribers(); n != 1 || s != 0 {
		t.Fatalf("with one Notify registration: Notifiers = %d, Subscribers = %d; want 1, 0", n, s)
	}

	if received(ch) {
		t.Fatal("signalled before any write")
	}
	m.Store("a", 1)
	m.Store("b", 2)
	m.Batch(func(b *watchable.Batch[string, int]) { b.Store("c", 3) })
	if !received(ch) {
		t.Fatal("no signal after writes")
	}
	if received(ch) {
		t.Fatal("writes queued more than one signal in a buffer of one")
	}
	m.Store("a", 1) // equal: not a change
	m.Delete("zz")  // missing: not a change
	if received(ch) {
		t.Fatal("signalled for writes that changed nothing")
	}

	cancel()
	// The registration is removed by a goroutine context.AfterFunc starts;
	// wait until a write no longer signals.
	for {
		m.Store("a", int(m.Revision())+1)
		if !received(ch) {
			break
		}
	}

	m.Notify(t.Context(), ch)
	m.Close()
	if n := m.Notifiers(); n != 0 {
		t.Fatalf("Notifiers after Close = %d; want 0", n)
	}
	m.Store("x", 1)
	if received(ch) {
		t.Fatal("signalled after Close")
	}
	m.Notify(t.Context(), ch) // on a closed map: nothing
}

// TestNotifyOnePendingSignal checks that a signal pending in the channel
// is enough, whatever its buffer: writes add no second one, and the write
// after the reader took it signals again. An unbuffered channel is
// signalled when its reader waits.
func TestNotifyOnePendingSignal(t *testing.T) {
	var m watchable.Map[string, int]
	ch := make(chan struct{}, 4)
	m.Notify(t.Context(), ch)
	for i := range 10 {
		m.Store("a", i+1)
	}
	if n := len(ch); n != 1 {
		t.Fatalf("after 10 Stores a buffer of 4 holds %d signals; want 1", n)
	}
	<-ch
	m.Store("a", 100)
	if n := len(ch); n != 1 {
		t.Fatalf("after a Store following the read, the buffer holds %d signals; want 1", n)
	}

	var u watchable.Map[string, int]
	unbuffered := make(chan struct{})
	u.NotifyKeys(t.Context(), unbuffered, "k")
	got := make(chan struct{})
	go func() {
		select {
		case <-unbuffered:
			close(got)
		case <-t.Context().Done(): // the test failed: no goroutine left behind
		}
	}()
	for i := 0; ; i++ {
		u.Store("k", i) // until the reader waits
		select {
		case <-got:
			return
		case <-time.After(time.Millisecond):
		}
		if i == 10000 {
			t.Fatal("an unbuffered channel whose reader waits was never signalled")
		}
	}
}
