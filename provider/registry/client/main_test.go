package client_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	testToken = "client-test-token-5f2a9c"
	// waitFor is generous: the tests run with -race on busy machines. It
	// bounds waits, never what a test asserts about speed.
	waitFor = 30 * time.Second
)

// fast is the backoff of the tests: retries within tens of milliseconds.
var fast = client.WithBackoff(client.Backoff{Initial: 10 * time.Millisecond, Max: 100 * time.Millisecond})

// controller is a registry served on a loopback port, which a test can
// stop and start again on the same port, as a restarted process would.
type controller struct {
	t    testing.TB
	addr string
	opts []registry.Option // of every start
	logs *syncBuffer
	// prepare, if set, runs on each new registry once it runs and before
	// it serves: what the restarted process knows before clients reach it.
	prepare func(*registry.Registry)

	mu     sync.Mutex
	reg    *registry.Registry
	cancel context.CancelFunc
	done   chan error
}

// startController serves a new registry on addr ("127.0.0.1:0" for any
// free port) until the test ends.
func startController(t testing.TB, addr string, opts ...registry.Option) *controller {
	t.Helper()
	c := &controller{t: t, addr: addr, opts: opts, logs: &syncBuffer{}}
	c.start()
	t.Cleanup(c.stop)
	return c
}

func (c *controller) start() {
	c.t.Helper()
	var ln net.Listener
	var err error
	// The port was ours a moment ago; on a busy machine binding it again
	// can take a few tries.
	for deadline := time.Now().Add(waitFor); ; time.Sleep(10 * time.Millisecond) {
		if ln, err = net.Listen("tcp", c.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		c.t.Fatalf("listen on %s: %v", c.addr, err)
	}
	c.addr = ln.Addr().String()
	opts := append([]registry.Option{registry.WithToken(testToken), registry.WithLease(time.Minute),
		registry.WithLogger(slog.New(slog.NewTextHandler(c.logs, &slog.HandlerOptions{Level: slog.LevelDebug})))}, c.opts...)
	reg, err := registry.New(opts...)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveRegistry(ctx, ln, reg, c.prepare) }()
	select {
	case <-reg.Ready():
	case err := <-done:
		c.t.Fatalf("controller stopped at once: %v", err)
	case <-time.After(waitFor):
		c.t.Fatal("controller not ready")
	}
	c.mu.Lock()
	c.reg, c.cancel, c.done = reg, cancel, done
	c.mu.Unlock()
}

// stop stops the controller: its sockets close, its port is free.
func (c *controller) stop() {
	c.mu.Lock()
	cancel, done := c.cancel, c.done
	c.cancel = nil
	c.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	if err := <-done; err != nil {
		c.t.Errorf("controller: %v", err)
	}
}

// restart stops the controller and starts a new, empty one on its port.
func (c *controller) restart() {
	c.t.Helper()
	c.stop()
	c.start()
}

func (c *controller) registry() *registry.Registry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reg
}

func (c *controller) url() string { return "http://" + c.addr }

// freeAddr returns a loopback address where nothing listens.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// run runs r until the test ends and checks that it returned nil; it
// returns a function that stops it early.
func run(t testing.TB, r interface {
	Run(context.Context) error
}) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run: %v", err)
				}
			case <-time.After(waitFor):
				t.Errorf("Run did not return %v after its context ended", waitFor)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// waitReady waits for ready to close.
func waitReady(t testing.TB, what string, ready <-chan struct{}) {
	t.Helper()
	select {
	case <-ready:
	case <-time.After(waitFor):
		t.Fatalf("%s not ready after %v", what, waitFor)
	}
}

// waitState waits until cond holds for the state of m.
func waitState[K comparable, V any](t testing.TB, m watchable.View[K, V], what string, cond func(watchable.State[K, V]) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for snap := range m.Subscribe(ctx) {
		if cond(snap.State) {
			return
		}
	}
	t.Fatalf("timed out waiting until %s; state: %v", what, m.LoadAll())
}

// eventually waits, polling, until cond holds: for what no map shows.
// explain, if given, says what holds instead when it times out.
func eventually(t testing.TB, what string, cond func() bool, explain ...func() string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			for _, e := range explain {
				what += "; " + e()
			}
			t.Fatalf("still not true after %v: %s", waitFor, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncBuffer collects log records written from several goroutines.
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

// logger returns a logger writing every record, debug included, to buf.
func logger(buf *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// serviceState returns the snapshots of service in st.
func serviceState(st watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot], service string) map[registry.DiscoveryKey]*registry.DiscoverySnapshot {
	out := map[registry.DiscoveryKey]*registry.DiscoverySnapshot{}
	for k, s := range st.All() {
		if k.ServiceID == service {
			out[k] = s
		}
	}
	return out
}

func isDisconnected(err error) bool { return errors.Is(err, client.ErrDisconnected) }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// serveRegistry runs reg and serves its handler on ln until ctx is done,
// calling prepare, if not nil, between the start of the registry and the
// first request served. (registry.ListenAndServe takes an address; the
// tests hold the listener, to restart on the same port.)
func serveRegistry(ctx context.Context, ln net.Listener, reg *registry.Registry, prepare func(*registry.Registry)) error {
	runDone := make(chan error, 1)
	go func() { runDone <- reg.Run(ctx) }()
	select {
	case <-reg.Ready():
	case err := <-runDone:
		ln.Close()
		return err
	}
	if prepare != nil {
		prepare(reg)
	}
	srv := &http.Server{Handler: reg.Handler(), ReadHeaderTimeout: 10 * time.Second}
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-serveDone; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return errors.Join(err, <-runDone)
}

// quiet sends a client's records to the test's log, shown when it fails
// or runs with -v.
func quiet(t testing.TB) client.Option {
	return client.WithLogger(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// register registers r in reg and waits until reg's Snapshots show it:
// they are derived from the instances a moment later, and a subscription
// started before then would first see the snapshot without it.
func register(t testing.TB, reg *registry.Registry, r registry.Registration) string {
	t.Helper()
	id, err := reg.Register(r)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, reg.Snapshots(), "instance "+id+" in the snapshots", func(st watchable.State[registry.DiscoveryKey, *registry.DiscoverySnapshot]) bool {
		s, ok := st.Get(registry.DiscoveryKey{ServiceID: r.ServiceID, EnvTag: r.EnvTag, Protocol: r.Protocol})
		return ok && slices.ContainsFunc(s.Nodes, func(n registry.Instance) bool { return n.RuntimeInstanceID == id })
	})
	return id
}
