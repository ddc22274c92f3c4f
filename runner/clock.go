package runner

import (
	"context"
	"time"
)

// Clock is the time of LeaderOnly and Shard: what they wait on between
// attempts, and what the times they publish come from. The system's clock
// is the default; see WithClock.
//
// Engines keep their own time for leases: a Clock paces decisions, it does
// not decide when a term expires.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once d has passed;
	// at once for d <= 0.
	After(d time.Duration) <-chan time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (c *config) clockOrSystem() Clock {
	if c.clock != nil {
		return c.clock
	}
	return systemClock{}
}

// sleep waits d on clock, and reports false if ctx ended first.
func sleep(ctx context.Context, clock Clock, d time.Duration) bool {
	select {
	case <-clock.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}
