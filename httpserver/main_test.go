package httpserver_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/runner"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// A Server is a runner with readiness, without type assertions.
var _ interface {
	runner.Runner
	runner.Readier
} = (*httpserver.Server)(nil)

// waitTimeout is generous: CI runs everything with -race on two busy cores.
const waitTimeout = 20 * time.Second

// running is a server running in a test.
type running struct {
	t    *testing.T
	srv  *httpserver.Server
	stop context.CancelFunc
	done chan error
}

// start runs s until stopped, or until the test ends, when it checks that
// Run returned nil; it waits until s is ready.
func start(t *testing.T, s *httpserver.Server) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, srv: s, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	t.Cleanup(func() {
		if err := r.wait(); err != nil {
			t.Errorf("%s: Run returned %v, want nil", s.Name(), err)
		}
	})
	select {
	case <-s.Ready():
	case err := <-r.done:
		t.Fatalf("%s: Run returned %v before it was ready", s.Name(), err)
	case <-time.After(waitTimeout):
		t.Fatalf("%s: not ready after %v", s.Name(), waitTimeout)
	}
	return r
}

// wait stops the server and returns what Run returned; it may be called
// more than once.
func (r *running) wait() error {
	r.t.Helper()
	r.stop()
	select {
	case err := <-r.done:
		r.done <- err // for the next call
		return err
	case <-time.After(waitTimeout):
		r.t.Fatalf("%s: Run did not return %v after it was stopped", r.srv.Name(), waitTimeout)
		return nil
	}
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("%s: nothing after %v", what, waitTimeout)
		panic("unreachable")
	}
}
