package httpserver_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/httpserver"
)

// dial opens a raw connection to addr, closed when the test ends.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// readAll reads c until the server closes it, and fails the test if that
// takes waitTimeout.
func readAll(t *testing.T, c net.Conn) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("the server did not close the connection: %v (read %q)", err, b)
	}
	return string(b)
}

// A body that does not arrive within the body timeout fails the handler's
// read with ErrBodyTimeout, and the connection is closed.
func TestBodyTimeout(t *testing.T) {
	readErr := make(chan error, 1)
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		readErr <- err
		if errors.Is(err, httpserver.ErrBodyTimeout) {
			http.Error(w, "body too slow", http.StatusRequestTimeout)
		}
	}), httpserver.WithBodyTimeout(100*time.Millisecond))
	start(t, s)
	c := dial(t, s.Addr())
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc") // and never the rest
	err := receive(t, readErr, "the handler's read")
	if !errors.Is(err, httpserver.ErrBodyTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("reading a slow body: %v, want ErrBodyTimeout and os.ErrDeadlineExceeded", err)
	}
	if got := readAll(t, c); !strings.HasPrefix(got, "HTTP/1.1 408") {
		t.Errorf("answer %q, want 408", got)
	}
}

// A handler that answers without reading the body (a refused token) does
// not leave the connection held by a client that trickles the body: the
// server reads no more of it and closes the connection after the answer,
// long before the body timeout.
func TestUnreadBodiesAreNotWaitedFor(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}), httpserver.WithBodyTimeout(waitTimeout))
	start(t, s)
	c := dial(t, s.Addr())
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc")
	begin := time.Now()
	if got := readAll(t, c); !strings.HasPrefix(got, "HTTP/1.1 401") {
		t.Errorf("answer %q, want 401 and the connection closed", got)
	}
	if d := time.Since(begin); d > waitTimeout/2 {
		t.Errorf("the connection was held %v: the server waited for the body", d)
	}
}

// A handler that reads the whole body keeps the connection for the next
// request.
func TestReadBodiesKeepTheConnection(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "got "+string(b))
	}), httpserver.WithBodyTimeout(waitTimeout))
	start(t, s)
	c := dial(t, s.Addr())
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
	for _, body := range []string{"one", "two"} {
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("request with body %q on the same connection: %v", body, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != "got "+body {
			t.Errorf("answer %q", b)
		}
	}
}

// Once the body is read, its deadline is lifted: the handler may go on
// responding for longer than the body timeout.
func TestBodyTimeoutLiftedAtTheEndOfTheBody(t *testing.T) {
	const timeout = 50 * time.Millisecond
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "got "+string(body)+"; ")
		http.NewResponseController(w).Flush()
		time.Sleep(4 * timeout) // the slow response under test
		io.WriteString(w, "done")
	}), httpserver.WithBodyTimeout(timeout))
	start(t, s)
	resp, err := client.Post("http://"+s.Addr()+"/", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "got hello; done" {
		t.Errorf("response %q (%v), want the whole of it", b, err)
	}
	client.CloseIdleConnections()
}

// At its cap the server stops accepting, says so in its log, and accepts
// again once a connection closes.
func TestMaxConnections(t *testing.T) {
	var logs syncBuffer
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello),
		httpserver.WithMaxConnections(2), httpserver.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	start(t, s)
	first, second := dial(t, s.Addr()), dial(t, s.Addr())
	eventually(t, "two connections open", func() bool { return s.OpenConnections() == 2 })
	eventually(t, "the limit logged", func() bool {
		return strings.Contains(logs.String(), "connection limit reached") && strings.Contains(logs.String(), "limit=2")
	})

	third := dial(t, s.Addr()) // waits in the listen queue
	io.WriteString(third, "GET /third HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = third.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := third.Read(make([]byte, 1)); n > 0 || err == nil {
		t.Fatal("a connection over the cap was served")
	}
	_ = second
	first.Close()
	_ = third.SetReadDeadline(time.Now().Add(waitTimeout))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil {
		t.Fatalf("the waiting connection was not served once another closed: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello /third" {
		t.Errorf("answer %q", b)
	}
	eventually(t, "accepting again logged", func() bool { return strings.Contains(logs.String(), "accepting connections again") })
	if s.OpenConnections() != 2 {
		t.Errorf("OpenConnections() = %d, want 2", s.OpenConnections())
	}
}

// Draining is closed, and the shutdown functions run, as soon as the
// shutdown begins, so that long-lived streams end at once.
func TestDrainingAndOnShutdown(t *testing.T) {
	hooked := make(chan struct{})
	streaming := make(chan struct{}, 1)
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if httpserver.Draining(r.Context()) == nil {
			http.Error(w, "no Draining channel", http.StatusInternalServerError)
			return
		}
		io.WriteString(w, "streaming; ")
		http.NewResponseController(w).Flush()
		streaming <- struct{}{}
		<-httpserver.Draining(r.Context())
		io.WriteString(w, "drained")
	}), httpserver.WithShutdownGrace(waitTimeout), httpserver.WithOnShutdown(func() { close(hooked) }))
	r := start(t, s)
	res := call("http://" + s.Addr() + "/stream")
	receive(t, streaming, "the stream started")
	r.stop()
	receive(t, hooked, "the shutdown hook")
	if got := receive(t, res, "response"); got != "200 OK streaming; drained" {
		t.Errorf("stream got %q", got)
	}
	if err := r.wait(); err != nil {
		t.Error(err)
	}
	if httpserver.Draining(t.Context()) != nil {
		t.Error("Draining of a context that is no request's is not nil")
	}
}

func TestDefaults(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello))
	if s.ShutdownGrace() != httpserver.DefaultShutdownGrace || httpserver.DefaultShutdownGrace != 15*time.Second {
		t.Errorf("ShutdownGrace() = %v, want %v", s.ShutdownGrace(), httpserver.DefaultShutdownGrace)
	}
	if n := httpserver.ProcessMaxConnections(); n < 64 {
		t.Errorf("ProcessMaxConnections() = %d, want at least 64", n)
	}
}

// A hijacked connection (a WebSocket, say), which net/http's Shutdown does
// not wait for, gets to end cleanly once the shutdown begins: its
// request's context lives until it has closed.
func TestShutdownWaitsForHijackedConnections(t *testing.T) {
	hijacked := make(chan struct{})
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
		buf.Flush()
		close(hijacked)
		<-httpserver.Draining(r.Context())
		time.Sleep(50 * time.Millisecond) // a close handshake takes a moment
		if r.Context().Err() != nil {
			buf.WriteString("cancelled before goodbye")
		} else {
			buf.WriteString("goodbye")
		}
		buf.Flush()
	}), httpserver.WithShutdownGrace(waitTimeout))
	r := start(t, s)
	c := dial(t, s.Addr())
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: test\r\n\r\n")
	receive(t, hijacked, "the connection hijacked")
	r.stop()
	got := readAll(t, c)
	if !strings.HasSuffix(got, "\r\n\r\ngoodbye") {
		t.Errorf("the hijacked connection got %q, want its goodbye", got)
	}
	if err := r.wait(); err != nil {
		t.Error(err)
	}
}
