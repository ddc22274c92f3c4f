package etcdtest

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// WaitTimeout bounds every wait of these helpers: generous, since CI runs
// the tests with -race on two busy cores.
const WaitTimeout = 30 * time.Second

// Run runs runners in a runner group until the test ends; the cleanup
// cancels the group and fails the test if Run returns an error. The group
// is returned for its Status (the problems runners report).
func Run(tb testing.TB, runners ...runner.Runner) *runner.Group {
	tb.Helper()
	g := runner.NewGroup(runner.WithLogger(Logger(tb)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, runners...) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("runner group: %v", err)
		}
	})
	return g
}

// WaitFor waits, on a subscription, until cond returns "" for the state of
// v, and returns that state. cond says what is still missing otherwise; the
// test fails with its last answer after WaitTimeout.
func WaitFor[K comparable, V any](tb testing.TB, v watchable.View[K, V], cond func(watchable.State[K, V]) string) watchable.State[K, V] {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	defer cancel()
	why := "no snapshot received"
	for snap := range v.Subscribe(ctx) {
		if why = cond(snap.State); why == "" {
			return snap.State
		}
	}
	tb.Fatalf("after %v: %s", WaitTimeout, why)
	return watchable.State[K, V]{}
}

// Problems returns the problems a runner of g reports, keyed as reported.
func Problems(g *runner.Group, name string) map[string]string {
	st, _ := g.Status().Load(name)
	return st.Problems
}

// Until polls cond every 10 ms until it returns "", for conditions no map
// announces (a lease lost, a process gone); cond says what is still missing
// otherwise, and the test fails with its last answer after WaitTimeout.
func Until(tb testing.TB, cond func() string) {
	tb.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("after %v: %s", WaitTimeout, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
