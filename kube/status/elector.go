package status

import "context"

// Elector is one candidacy in an election, on some engine: the shape of the
// Elector that runner defines in the cluster contracts.
type Elector interface {
	// Campaign blocks until the candidate leads and returns its Term, or
	// returns ctx.Err() or an engine error.
	Campaign(ctx context.Context) (Term, error)
}

// Term is one stretch of leadership.
type Term interface {
	// Token is the fencing token: it grows with every term of the election.
	Token() int64
	// Done is closed when the term ends: resigned, or lost.
	Done() <-chan struct{}
	// Resign ends the term at once, so that another candidate leads without
	// waiting for the term to expire.
	Resign(ctx context.Context) error
}
