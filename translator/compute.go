package translator

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Input is a map whose changes Compute watches. Every *watchable.Map and
// every watchable.View satisfies it, whatever its key and value types, so
// inputs of different types are passed side by side:
//
//	translator.Compute("routes", []translator.Input{listeners, backends.View(), policies}, build)
//
// Compute only needs to know when an input is initialized and when it
// changed (see watchable.Map.Notify); the computation reads the inputs
// itself, typed, through their State method.
type Input interface {
	Notify(ctx context.Context, ch chan<- struct{})
	Initialized() <-chan struct{}
}

// Compute returns a translator that keeps its output map equal to the
// result of fn, and computes it again whenever any of the inputs changes.
// The translator creates the output and is its only writer; Output returns
// a read-only view of it, available at once, so consumers can be wired (and
// can subscribe) before Run.
//
// fn reads the inputs through their State method (an immutable, O(1)
// snapshot of each: m.State()) and returns the complete new contents of the
// output. Values reached through a State are shared and must not be
// mutated; the returned map is copied and may be reused by fn afterwards. fn
// runs on Run's goroutine, one call at a time, with Run's ctx.
//
// fn never runs before every input is initialized (see
// watchable.Map.RegisterInitializer): Run first waits for them all, so fn
// never computes from a partial picture, and the changes made to inputs
// while it waits cost nothing. Then fn runs once, and again after changes.
// Changes are coalesced: when several inputs change together, or change
// again while fn runs, fn runs once more afterwards, not once per change.
// The result is published with Replace, so subscribers of the output see
// only the keys whose values changed, in one snapshot, and nothing at all
// when the result is the same.
//
// The output is initialized, and Ready closed, once the first result of fn
// (necessarily computed from initialized inputs) has been published.
//
// If fn returns an error or panics, the output keeps the last published
// result and fn runs again on the next change. The failure is reported
// through runner.HealthOf(ctx) under the key "translator " + name, and
// cleared by the next success, so problems that fn reports under keys of
// its own are left alone; it is also logged (see WithLogger) and passed to
// WithErrorHandler.
//
// Compute panics, naming the input by its index, if an input is nil (or a
// nil *watchable.Map, or a zero watchable.View).
func Compute[K comparable, V any](
	name string,
	inputs []Input,
	fn func(ctx context.Context) (map[K]V, error),
	opts ...Option,
) *Computation[K, V] {
	for i, in := range inputs {
		checkInput(fmt.Sprintf("translator.Compute %s: input %d", name, i), in)
	}
	c := &Computation[K, V]{name: name, inputs: inputs, fn: fn, cfg: newConfig(opts)}
	c.initialized = c.out.RegisterInitializer(name)
	return c
}

// Computation is the translator Compute returns: a runner.Runner and a
// runner.Readier. Name, Ready and Output are safe to call from any
// goroutine, at any time. Run may be called again after it has returned,
// not while it runs.
type Computation[K comparable, V any] struct {
	name        string
	inputs      []Input
	out         watchable.Map[K, V]
	initialized func() // the output's initializer
	fn          func(ctx context.Context) (map[K]V, error)
	cfg         config
	guard       runGuard
}

// Name returns the name given to Compute.
func (c *Computation[K, V]) Name() string { return c.name }

// Output returns the read-only view of the map the translator writes.
func (c *Computation[K, V]) Output() watchable.View[K, V] { return c.out.View() }

// Ready returns the output's Initialized channel: it is closed once the
// first result has been published (see Compute), and stays closed.
func (c *Computation[K, V]) Ready() <-chan struct{} { return c.out.Initialized() }

// Run computes until ctx is done, then returns nil. Run panics if it is
// running already.
func (c *Computation[K, V]) Run(ctx context.Context) error {
	c.guard.start("translator.Computation "+c.name, func() {})
	defer c.guard.stop()

	// Wait for every input to be initialized before watching them: a map
	// closes its Initialized channel and then, under the same lock that
	// Notify takes, signals its Notify channels. Registering with Notify
	// only afterwards keeps that signal from causing a second computation
	// right after the first (another Input may cost one, which is
	// harmless); writes made in between are read by fn anyway.
	for _, in := range c.inputs {
		select {
		case <-ctx.Done():
			return nil
		case <-in.Initialized():
		}
	}
	// One channel with room for one signal, shared by all inputs: any
	// number of changes across them while fn runs leave one signal, so a
	// burst becomes one more computation.
	changed := make(chan struct{}, 1)
	for _, in := range c.inputs {
		in.Notify(ctx, changed)
	}

	health := runner.HealthOf(ctx)
	failed := false
	for {
		result, stack, err := c.call(ctx)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil // cut short by the end of Run, not a failure
			}
			failed = true
			err = fmt.Errorf("translator %s: compute: %w", c.name, err)
			health.Report(problemKey(c.name), err)
			if stack != nil {
				c.cfg.log().Error("computation panicked", "runner", c.name, "error", err, "stack", string(stack))
			} else {
				c.cfg.log().Warn("computation failed", "runner", c.name, "error", err)
			}
			if c.cfg.onError != nil {
				c.cfg.onError(err)
			}
		default:
			c.out.Replace(result)
			c.initialized()
			if failed {
				failed = false
				health.Report(problemKey(c.name), nil)
			}
		}
		// Wait for the next change.
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

// call runs fn, turning a panic into an error.
func (c *Computation[K, V]) call(ctx context.Context) (result map[K]V, stack []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, stack, err = nil, debug.Stack(), fmt.Errorf("%w: %v", ErrPanicked, p)
		}
	}()
	result, err = c.fn(ctx)
	return result, nil, err
}
