package sink

import (
	"log/slog"
	"reflect"
	"time"

	"github.com/switchyard-go/switchyard/etcd/codec"
)

// Option configures a Sink; see New.
type Option func(*config)

type config struct {
	name       string
	logger     *slog.Logger
	codec      any // a codec.Codec[V], checked by New
	codecOf    string
	ttl        time.Duration
	minBackoff time.Duration
	maxBackoff time.Duration
	maxOps     int
}

// DefaultTTL is the lease TTL without WithTTL.
const DefaultTTL = 10 * time.Second

// WithName sets the runner name of the sink (default "sink <prefix>").
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithLogger sends the sink's log records (lease lost and granted, failed
// writes) to l; nil or absent means slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithCodec encodes values with c instead of JSON. Its value type must be
// the sink's: New panics, naming both types, if it is not.
func WithCodec[V any](c codec.Codec[V]) Option {
	return func(cfg *config) { cfg.codec, cfg.codecOf = c, reflect.TypeFor[V]().String() }
}

// WithTTL sets the lease's time to live: how long the keys outlive a writer
// that died, and how long etcd may be unreachable before the lease is lost.
// etcd counts whole seconds: d is rounded up, and etcd raises a TTL below
// its minimum (about 2 s with default settings). Without it, DefaultTTL.
func WithTTL(d time.Duration) Option {
	return func(c *config) { c.ttl = d }
}

// WithBackoff bounds the wait between attempts after a failure: it starts
// at lo and doubles up to hi. Without it, 50 ms to 2 s.
func WithBackoff(lo, hi time.Duration) Option {
	return func(c *config) { c.minBackoff, c.maxBackoff = lo, hi }
}

// WithMaxOps bounds the keys written by one etcd transaction (etcd's
// --max-txn-ops, 128 by default, bounds it from above). Without it, 64.
func WithMaxOps(n int) Option {
	return func(c *config) { c.maxOps = n }
}
