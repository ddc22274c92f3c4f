package translator

import (
	"io"
	"log/slog"
	"reflect"
)

// Option configures Derive or Group.
type Option func(*config)

type config struct {
	logger  *slog.Logger
	onError func(error)

	inputEqual     any // func(a, b V) bool for Group's V1, from WithInputEqual
	inputEqualType reflect.Type
}

func newConfig(opts []Option) config {
	c := config{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithLogger logs failures of the transformation (one record per failed key
// or conflict, with keys "runner", "key" and "error") to l. By default
// nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithErrorHandler calls fn with each failure as it happens: a *KeyError
// when the transformation of one key fails or panics, a *ConflictError when
// two input keys produce the same output key. fn runs on the translator's
// goroutine, so it delays the translation while it runs; it must not block.
func WithErrorHandler(fn func(error)) Option {
	return func(c *config) { c.onError = fn }
}

// WithInputEqual makes Group ignore a change to an input entry when eq
// reports the new value equal to the previous one and the entry stays in
// its group: the group is not built again for it (its next build sees the
// newest value). eq must be an equivalence (reflexive, symmetric,
// transitive) and must not mutate its arguments; it runs on the
// translator's goroutine. Use it when inputs often change in fields the
// output ignores, such as a timestamp moved by heartbeats.
//
// V must be Group's input value type: Group panics otherwise. Derive
// ignores this option.
func WithInputEqual[V any](eq func(a, b V) bool) Option {
	return func(c *config) {
		c.inputEqual = eq
		c.inputEqualType = reflect.TypeFor[V]()
	}
}
