package runner

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// ResignTimeout bounds the Resign that LeaderOnly and Shard make when they
// stop: an engine that does not answer in time lets the term expire
// instead.
const ResignTimeout = 5 * time.Second

// Problem keys under which a Leader reports through its Health.
const (
	// ProblemElection: the engine could not be reached to campaign.
	ProblemElection = "election"
	// ProblemLeading: the runner failed or panicked while leading.
	ProblemLeading = "leading"
)

// Ownership is what LeaderOnly and Shard publish about a term they hold:
// the leadership (Leader.Leading) or the claim on an item (Sharder.Owned).
type Ownership struct {
	// Token is the term's fencing token (see Term.Token).
	Token int64 `json:"token"`
	// Since is when the term was won.
	Since time.Time `json:"since"`
	// Phase is the state of the code run under the term: PhaseRunning
	// while it runs, PhaseFailed while it waits to be restarted after a
	// failure, PhaseStopped once it returned nil (the term is kept).
	Phase Phase `json:"phase"`
	// Err is the last failure of the code run under the term, if any.
	Err string `json:"err,omitempty"`
	// Restarts counts the restarts after failures within the term.
	Restarts int `json:"restarts,omitempty"`
}

// Leader runs a runner only while its process leads an election. Create
// one with LeaderOnly. It is safe for concurrent use; it runs once at a
// time.
type Leader struct {
	r       Runner
	e       Elector
	cfg     config
	clock   Clock
	leading watchable.Map[string, Ownership]
}

// LeaderOnly returns a runner, named like r, that runs r only while its
// process leads the election e:
//
//   - it campaigns; once elected it runs r with a context that carries the
//     Term (see TermOf, for its fencing token) and is cancelled when the
//     term ends, as when leadership is lost because the engine could not
//     be reached in time;
//   - when r returns, it campaigns again: at once if the term had ended;
//     after resigning otherwise, since r is expected to run until its
//     context is cancelled (a failure or a panic of r is reported, under
//     ProblemLeading, and the campaign waits for the backoff first, so
//     that another candidate may lead meanwhile);
//   - a campaign the engine cannot answer is reported under
//     ProblemElection, and retried after the backoff (WithBackoff);
//   - when its own context is done it resigns, so that another candidate
//     leads at once, and returns nil.
//
// r runs again for every term, so it must be able to run more than once.
// It must return soon after its context is cancelled: another process may
// lead already. The term is resigned only after r has returned.
//
// Options: WithLogger, WithClock, WithBackoff.
func LeaderOnly(e Elector, r Runner, opts ...Option) *Leader {
	cfg := newConfig("runner.LeaderOnly", forLeader, opts)
	return &Leader{r: r, e: e, cfg: cfg, clock: cfg.clockOrSystem()}
}

// Name returns the name of the runner it runs.
func (l *Leader) Name() string { return l.r.Name() }

// ShutdownGrace forwards the ShutdownGrace of the runner it runs, when that
// runner is a Drainer, so that a group waits for it as long (see Drainer);
// it is 0 otherwise, and the group's own grace applies.
func (l *Leader) ShutdownGrace() time.Duration {
	if d, ok := l.r.(Drainer); ok {
		return d.ShutdownGrace()
	}
	return 0
}

// Leading returns the map in which the Leader publishes its term, under
// its Name, while it leads: the map is empty while it does not.
func (l *Leader) Leading() watchable.View[string, Ownership] { return l.leading.View() }

// Run campaigns and runs the runner while leading, until ctx is done; see
// LeaderOnly. It returns nil.
func (l *Leader) Run(ctx context.Context) error {
	log := l.cfg.logger(ctx).With("runner", l.Name())
	health := HealthOf(ctx)
	campaigns := l.cfg.newBackoff()
	failures := l.cfg.newBackoff()
	for ctx.Err() == nil {
		term, err := l.e.Campaign(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			health.Report(ProblemElection, fmt.Errorf("campaign: %w", err))
			if !sleep(ctx, l.clock, campaigns.next()) {
				break
			}
			continue
		}
		campaigns.reset()
		health.Report(ProblemElection, nil)
		log.Info("leading", "token", term.Token())

		start := l.clock.Now()
		err = l.lead(ctx, term)
		ended := isDone(term.Done())
		switch {
		case ctx.Err() != nil:
			resign(ctx, term, log)
			return nil
		case ended:
			log.Warn("leadership lost", "token", term.Token())
			resign(ctx, term, log) // nothing to end: lets the engine clean up
			continue
		}
		// r returned while leading.
		resign(ctx, term, log)
		if err == nil {
			log.Info("runner returned while leading; resigned", "token", term.Token())
		} else {
			health.Report(ProblemLeading, err)
			log.Error("runner failed while leading; resigned", "token", term.Token(), "error", err)
		}
		if l.clock.Now().Sub(start) > failures.max {
			failures.reset() // it ran well for a while before this failure
		}
		if !sleep(ctx, l.clock, failures.next()) {
			break
		}
	}
	return nil
}

// lead runs r under term until r returns, and returns its error (a panic
// becomes a *PanicError). r's context is cancelled when the term ends.
func (l *Leader) lead(ctx context.Context, term Term) (err error) {
	name := l.Name()
	l.leading.Store(name, Ownership{Token: term.Token(), Since: l.clock.Now(), Phase: PhaseRunning})
	defer l.leading.Delete(name)
	HealthOf(ctx).Report(ProblemLeading, nil)

	rctx, cancel := context.WithCancel(withTerm(ctx, term))
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		select {
		case <-term.Done():
			cancel()
		case <-rctx.Done():
		}
	}()
	defer func() {
		cancel()
		<-watching
	}()
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Runner: name, Value: v, Stack: debug.Stack()}
		}
	}()
	return l.r.Run(rctx)
}

// resign ends term, with a context of its own when ctx is done, so that
// the next leader need not wait for the term to expire. A term that has
// ended is resigned too: that does nothing, but lets the engine release
// what it kept for it before the call returns.
func resign(ctx context.Context, term Term, log *slog.Logger) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ResignTimeout)
	defer cancel()
	if err := term.Resign(rctx); err != nil {
		log.Warn("resign failed; the term ends when it expires", "token", term.Token(), "error", err)
	}
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
