package lease

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"
)

// Timing is how long Leases last and how often they are renewed. The
// defaults are client-go leaderelection's.
type Timing struct {
	// LeaseDuration is how long the others wait, after they last saw a
	// Lease change, before they take it over. Whole seconds, at least one
	// (Leases count in seconds). Default 15s.
	LeaseDuration time.Duration
	// RenewDeadline is how long a holder keeps a term after sending a
	// renewal that has not succeeded: then the term ends (Done), before
	// LeaseDuration could pass for the others. Default 10s.
	RenewDeadline time.Duration
	// RetryPeriod is how often a holder renews, and how often a failed
	// renewal is tried again. Default 2s.
	RetryPeriod time.Duration
}

// DefaultTiming is the Timing used unless WithTiming says otherwise.
var DefaultTiming = Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

func (t Timing) check() error {
	switch {
	case t.LeaseDuration < time.Second || t.LeaseDuration%time.Second != 0:
		return fmt.Errorf("Timing.LeaseDuration %v: want whole seconds, at least 1s", t.LeaseDuration)
	case t.RenewDeadline <= 0 || t.RenewDeadline >= t.LeaseDuration:
		return fmt.Errorf("Timing.RenewDeadline %v: want more than 0 and less than LeaseDuration %v", t.RenewDeadline, t.LeaseDuration)
	case t.RetryPeriod <= 0 || t.RetryPeriod >= t.RenewDeadline:
		return fmt.Errorf("Timing.RetryPeriod %v: want more than 0 and less than RenewDeadline %v", t.RetryPeriod, t.RenewDeadline)
	}
	return nil
}

// Option configures NewElector and NewShardEngine.
type Option func(*config)

type config struct {
	identity string
	timing   Timing
	logger   *slog.Logger
}

func newConfig(opts []Option) (config, error) {
	c := config{timing: DefaultTiming}
	for _, o := range opts {
		o(&c)
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.identity == "" {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "process"
		}
		c.identity = host + "-" + nonce()
	}
	return c, c.timing.check()
}

// WithIdentity sets who this process is in the Leases' holderIdentity
// (an election) or in member names (a sharding group). It must be unique
// among the processes that run together: in a pod, its name. The default
// is the host name followed by a random suffix.
func WithIdentity(id string) Option {
	return func(c *config) { c.identity = id }
}

// WithTiming sets the Lease timing; see Timing. Zero fields keep the
// defaults. NewElector and NewShardEngine fail if the result is not
// consistent (RetryPeriod < RenewDeadline < LeaseDuration).
func WithTiming(t Timing) Option {
	return func(c *config) {
		if t.LeaseDuration > 0 {
			c.timing.LeaseDuration = t.LeaseDuration
		}
		if t.RenewDeadline > 0 {
			c.timing.RenewDeadline = t.RenewDeadline
		}
		if t.RetryPeriod > 0 {
			c.timing.RetryPeriod = t.RetryPeriod
		}
	}
}

// WithLogger sends the records (terms won and lost, renewals that failed)
// to l. Without it, or with a nil l, they go to slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

func nonce() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
