package httpserver

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"
)

// The process budget is shared by the listeners of the process: when it is
// full, a listener with room of its own waits too.
func TestProcessBudgetIsShared(t *testing.T) {
	budget := newSemaphore(2)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	listen := func() *limitListener {
		tcp, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l := newLimitListener(tcp, 10, budget, logger)
		t.Cleanup(func() { l.Close() })
		return l
	}
	a, b := listen(), listen()
	accepted := make(chan net.Conn, 3)
	for _, l := range []*limitListener{a, a, b} {
		go func() {
			c, err := l.Accept()
			if err == nil {
				accepted <- c
			}
		}()
	}
	for _, l := range []*limitListener{a, a, b} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	select {
	case c := <-accepted:
		t.Fatalf("a third connection (%v) was accepted beyond the process budget of 2", c.LocalAddr())
	case <-time.After(100 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(20 * time.Second):
		t.Fatal("no connection accepted once the budget had room")
	}
	second.Close()
	if budget.held() != 0 {
		t.Errorf("budget holds %d slots after every connection closed", budget.held())
	}
	// A closed listener stops waiting for room.
	budget.tryAcquire()
	budget.tryAcquire()
	done := make(chan error, 1)
	go func() { _, err := a.Accept(); done <- err }()
	a.Close()
	if err := <-done; err == nil {
		t.Error("Accept on a closed listener waiting for room succeeded")
	}
}
