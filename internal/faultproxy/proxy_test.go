package faultproxy_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/faultproxy"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// echo starts a line echo server and returns its address.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]struct{}{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = struct{}{}
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

func start(t *testing.T, target string) *faultproxy.Proxy {
	t.Helper()
	p, err := faultproxy.New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return p
}

type client struct {
	net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{c, bufio.NewReader(c)}
}

// roundTrip sends line and returns what came back before the deadline.
func (c *client) roundTrip(line string, within time.Duration) (string, error) {
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	return c.read(within)
}

func (c *client) read(within time.Duration) (string, error) {
	c.SetReadDeadline(time.Now().Add(within))
	s, err := c.r.ReadString('\n')
	if err != nil {
		return s, err
	}
	return s[:len(s)-1], nil
}

// Long enough for loopback traffic on a loaded machine; a test that expects
// nothing to arrive waits only quiet.
const (
	patience = 10 * time.Second
	quiet    = 100 * time.Millisecond
)

func TestForwards(t *testing.T) {
	p := start(t, echo(t))
	if p.Target() == p.Addr() {
		t.Fatalf("proxy listens on its target %s", p.Addr())
	}
	c := dial(t, p.Addr())
	for _, line := range []string{"one", "two", string(make([]byte, 100<<10))} {
		got, err := c.roundTrip(line, patience)
		if err != nil || got != line {
			t.Fatalf("round trip of %d bytes: got %d bytes, %v", len(line), len(got), err)
		}
	}
}

func TestCutClosesAndRefusesUntilRestore(t *testing.T) {
	p := start(t, echo(t))
	before := dial(t, p.Addr())
	if _, err := before.roundTrip("hello", patience); err != nil {
		t.Fatal(err)
	}

	p.Cut()
	// The open connection ends: a read fails without waiting for a timeout.
	if _, err := before.read(patience); err == nil || isTimeout(err) {
		t.Fatalf("read on a cut connection: %v, want it closed", err)
	}
	// A new connection is reset at once.
	expectReset(t, p.Addr())

	p.Restore()
	after := dial(t, p.Addr())
	if got, err := after.roundTrip("back", patience); err != nil || got != "back" {
		t.Fatalf("round trip after restore: %q, %v", got, err)
	}
}

func TestPauseStallsWithoutClosing(t *testing.T) {
	p := start(t, echo(t))
	open := dial(t, p.Addr())
	if _, err := open.roundTrip("hello", patience); err != nil {
		t.Fatal(err)
	}

	p.Pause()
	if got, err := open.roundTrip("held", quiet); !isTimeout(err) {
		t.Fatalf("round trip while paused: %q, %v, want a timeout", got, err)
	}
	fresh := dial(t, p.Addr())
	if got, err := fresh.roundTrip("queued", quiet); !isTimeout(err) {
		t.Fatalf("round trip on a connection made while paused: %q, %v, want a timeout", got, err)
	}

	p.Restore()
	// What was sent during the pause arrives, on both connections.
	if got, err := open.read(patience); err != nil || got != "held" {
		t.Fatalf("after restore, open connection read %q, %v", got, err)
	}
	if got, err := fresh.read(patience); err != nil || got != "queued" {
		t.Fatalf("after restore, fresh connection read %q, %v", got, err)
	}
}

func TestCutWhilePausedClosesHeldConnections(t *testing.T) {
	p := start(t, echo(t))
	c := dial(t, p.Addr())
	p.Pause()
	if _, err := c.roundTrip("held", quiet); !isTimeout(err) {
		t.Fatalf("round trip while paused: %v, want a timeout", err)
	}
	p.Cut()
	if _, err := c.read(patience); err == nil || isTimeout(err) {
		t.Fatalf("read after cut: %v, want the connection closed", err)
	}
	p.Pause() // stays cut
	expectReset(t, p.Addr())
}

func TestHalfCloseIsForwarded(t *testing.T) {
	p := start(t, echo(t))
	c := dial(t, p.Addr())
	io.WriteString(c, "last words\n")
	if err := c.Conn.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(patience))
	got, err := io.ReadAll(c.r)
	if err != nil || string(got) != "last words\n" {
		t.Fatalf("read after half-close: %q, %v, want the echo then end of stream", got, err)
	}
}

func TestUnreachableTargetClosesClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	target := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := start(t, target)
	expectReset(t, p.Addr())
}

func TestCloseEndsEverything(t *testing.T) {
	p, err := faultproxy.New(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, p.Addr())
	if _, err := c.roundTrip("hello", patience); err != nil {
		t.Fatal(err)
	}
	p.Pause()
	paused := dial(t, p.Addr())
	io.WriteString(paused, "held\n")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := c.read(patience); err == nil || isTimeout(err) {
		t.Fatalf("read after close: %v, want the connection closed", err)
	}
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		c.Close()
		t.Fatalf("dial after close succeeded")
	}
}

// expectReset checks that a connection to addr ends at once: the reset may
// arrive before the dial returns, or on the first read.
func expectReset(t *testing.T, addr string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	cl := &client{c, bufio.NewReader(c)}
	if got, err := cl.roundTrip("lost", patience); err == nil || isTimeout(err) {
		t.Fatalf("round trip: %q, %v, want the connection closed", got, err)
	}
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
