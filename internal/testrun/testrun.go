// Package testrun is what tests share to run components and wait for
// conditions: a runner run until the test ends, a wait for a map's state
// driven by its subscription, a bounded wait for anything else. Every wait is
// bounded by Timeout, generous because CI runs everything with -race on two
// busy cores.
package testrun

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Timeout bounds every wait of this package.
const Timeout = 90 * time.Second

// Quiet is a logger for tests that do not read the logs.
var Quiet = slog.New(slog.DiscardHandler)

// Context returns a context that ends when the test ends or after d.
func Context(tb testing.TB, d time.Duration) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	tb.Cleanup(cancel)
	return ctx
}

// Run runs r on its own goroutine until the test ends: then it cancels r's
// context and fails the test if Run returns an error or does not return
// within Timeout. It returns a function that stops r early, with the same
// checks, and may be called more than once.
func Run(tb testing.TB, r runner.Runner) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("%s: Run returned %v, want nil", r.Name(), err)
			}
		case <-time.After(Timeout):
			tb.Errorf("%s: Run did not return within %v of its cancellation", r.Name(), Timeout)
		}
	}
	tb.Cleanup(stop)
	return stop
}

// Group runs runners in a runner group until the test ends, and returns the
// group, whose Status the test may watch.
func Group(tb testing.TB, runners ...runner.Runner) *runner.Group {
	tb.Helper()
	g := runner.NewGroup(runner.WithLogger(Quiet))
	Run(tb, runner.Func("group", func(ctx context.Context) error { return g.Run(ctx, runners...) }))
	return g
}

// Closed waits until ch is closed.
func Closed(tb testing.TB, ch <-chan struct{}, what string) {
	tb.Helper()
	select {
	case <-ch:
	case <-time.After(Timeout):
		tb.Fatalf("%s: not after %v", what, Timeout)
	}
}

// Until polls cond until it returns "" and fails the test with its last
// answer after Timeout. Use it for what cannot be subscribed to, such as an
// API server; State waits on a map without polling.
func Until(tb testing.TB, cond func() string) {
	tb.Helper()
	deadline := time.Now().Add(Timeout)
	for delay := time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatal(why)
		}
		time.Sleep(delay)
	}
}

// State waits until cond, called with each state v's subscription delivers,
// returns "", and returns that state; it fails the test with cond's last
// answer after Timeout.
func State[K comparable, V any](tb testing.TB, v watchable.View[K, V], cond func(watchable.State[K, V]) string) watchable.State[K, V] {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	why := "no snapshot"
	for s := range v.Subscribe(ctx) {
		if why = cond(s.State); why == "" {
			return s.State
		}
	}
	tb.Fatalf("not after %v: %s", Timeout, why)
	return watchable.State[K, V]{}
}
