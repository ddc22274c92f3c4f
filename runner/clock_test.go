package runner_test

import (
	"sync"
	"testing"
	"time"
)

// fakeClock is a runner.Clock that only moves when the test advances it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	asked   []time.Duration // every d passed to After, in order
	changed chan struct{}   // closed and replaced when a waiter is added
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), changed: make(chan struct{})}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.asked = append(c.asked, d)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	close(c.changed)
	c.changed = make(chan struct{})
	return ch
}

// Advance moves the clock by d and fires the waiters that are due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// waitFor blocks until a waiter is due within d of now, and fails the test
// after patience.
func (c *fakeClock) waitFor(t *testing.T, d time.Duration, what string) {
	t.Helper()
	deadline := time.After(patience)
	for {
		c.mu.Lock()
		changed := c.changed
		found := false
		for _, w := range c.waiters {
			if !w.at.After(c.now.Add(d)) {
				found = true
			}
		}
		c.mu.Unlock()
		if found {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s: nothing waits on the clock for %v or less", what, d)
		}
	}
}
