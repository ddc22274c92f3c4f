package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// target is what an Option applies to.
type target uint8

const (
	forGroup target = 1 << iota
	forLeader
	forShard
	forFanOut
)

// config is what every Option writes; each constructor reads its part.
type config struct {
	log     *slog.Logger
	grace   time.Duration
	clock   Clock
	backoff [2]time.Duration // min, max; zero: defaults
	balance Balance
	// restricted lists the options given that apply to some constructors
	// only, for newConfig to refuse where they do not.
	restricted []restricted
}

type restricted struct {
	name string
	to   target
}

// given records that the option name, which applies to to only, was given.
func (c *config) given(name string, to target) {
	c.restricted = append(c.restricted, restricted{name, to})
}

// newConfig applies opts for the constructor ctor, which is a t, and
// panics naming the options that do not apply to it.
func newConfig(ctor string, t target, opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	var refused []string
	for _, r := range c.restricted {
		if r.to&t == 0 {
			refused = append(refused, "runner."+r.name)
		}
	}
	if len(refused) > 0 {
		panic(fmt.Sprintf("%s: %s: does not apply here (see the option's documentation)", ctor, strings.Join(refused, ", ")))
	}
	return c
}

// logger returns the configured logger, or else the logger of the group
// whose runner received ctx, or else slog.Default().
func (c *config) logger(ctx context.Context) *slog.Logger {
	if c.log != nil {
		return c.log
	}
	if m, ok := ctx.Value(memberKey{}).(*member); ok && m.g.log != nil {
		return m.g.log
	}
	return slog.Default()
}

// Defaults of the options of LeaderOnly and Shard.
const (
	// DefaultBackoffMin and DefaultBackoffMax bound the wait after a
	// failure; see WithBackoff.
	DefaultBackoffMin = 100 * time.Millisecond
	DefaultBackoffMax = 10 * time.Second
)

// WithClock makes LeaderOnly, Shard or FanOut wait on c (delays before claims,
// backoffs after failures) and take the times they publish from it.
// Without it, or with a nil c, they use the system's clock. Tests give a
// clock they advance by hand.
//
// It applies to LeaderOnly, Shard and FanOut; NewGroup panics when given
// it.
func WithClock(c Clock) Option {
	return func(cfg *config) {
		cfg.clock = c
		cfg.given("WithClock", forLeader|forShard|forFanOut)
	}
}

// WithBackoff sets how long LeaderOnly, Shard or FanOut wait before trying
// again after a failure (the engine cannot be reached; the runner or a
// handler failed): min after the first failure, doubling with each failure in a
// row up to max. Zero or less keeps the default (DefaultBackoffMin,
// DefaultBackoffMax).
//
// It applies to LeaderOnly, Shard and FanOut; NewGroup panics when given
// it.
func WithBackoff(min, max time.Duration) Option {
	return func(c *config) {
		c.backoff = [2]time.Duration{min, max}
		c.given("WithBackoff", forLeader|forShard|forFanOut)
	}
}

// backoff is a failure count and the waits it means.
type backoff struct {
	min, max time.Duration
	failures int
}

func (c *config) newBackoff() backoff {
	b := backoff{min: c.backoff[0], max: c.backoff[1]}
	if b.min <= 0 {
		b.min = DefaultBackoffMin
	}
	if b.max <= 0 {
		b.max = DefaultBackoffMax
	}
	b.max = max(b.max, b.min)
	return b
}

// next counts a failure and returns how long to wait before trying again.
func (b *backoff) next() time.Duration {
	d := b.min
	for i := 0; i < b.failures && d < b.max; i++ {
		d *= 2
	}
	b.failures++
	return min(d, b.max)
}

func (b *backoff) reset() { b.failures = 0 }
