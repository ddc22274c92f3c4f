package translator

import (
	"fmt"
	"log/slog"
	"reflect"
)

// Option configures Derive or Group.
type Option func(*config)

type config struct {
	logger  *slog.Logger // nil: slog.Default(), looked up when logging
	onError func(error)

	inputEqual     any // func(a, b V) bool from WithInputEqual, V the input value type
	inputEqualType reflect.Type
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
// record per failed key or conflict, with the keys "runner" (the
// translator's name), "key" and "error", and "stack" for a panic. Without
// it, or with a nil l, they go to slog.Default(): a failing transformation
// is never silent.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// WithErrorHandler calls fn with each failure as it happens: a *KeyError
// when the transformation of one key or group fails or panics, a
// *ConflictError when two input keys of Derive produce the same output key. fn runs on the translator's
// goroutine, so it delays the translation while it runs; it must not block.
func WithErrorHandler(fn func(error)) Option {
	return func(c *config) { c.onError = fn }
}

// WithInputEqual makes the translator ignore a change to an input entry
// when eq reports the new value equal to the previous one. Derive does not
// translate the entry again; Group does not build its group again, unless
// the entry moved to another group (the group's next build sees the newest
// value). Use it when inputs often change in fields the outputs ignore,
// such as a timestamp that heartbeats move: without it, such a change costs
// a transformation whose result equals what is published, which the output
// map then discards.
//
// eq must be an equivalence (reflexive, symmetric, transitive) and must not
// mutate its arguments; it runs on the translator's goroutine, and a panic
// in it counts as a failure of the transformation for that key. V must be
// the input map's value type: Derive and Group panic otherwise.
func WithInputEqual[V any](eq func(a, b V) bool) Option {
	return func(c *config) {
		c.inputEqual = eq
		c.inputEqualType = reflect.TypeFor[V]()
	}
}

// inputEqual returns the function given to WithInputEqual, or nil. It
// panics, naming the translator, if that function is not for values of
// type V.
func inputEqual[V any](c config, constructor, name string) func(a, b V) bool {
	if c.inputEqual == nil {
		return nil
	}
	eq, ok := c.inputEqual.(func(a, b V) bool)
	if !ok {
		panic(fmt.Sprintf("translator.%s %s: WithInputEqual compares %v, but the input values are %v",
			constructor, name, c.inputEqualType, reflect.TypeFor[V]()))
	}
	return eq
}
