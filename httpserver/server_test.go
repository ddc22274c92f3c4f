package httpserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/httpserver"
)

var client = &http.Client{Timeout: waitTimeout}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return resp.StatusCode, string(body)
}

func hello(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello "+r.URL.Path) }

func TestServesOnTheAddressItReports(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello))
	if s.Name() != "api" {
		t.Errorf("Name() = %q, want api", s.Name())
	}
	if s.Addr() != "" {
		t.Errorf("Addr() before Run = %q, want empty", s.Addr())
	}
	r := start(t, s)
	addr := s.Addr()
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "127.0.0.1" || port == "0" {
		t.Fatalf("Addr() = %q, want 127.0.0.1 with the port it got", addr)
	}
	if code, body := get(t, "http://"+addr+"/x"); code != 200 || body != "hello /x" {
		t.Errorf("GET /x = %d %q", code, body)
	}

	if err := r.wait(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if s.Addr() != addr {
		t.Errorf("Addr() after Run = %q, want %q still", s.Addr(), addr)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("still accepting connections after Run returned")
	}
	client.CloseIdleConnections()
}

func TestRunsOnce(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello))
	r := start(t, s)
	if err := s.Run(context.Background()); !errors.Is(err, httpserver.ErrAlreadyRun) || !strings.Contains(err.Error(), "api") {
		t.Errorf("second Run = %v, want ErrAlreadyRun naming api", err)
	}
	if err := r.wait(); err != nil {
		t.Errorf("first Run = %v, want nil", err)
	}
}

func TestListenFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	s := httpserver.New("api", ln.Addr().String(), http.HandlerFunc(hello))
	err = s.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Errorf("Run on a taken address = %v, want an error naming it", err)
	}
	select {
	case <-s.Ready():
		t.Error("ready although it could not listen")
	default:
	}
	if s.Addr() != "" {
		t.Errorf("Addr() = %q after failing to listen, want empty", s.Addr())
	}
}

// blocking is a handler whose requests hold until released, and that says
// when one arrived and how its context ended.
type blocking struct {
	arrived  chan struct{}
	release  chan struct{}
	canceled chan struct{}
}

func newBlocking() *blocking {
	return &blocking{arrived: make(chan struct{}, 1), release: make(chan struct{}), canceled: make(chan struct{}, 1)}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.arrived <- struct{}{}
	select {
	case <-b.release:
		io.WriteString(w, "done")
	case <-r.Context().Done():
		b.canceled <- struct{}{}
	}
}

// call GETs url in the background and delivers the result.
func call(url string) <-chan string {
	res := make(chan string, 1)
	go func() {
		resp, err := client.Get(url)
		if err != nil {
			res <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		res <- resp.Status + " " + string(body)
	}()
	return res
}

func TestShutdownLetsRequestsInFlightFinish(t *testing.T) {
	h := newBlocking()
	s := httpserver.New("api", "127.0.0.1:0", h, httpserver.WithShutdownGrace(waitTimeout))
	r := start(t, s)
	res := call("http://" + s.Addr() + "/slow")
	receive(t, h.arrived, "request")

	r.stop()
	// Stopped: no new connection is accepted, while the request in flight
	// goes on with its context alive.
	eventually(t, "listener closed", func() bool {
		c, err := net.Dial("tcp", s.Addr())
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case <-h.canceled:
		t.Fatal("the request's context was cancelled when the server was stopped")
	default:
	}
	close(h.release)
	if got := receive(t, res, "response"); got != "200 OK done" {
		t.Errorf("request in flight got %q, want 200 OK done", got)
	}
	if err := r.wait(); err != nil {
		t.Errorf("Run = %v, want nil", err)
	}
}

func TestShutdownGraceOver(t *testing.T) {
	for _, grace := range []time.Duration{0, 50 * time.Millisecond} {
		t.Run(grace.String(), func(t *testing.T) {
			var logs syncBuffer
			h := newBlocking()
			s := httpserver.New("api", "127.0.0.1:0", h, httpserver.WithShutdownGrace(grace),
				httpserver.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			r := start(t, s)
			res := call("http://" + s.Addr() + "/forever")
			receive(t, h.arrived, "request")

			if err := r.wait(); err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
			receive(t, h.canceled, "the request's context cancelled")
			if got := receive(t, res, "response"); !strings.HasPrefix(got, "error:") {
				t.Errorf("request cut by the shutdown got %q, want an error", got)
			}
			warned := strings.Contains(logs.String(), "shutdown grace over")
			if want := grace > 0; warned != want {
				t.Errorf("logged a warning about the grace: %v, want %v; logs:\n%s", warned, want, logs.String())
			}
		})
	}
}

func TestReadHeaderTimeout(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello), httpserver.WithReadHeaderTimeout(50*time.Millisecond))
	start(t, s)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n"); err != nil { // and never the end of the headers
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
	start := time.Now()
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("reading until the server closes the connection: %v", err)
	}
	if d := time.Since(start); d >= waitTimeout {
		t.Errorf("connection with unfinished headers held %v", d)
	}
}

func TestIdleTimeout(t *testing.T) {
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello), httpserver.WithIdleTimeout(50*time.Millisecond))
	start(t, s)
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitTimeout))
	got, err := io.ReadAll(c) // the response, then EOF once the server closes the idle connection
	if err != nil {
		t.Fatalf("idle keep-alive connection not closed: %v", err)
	}
	if !bytes.Contains(got, []byte("hello /")) {
		t.Errorf("response %q, want hello /", got)
	}
}

func TestLogs(t *testing.T) {
	var logs syncBuffer
	mux := http.NewServeMux()
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("boom") })
	s := httpserver.New("api", "127.0.0.1:0", mux, httpserver.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	r := start(t, s)
	if _, err := client.Get("http://" + s.Addr() + "/panic"); err == nil {
		t.Error("GET /panic succeeded")
	}
	eventually(t, "the panic logged", func() bool { return strings.Contains(logs.String(), "boom") })
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`level=INFO msg=listening runner=api addr=` + s.Addr(),
		`level=ERROR msg="http: panic serving`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
}

func TestNilLoggerMeansDefault(t *testing.T) {
	var logs syncBuffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(hello), httpserver.WithLogger(nil))
	r := start(t, s)
	if err := r.wait(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "msg=listening runner=api") {
		t.Errorf("slog.Default() got %q, want the listening record", logs.String())
	}
}

// The values of Run's context reach the handlers.
func TestRequestContextCarriesRunsValues(t *testing.T) {
	type key struct{}
	got := make(chan any, 1)
	s := httpserver.New("api", "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Context().Value(key{})
	}))
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "from Run"))
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	receive(t, s.Ready(), "ready")
	get(t, "http://"+s.Addr()+"/")
	if v := receive(t, got, "handler"); v != "from Run" {
		t.Errorf("handler saw %v, want the value of Run's context", v)
	}
	cancel()
	if err := receive(t, done, "Run returned"); err != nil {
		t.Error(err)
	}
	client.CloseIdleConnections()
}

// eventually waits, up to waitTimeout, for cond to hold.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still not true after %v: %s", waitTimeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
