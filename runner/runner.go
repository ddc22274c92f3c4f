package runner

import "context"

// Runner is a component with a lifetime: Run blocks until ctx is done, and
// then returns nil, or until the component fails, and then returns the
// error.
type Runner interface {
	// Name identifies the runner in logs, errors and status.
	Name() string
	// Run runs the component until ctx is done or it fails.
	Run(ctx context.Context) error
}

// Readier is implemented by runners that report when they have finished
// their initial work (for example, published the initial contents of what
// they watch). The channel is closed then; it is never closed for a runner
// that fails before.
type Readier interface {
	Ready() <-chan struct{}
}

// Func returns a Runner with the given name whose Run calls fn. It suits
// small components that need no type of their own. The Runner holds nothing
// else: it is safe for concurrent use, and may run again, as far as fn is.
func Func(name string, fn func(ctx context.Context) error) Runner {
	return funcRunner{name: name, fn: fn}
}

type funcRunner struct {
	name string
	fn   func(ctx context.Context) error
}

func (f funcRunner) Name() string                  { return f.name }
func (f funcRunner) Run(ctx context.Context) error { return f.fn(ctx) }
