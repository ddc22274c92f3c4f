package translator_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// Every translator is a runner with readiness, without type assertions.
var (
	_ readyRunner = (*translator.Derivation[string, int, string, int])(nil)
	_ readyRunner = (*translator.Grouping[string, int, string, int])(nil)
	_ readyRunner = (*translator.Computation[string, int])(nil)
)

type readyRunner interface {
	runner.Runner
	runner.Readier
}

// waitTimeout is generous: CI runs everything with -race on two busy cores.
const waitTimeout = 20 * time.Second

// start runs r until the test ends, and fails the test if Run returns an
// error or does not return once its context is cancelled.
func start(t *testing.T, r runner.Runner) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: Run returned %v, want nil", r.Name(), err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("%s: Run did not return after cancel", r.Name())
		}
	})
}

// startGroup runs runners in a runner group until the test ends, waits
// until the group is ready, and returns it.
func startGroup(t *testing.T, runners ...runner.Runner) *runner.Group {
	t.Helper()
	g := runner.NewGroup()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, runners...) }()
	t.Cleanup(func() {
		cancel()
		if err := receive(t, done); err != nil {
			t.Errorf("group returned %v", err)
		}
	})
	receive(t, g.Ready())
	return g
}

// waitReady waits until r is ready.
func waitReady(t *testing.T, r readyRunner) {
	t.Helper()
	select {
	case <-r.Ready():
	case <-time.After(waitTimeout):
		t.Fatalf("%s: not ready after %v", r.Name(), waitTimeout)
	}
}

// isReady reports whether r is ready now.
func isReady(r runner.Readier) bool {
	select {
	case <-r.Ready():
		return true
	default:
		return false
	}
}

// waitState waits, through a subscription, until m's contents satisfy
// cond, and fails the test saying what was awaited and what m held last
// if they do not within waitTimeout.
func waitState[K comparable, V any](t *testing.T, m watchable.View[K, V], cond func(watchable.State[K, V]) bool, format string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var last watchable.State[K, V]
	for snap := range m.Subscribe(ctx) {
		if cond(snap.State) {
			return
		}
		last = snap.State
	}
	t.Fatalf("waited %v for %s; last contents: %v", waitTimeout, fmt.Sprintf(format, args...), last.Map())
}

// waitContents waits until m holds exactly want.
func waitContents[K comparable, V any](t *testing.T, m watchable.View[K, V], want map[K]V) {
	t.Helper()
	waitState(t, m, func(s watchable.State[K, V]) bool { return cmp.Diff(want, s.Map()) == "" },
		"the contents %v", want)
}

// waitProblems waits until the runner named name in g's status has exactly
// the problems want (by key; a problem's text must contain the wanted text).
func waitProblems(t *testing.T, g *runner.Group, name string, want map[string]string) {
	t.Helper()
	waitState(t, g.Status(), func(s watchable.State[string, runner.Status]) bool {
		st, _ := s.Get(name)
		if len(st.Problems) != len(want) {
			return false
		}
		for k, text := range want {
			got, ok := st.Problems[k]
			if !ok || !strings.Contains(got, text) {
				return false
			}
		}
		return true
	}, "the problems of %s to be %q", name, want)
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("nothing received after %v", waitTimeout)
		panic("unreachable")
	}
}

// counter counts calls per key; safe for concurrent use.
type counter[K comparable] struct {
	mu sync.Mutex
	n  map[K]int
}

func (c *counter[K]) add(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[K]int)
	}
	c.n[k]++
}

// take returns the counts so far and starts again from zero.
func (c *counter[K]) take() map[K]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = nil
	return n
}
