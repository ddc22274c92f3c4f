// Package runner runs the components of a program together.
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
