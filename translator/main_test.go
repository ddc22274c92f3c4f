package translator_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
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

// waitReady waits until r is ready.
func waitReady(t *testing.T, r runner.Runner) {
	t.Helper()
	select {
	case <-r.(runner.Readier).Ready():
	case <-time.After(waitTimeout):
		t.Fatalf("%s: not ready after %v", r.Name(), waitTimeout)
	}
}

// waitContents waits until m holds exactly want.
func waitContents[K comparable, V any](t *testing.T, m *watchable.Map[K, V], want map[K]V) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := m.State().Map()
		diff := cmp.Diff(want, got)
		if diff == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("map contents (-want +got):\n%s", diff)
		}
		time.Sleep(time.Millisecond)
	}
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
