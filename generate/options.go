package generate

import (
	"log/slog"
)

// Option configures New.
type Option func(*config)

type config struct {
	generators map[string]Generator
	dups       []string // modules registered more than once, for New's panic
	logger     *slog.Logger
	onError    func(error)
}

// WithGenerator registers g as the generator of the accessories named
// module. New panics if module is empty, is WorkloadModule, or is
// registered twice, or if g is nil.
func WithGenerator(module string, g Generator) Option {
	return func(c *config) {
		if c.generators == nil {
			c.generators = make(map[string]Generator)
		}
		if _, dup := c.generators[module]; dup {
			c.dups = append(c.dups, module)
		}
		c.generators[module] = g
	}
}

// WithLogger sends the records of failed applications to l, with the keys
// "runner" (the translator's name), "key" (the application's key) and
// "error", and "stack" for a panic. Without it, or with a nil l, they go to
// slog.Default(): a failing application is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithErrorHandler calls fn with each failure as it happens: a
// *translator.KeyError whose Key is the application's key and whose Err
// says why (see the sentinel errors, *GeneratorError and *ConflictError).
// fn runs on the translator's goroutine and must not block. Failures are
// logged whether or not fn is given.
func WithErrorHandler(fn func(error)) Option {
	return func(c *config) { c.onError = fn }
}
