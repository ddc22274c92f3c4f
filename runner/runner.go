package runner

import (
	"context"
	"time"
)

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

// Drainer is implemented by runners that need time to stop once their
// context is done, such as a server that lets the requests in flight
// finish (httpserver.Server). ShutdownGrace says how long at most.
//
// A Group waits for a Drainer at least its ShutdownGrace plus DrainMargin
// before giving up on it, even when the group's own grace (WithGrace) is
// shorter: a server told to drain for 15 s is not abandoned after 10. A
// wrapper that runs a Drainer inside its own Run should implement Drainer
// too, and forward the value.
type Drainer interface {
	ShutdownGrace() time.Duration
}

// DrainMargin is what a Group adds to a Drainer's ShutdownGrace: the time
// to close what is still open once the grace is over, and return.
const DrainMargin = time.Second

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
