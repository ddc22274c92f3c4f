package status

import (
	"log/slog"
	"time"
)

// Option configures a Writer.
type Option func(*config)

type config struct {
	minBackoff, maxBackoff time.Duration
	conflicts              int
	logger                 *slog.Logger
}

func newConfig(opts []Option) config {
	c := config{minBackoff: 200 * time.Millisecond, maxBackoff: 30 * time.Second, conflicts: 5}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// WithBackoff bounds the wait before an object whose update failed (for
// another reason than a conflict) is tried again: about initial the first
// time, twice as long each next time, up to limit (defaults: 200ms and
// 30s). A change of the object or of its desired status tries it again at
// once. Values of zero or less keep the defaults.
func WithBackoff(initial, limit time.Duration) Option {
	return func(c *config) {
		if initial > 0 {
			c.minBackoff = initial
		}
		if limit > 0 {
			c.maxBackoff = limit
		}
		c.maxBackoff = max(c.maxBackoff, c.minBackoff)
	}
}

// WithLogger sends the Writer's records (terms begun and ended, failed
// updates) to l. Without it, or with a nil l, they go to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
