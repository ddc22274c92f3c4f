package translator

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Input is a map whose changes Compute watches. Every *watchable.Map
// satisfies it, whatever its key and value types, so inputs of different
// types are passed side by side:
//
//	translator.Compute("routes", routes, build, listeners, backends, policies)
//
// Compute only needs to know when an input changed (see watchable.Map.Notify);
// the computation reads the inputs itself, typed, through their State
// method.
type Input interface {
	Notify(ctx context.Context, ch chan<- struct{})
}

// Compute returns a runner that keeps out equal to the result of fn, and
// computes it again whenever any of the inputs changes.
//
// fn reads the inputs through their State method (an immutable, O(1)
// snapshot of each: m.State()) and returns the complete new contents of out.
// Values reached through a State are shared and must not be mutated; the
// returned map is copied and may be reused by fn afterwards. fn runs on the
// runner's goroutine, one call at a time.
//
// Changes are coalesced: when several inputs change together, or change
// again while fn runs, fn runs once more afterwards, not once per change. The
// result is published with out.Replace, so subscribers of out see only the
// keys whose values changed, in one snapshot, and nothing at all when the
// result is the same.
//
// If fn returns an error or panics, out keeps the last published result, and
// fn runs again on the next change. The failure is reported through
// runner.HealthOf(ctx) under the key "translator " + name, and cleared by
// the next success, so problems that fn reports under keys of its own are
// left alone. The runner is ready once the first
// result has been published. Like Derive, it is the owner of out: do not give
// out another writer.
//
// Run returns nil when ctx is done. Run must not be called again while it is
// running; Name and Ready are safe to call from any goroutine.
func Compute[K comparable, V any](
	name string,
	out *watchable.Map[K, V],
	fn func(ctx context.Context) (map[K]V, error),
	inputs ...Input,
) runner.Runner {
	for i, in := range inputs {
		if in == nil || reflect.ValueOf(in).Kind() == reflect.Pointer && reflect.ValueOf(in).IsNil() {
			panic(fmt.Sprintf("translator.Compute %s: input %d is nil", name, i))
		}
	}
	return &computation[K, V]{name: name, out: out, fn: fn, inputs: inputs, ready: make(chan struct{})}
}

type computation[K comparable, V any] struct {
	name      string
	out       *watchable.Map[K, V]
	fn        func(ctx context.Context) (map[K]V, error)
	inputs    []Input
	ready     chan struct{}
	readyOnce sync.Once
}

// Name returns the name given to Compute.
func (c *computation[K, V]) Name() string { return c.name }

// Ready is closed once the first result has been published.
func (c *computation[K, V]) Ready() <-chan struct{} { return c.ready }

// Run computes until ctx is done, then returns nil.
func (c *computation[K, V]) Run(ctx context.Context) error {
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
		result, err := c.call(ctx)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			failed = true
			health.Report(problemKey(c.name), fmt.Errorf("translator %s: compute: %w", c.name, err))
		default:
			c.out.Replace(result)
			c.readyOnce.Do(func() { close(c.ready) })
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
func (c *computation[K, V]) call(ctx context.Context) (result map[K]V, err error) {
	defer func() {
		if p := recover(); p != nil {
			result, err = nil, fmt.Errorf("%w: %v", ErrPanicked, p)
		}
	}()
	return c.fn(ctx)
}
