package translator

import "log/slog"

// Option configures Derive, GroupBy or Compute.
type Option func(*config)

type config struct {
	logger  *slog.Logger // nil: slog.Default(), looked up when logging
	onError func(error)
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// log returns the logger failures go to.
func (c *config) log() *slog.Logger {
	if c.logger != nil {
		return c.logger
	}
	return slog.Default()
}

// WithLogger sends the records of failures of the transformation to l: one
// record per failed key, group, conflict or computation, with the keys
// "runner" (the translator's name), "key" (where there is one) and "error",
// and "stack" for a panic. Without it, or with a nil l, they go to
// slog.Default(): a failing transformation is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithErrorHandler calls fn with each failure as it happens: a *KeyError
// when the transformation of one key or group fails or panics, a
// *ConflictError when two input keys of Derive produce the same output key,
// and for Compute the error of a failed computation. fn runs on the
// translator's goroutine, so it delays the translation while it runs; it
// must not block. Failures are logged whether or not fn is given.
func WithErrorHandler(fn func(error)) Option {
	return func(c *config) { c.onError = fn }
}
