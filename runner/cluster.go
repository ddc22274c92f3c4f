package runner

import (
	"context"
	"errors"

	"github.com/switchyard-go/switchyard/watchable"
)

// The cluster contracts: what an engine (etcd, Kubernetes, ...) provides so
// that LeaderOnly and Shard can run on it. Engines implement primitives
// only (a term that can be won, kept and lost; a claim attempt; who is a
// member); every decision (when to campaign again, which item to claim and
// when, how many to hold, what to do when a term ends) is made here, the
// same way on every engine.

// ErrClaimed is returned, wrapped, by Member.Claim when another member
// holds the item.
var ErrClaimed = errors.New("claimed by another member")

// Elector is one candidate in one election, on some engine.
//
// An Elector is used by one LeaderOnly at a time: Campaign is not called
// again before the Term it returned has ended.
type Elector interface {
	// Campaign blocks until the candidate leads, and returns its Term.
	// It returns ctx.Err() if ctx ends first, or the engine's error when
	// the engine cannot be reached; the caller campaigns again later.
	// A failed Campaign leaves nothing behind: no other candidate waits
	// for it.
	Campaign(ctx context.Context) (Term, error)
}

// Term is one stretch of exclusive holding, won from an engine: the
// leadership won by Elector.Campaign, or the claim on one item won by
// Member.Claim. While a Term lasts, no other candidate of the same
// election, and no other member for the same item, holds one.
//
// What an engine promises about a Term:
//
//   - Token is a fencing token: every term of the same election (of the
//     same item) has a greater token than every term before it, so a
//     resource that remembers the greatest token it has seen can refuse a
//     late write from a holder that lost its term without knowing it yet.
//   - Done is closed no later than the moment another candidate could win:
//     an engine that keeps a term alive by renewing it ends the term when a
//     renewal has not been confirmed in time, before the term could have
//     expired for the others (as client-go's RenewDeadline is shorter than
//     its LeaseDuration). So, with clocks that run at the same rate, the
//     holders of two terms of one election never both believe they hold
//     it; see docs/cluster.md for the timing.
//   - Resign ends the term at once, so that another candidate takes over
//     without waiting for an expiry.
//
// The methods are safe for concurrent use.
type Term interface {
	// Token returns the term's fencing token.
	Token() int64
	// Done returns a channel that is closed when the term has ended:
	// resigned, or lost (not renewed in time, or removed by someone else).
	Done() <-chan struct{}
	// Resign ends the term, so that another candidate can hold the next
	// one at once. Done is closed when Resign returns, whatever the
	// error: an error means the engine may not have heard, and the
	// others then wait for the term to expire. Resigning an ended term
	// ends nothing and returns nil; LeaderOnly does it anyway, so
	// that an engine may release what it kept for the term.
	Resign(ctx context.Context) error
}

// ShardEngine is where the replicas of a program meet to share items: a
// replica joins, and claims items as a member. See Shard.
type ShardEngine interface {
	// Join makes the process a member, with its identity on the engine,
	// and returns once the member is registered: the other members can
	// count it. It returns ctx.Err() or the engine's error, and then
	// leaves nothing behind.
	Join(ctx context.Context) (Member, error)
}

// Member is one membership of a process in a ShardEngine: from Join until
// Leave, or until the engine lost it (Done). Everything the member
// claimed is bound to the membership and ends with it. A lost member is not
// revived: its owner joins again, as a new member.
//
// The methods are safe for concurrent use.
type Member interface {
	// ID names the member among the engine's members.
	ID() string

	// Members are the live members as this member sees them, keyed by ID;
	// this member among them once the map is initialized. A member whose
	// membership ended leaves the map at the latest when its claims leave
	// Claims. The map stops changing when the member ends.
	Members() watchable.View[string, struct{}]

	// Claims are the items currently claimed, by any member, as this
	// member sees them, keyed by item name; an item absent from the map is
	// vacant and may be claimed. Within one change of the engine, such as
	// a member's lease expiring with all its claims, Members is updated
	// before Claims. The map stops changing when the member ends.
	Claims() watchable.View[string, Holder]

	// Claim makes one atomic attempt to claim item for this member: it
	// succeeds only if nobody holds item, and returns the claim as a Term
	// whose Done is closed when the claim is released or lost (the
	// membership lost included). It returns an error wrapping ErrClaimed
	// when another member holds item, and the engine's error when the
	// engine cannot be reached: the attempt may then have succeeded, which
	// Claims will show, and a later Claim of the same item by this member
	// returns that claim instead of ErrClaimed.
	Claim(ctx context.Context, item string) (Term, error)

	// Done returns a channel that is closed when the membership has ended:
	// lost (not renewed in time), or after Leave. Every claim has ended
	// then.
	Done() <-chan struct{}

	// Leave ends the membership and every claim at once, so that the other
	// members see them vacant without waiting for an expiry. Done is
	// closed when Leave returns, whatever the error. Shard calls Leave
	// also after the membership was lost, so that an engine may release
	// what it kept for it.
	Leave(ctx context.Context) error
}

// Holder is who holds an item's claim, as a member sees it in
// Member.Claims.
type Holder struct {
	// Member is the holder's Member.ID.
	Member string `json:"member"`
	// Token is the claim's fencing token (see Term.Token).
	Token int64 `json:"token"`
}

type termKey struct{}

// TermOf returns the Term under which the code that received ctx runs: the
// leadership of a runner run by LeaderOnly, or the claim on the item of a
// handler run by Shard. Its Token is the fencing token to attach to writes
// that must come from the current holder only. It reports false for a
// context that comes from neither.
func TermOf(ctx context.Context) (Term, bool) {
	t, ok := ctx.Value(termKey{}).(Term)
	return t, ok
}

func withTerm(ctx context.Context, t Term) context.Context {
	return context.WithValue(ctx, termKey{}, t)
}
