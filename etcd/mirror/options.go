package mirror

import (
	"log/slog"
	"reflect"
	"time"

	"github.com/switchyard-go/switchyard/etcd/codec"
)

// Option configures a Mirror; see New.
type Option func(*config)

type config struct {
	name       string
	logger     *slog.Logger
	codec      any // a codec.Codec[V], checked by New
	codecOf    string
	minBackoff time.Duration
	maxBackoff time.Duration
}

// WithName sets the runner name of the mirror (default "mirror <prefix>").
func WithName(name string) Option {
	return func(c *config) { c.name = name }
}

// WithLogger sends the mirror's log records (relists, failed watches) to l;
// nil or absent means slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithCodec decodes values with c instead of JSON. Its value type must be
// the mirror's: New panics, naming both types, if it is not.
func WithCodec[V any](c codec.Codec[V]) Option {
	return func(cfg *config) { cfg.codec, cfg.codecOf = c, reflect.TypeFor[V]().String() }
}

// WithBackoff bounds the wait between attempts to list or watch after a
// failure: it starts at lo and doubles up to hi. Without it, 50 ms to 5 s.
func WithBackoff(lo, hi time.Duration) Option {
	return func(c *config) { c.minBackoff, c.maxBackoff = lo, hi }
}
