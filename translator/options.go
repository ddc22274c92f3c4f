package translator

import (
	"log/slog"
)

// Option configures Derive.
type Option func(*config)

type config struct {
	logger  *slog.Logger
	onError func(error)
}

func newConfig(opts []Option) config {
	c := config{logger: slog.New(slog.DiscardHandler)}
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
