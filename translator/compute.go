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
// Compute only needs to know when an input changed; the computation reads
// the inputs itself, typed, through their State method. Input asks for
// Revision so that the compiler accepts watchable maps and rejects most
// other values; Compute then subscribes through the value's
// Subscribe(context.Context) <-chan T method, which every *watchable.Map has,
// and panics if the value has none.
type Input interface {
	Revision() uint64
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
// If fn returns an error or panics, out keeps the last published result, the
// error is reported with runner.Report (and cleared on the next success),
// and fn runs again on the next change. The runner is ready once the first
// result has been published. Like Derive, it is the owner of out: do not give
// out another writer.
//
// Run returns nil when ctx is done. Run must not be called again while it is
// running.
func Compute[K comparable, V any](
	name string,
	out *watchable.Map[K, V],
	fn func(ctx context.Context) (map[K]V, error),
	inputs ...Input,
) runner.Runner {
	subs := make([]reflect.Value, len(inputs))
	for i, in := range inputs {
		subs[i] = subscribeMethod(name, i, in)
	}
	return &computation[K, V]{name: name, out: out, fn: fn, subs: subs, ready: make(chan struct{})}
}

var contextType = reflect.TypeFor[context.Context]()

// subscribeMethod returns in's Subscribe method, checking that it has the
// shape of watchable.Map's.
func subscribeMethod(name string, i int, in Input) reflect.Value {
	v := reflect.ValueOf(in)
	if in == nil || (v.Kind() == reflect.Pointer && v.IsNil()) {
		panic(fmt.Sprintf("translator.Compute %s: input %d is nil", name, i))
	}
	m := v.MethodByName("Subscribe")
	if !m.IsValid() {
		panic(fmt.Sprintf("translator.Compute %s: input %d (%T) has no Subscribe method", name, i, in))
	}
	t := m.Type()
	if t.NumIn() != 1 || t.In(0) != contextType || t.NumOut() != 1 ||
		t.Out(0).Kind() != reflect.Chan || t.Out(0).ChanDir()&reflect.RecvDir == 0 {
		panic(fmt.Sprintf("translator.Compute %s: input %d (%T): Subscribe is %v, want func(context.Context) <-chan T", name, i, in, t))
	}
	return m
}

type computation[K comparable, V any] struct {
	name      string
	out       *watchable.Map[K, V]
	fn        func(ctx context.Context) (map[K]V, error)
	subs      []reflect.Value // the inputs' Subscribe methods
	ready     chan struct{}
	readyOnce sync.Once
}

// Name returns the name given to Compute.
func (c *computation[K, V]) Name() string { return c.name }

// Ready is closed once the first result has been published.
func (c *computation[K, V]) Ready() <-chan struct{} { return c.ready }

// Run computes until ctx is done, then returns nil.
func (c *computation[K, V]) Run(ctx context.Context) error {
	// cases[0] is ctx, then one per input, and a default case at the end
	// for draining without blocking. A closed input's case gets a zero Chan,
	// which Select ignores.
	n := len(c.subs) + 1
	cases := make([]reflect.SelectCase, n+1)
	cases[0] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())}
	for i, sub := range c.subs {
		ch := sub.Call([]reflect.Value{reflect.ValueOf(ctx)})[0]
		cases[i+1] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: ch}
	}
	cases[n] = reflect.SelectCase{Dir: reflect.SelectDefault}

	failed := false
	for {
		// Take every pending notification, so that a burst of changes
		// across the inputs becomes one computation.
		for {
			chosen, _, ok := reflect.Select(cases)
			if chosen == 0 {
				return nil
			}
			if chosen == n {
				break
			}
			if !ok {
				cases[chosen].Chan = reflect.Value{}
			}
		}
		result, err := c.call(ctx)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			failed = true
			runner.Report(ctx, fmt.Errorf("translator %s: compute: %w", c.name, err))
		default:
			c.out.Replace(result)
			c.readyOnce.Do(func() { close(c.ready) })
			if failed {
				failed = false
				runner.Report(ctx, nil)
			}
		}
		// Wait for the next change.
		chosen, _, ok := reflect.Select(cases[:n])
		if chosen == 0 {
			return nil
		}
		if !ok {
			cases[chosen].Chan = reflect.Value{}
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
