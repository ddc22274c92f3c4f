package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchyard-go/switchyard/watchable"
)

// DefaultGrace is the grace period of a group whose Options leave it zero.
// Runners that need longer to stop say so as Drainers (see Drainer).
const DefaultGrace = 10 * time.Second

var (
	// ErrInvalidName is returned by Run, before any runner starts, for a
	// runner with an empty name, a name used twice, or a nil runner.
	ErrInvalidName = errors.New("invalid runner")
	// ErrStuck is wrapped by the error Run returns when runners did not
	// return within the grace period after the group was cancelled.
	ErrStuck = errors.New("runners did not return within the grace period")
	// ErrAlreadyRun is returned by Group.Run when it is called more than
	// once.
	ErrAlreadyRun = errors.New("group already run")
)

// PanicError is the error for a runner whose Run panicked.
type PanicError struct {
	Runner string // the runner's name
	Value  any    // the value passed to panic
	Stack  []byte // the panicking goroutine's stack
}

// Error returns the runner's name, the panic value and the stack.
func (e *PanicError) Error() string {
	return fmt.Sprintf("runner %q panicked: %v\n\n%s", e.Runner, e.Value, e.Stack)
}

// Unwrap returns the panic value when it is an error, and nil otherwise.
func (e *PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

// Option configures a Group (NewGroup), a Leader (LeaderOnly) or a Sharder
// (Shard). Each option says what it applies to; a constructor given an
// option that does not apply to it panics, naming the option, rather than
// ignore it.
type Option func(*config)

// WithLogger sends the group's records (a runner started, stopped, failed or
// reported a problem; runners abandoned) to l. Without it, or with a nil l,
// they go to slog.Default().
//
// Given to LeaderOnly or Shard, it sends their records (terms won and lost,
// claims, handler failures) to l; without it they go where the records of
// the group they run in go.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.log = l }
}

// WithGrace sets how long Run waits for runners to return once the group is
// cancelled, before it gives up on them. Zero or less means DefaultGrace.
// A runner that is a Drainer gets at least its ShutdownGrace plus
// DrainMargin, whatever the grace.
func WithGrace(d time.Duration) Option {
	return func(c *config) { c.grace = d; c.given("WithGrace", forGroup) }
}

// Run runs runners as one group until they have all returned; see
// Group.Run. It is NewGroup().Run(ctx, runners...), for programs that need
// neither options nor Group.Ready nor Group.Status.
func Run(ctx context.Context, runners ...Runner) error {
	return NewGroup().Run(ctx, runners...)
}

// Group runs runners together: it starts each in its own goroutine, stops
// them all when one fails or ctx is done, publishes their Status, and tells
// when they are all ready. A Group runs once.
//
// Its methods are safe for concurrent use.
type Group struct {
	log    *slog.Logger
	grace  time.Duration // as configured
	wait   time.Duration // grace, or longer for a Drainer; set by start
	status watchable.Map[string, Status]
	listed func()        // marks status initialized: every runner is listed
	ready  chan struct{} // closed when pending reaches 0
	ended  chan struct{} // closed when Run returns

	mu       sync.Mutex // guards what follows, and orders stores to status
	started  bool
	finished bool // Run has returned: publish nothing more
	pending  int  // runners not ready yet
	members  []*member
	firstErr error
}

// member is one runner's place in the group. Its status is guarded by g.mu.
type member struct {
	g      *Group
	name   string
	status Status
	done   chan struct{} // closed when Run has returned
	// unlisted holds the problems beyond status.Problems' MaxProblems,
	// counted by status.MoreProblems. Guarded by g.mu.
	unlisted map[string]string
}

type memberKey struct{}

// NewGroup returns a group configured by opts, ready to Run.
func NewGroup(opts ...Option) *Group {
	g := &Group{
		ready: make(chan struct{}),
		ended: make(chan struct{}),
	}
	c := newConfig("runner.NewGroup", forGroup, opts)
	g.log, g.grace = c.log, c.grace
	if g.log == nil {
		g.log = slog.Default()
	}
	if g.grace <= 0 {
		g.grace = DefaultGrace
	}
	g.listed = g.status.RegisterInitializer("runner group")
	return g
}

// Status returns the map in which the group publishes the Status of each of
// its runners, keyed by runner name. It may be handed to a health check
// before the group runs. Every runner is listed as starting before any of
// them runs, the final statuses stay after Run has returned, and the map is
// never closed. It is initialized when every runner has been started.
func (g *Group) Status() watchable.View[string, Status] { return g.status.View() }

// Ready returns a channel that is closed once every runner is ready: each
// runner that implements Readier has closed its Ready channel, and every
// other runner has been started. It is never closed if the group ends
// before that. With no runners, it is closed as soon as Run is called.
func (g *Group) Ready() <-chan struct{} { return g.ready }

// Run starts every runner, each in its own goroutine with a context derived
// from ctx, and blocks until they have all returned.
//
// The context is cancelled when ctx is done or when the first runner fails:
// returns an error or panics. A panic is recovered and becomes a *PanicError.
// Run returns that first failure, wrapped with the runner's name, or nil
// when every runner returned nil. A runner that returns the context's error
// after cancellation has stopped cleanly; a runner that returns nil before
// cancellation has simply stopped, and the others go on.
//
// Once the context is cancelled, runners have the grace period
// (WithGrace, or longer when a runner is a Drainer) to return. Run does not wait for those that do not: it
// marks them failed and returns an error wrapping ErrStuck that names them
// (joined with the first failure, if any). Go cannot stop a goroutine, so
// theirs are left running, and the program should exit soon after.
//
// Run returns an error wrapping ErrInvalidName, before starting anything, if
// a runner is nil or its name is empty or used twice, and ErrAlreadyRun if
// the group has run before.
func (g *Group) Run(ctx context.Context, runners ...Runner) error {
	members, err := g.start(runners)
	if err != nil {
		return err
	}
	eg, gctx := errgroup.WithContext(ctx)
	for i, r := range runners {
		m := members[i]
		eg.Go(func() error { return g.run(gctx, m, r) })
	}
	done := make(chan struct{})
	go func() {
		_ = eg.Wait() // the first error is recorded in g.firstErr
		close(done)
	}()

	select {
	case <-done:
	case <-gctx.Done():
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			return g.abandon()
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.finish()
	return g.firstErr
}

// start checks the runners and publishes them as starting, or returns an
// error and starts nothing.
func (g *Group) start(runners []Runner) ([]*member, error) {
	members := make([]*member, len(runners))
	seen := make(map[string]bool, len(runners))
	for i, r := range runners {
		if r == nil {
			return nil, fmt.Errorf("runner #%d is nil: %w", i, ErrInvalidName)
		}
		name := r.Name()
		switch {
		case name == "":
			return nil, fmt.Errorf("runner #%d (%T) has an empty name: %w", i, r, ErrInvalidName)
		case seen[name]:
			return nil, fmt.Errorf("runner name %q is used twice: %w", name, ErrInvalidName)
		}
		seen[name] = true
		members[i] = &member{g: g, name: name, done: make(chan struct{})}
	}
	wait := g.grace
	for _, r := range runners {
		if d, ok := r.(Drainer); ok {
			wait = max(wait, d.ShutdownGrace()+DrainMargin)
		}
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if g.started {
		return nil, ErrAlreadyRun
	}
	g.started = true
	g.wait = wait
	g.members = members
	g.pending = len(members)
	if g.pending == 0 {
		close(g.ready)
	}
	now := time.Now()
	g.status.Batch(func(b *watchable.Batch[string, Status]) {
		for _, m := range members {
			m.status = Status{Phase: PhaseStarting, Since: now}
			b.Store(m.name, m.status)
		}
	})
	g.listed()
	return members, nil
}

// run runs one runner and returns its failure, if any, for errgroup.
func (g *Group) run(ctx context.Context, m *member, r Runner) (err error) {
	defer func() {
		var perr *PanicError
		if v := recover(); v != nil {
			perr = &PanicError{Runner: m.name, Value: v, Stack: debug.Stack()}
		}
		err = g.stopped(ctx, m, err, perr)
		close(m.done)
	}()
	ctx = context.WithValue(ctx, memberKey{}, m)
	if rd, ok := r.(Readier); ok {
		ready := rd.Ready()
		g.setState(m, PhaseRunning)
		go g.awaitReady(m, ready)
	} else {
		g.setState(m, PhaseReady)
		g.mu.Lock()
		g.readyOne()
		g.mu.Unlock()
	}
	g.log.Debug("runner started", "runner", m.name)
	return r.Run(ctx)
}

// awaitReady marks m ready when ready is closed while it runs.
func (g *Group) awaitReady(m *member, ready <-chan struct{}) {
	select {
	case <-ready:
	case <-m.done:
		return
	case <-g.ended:
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.finished || m.status.Phase != PhaseRunning {
		return
	}
	g.set(m, PhaseReady, "")
	g.readyOne()
	g.log.Debug("runner ready", "runner", m.name)
}

// readyOne counts one more runner ready. g.mu is held.
func (g *Group) readyOne() {
	g.pending--
	if g.pending == 0 {
		close(g.ready)
	}
}

// stopped records how m's Run ended and returns the error it means for the
// group: nil for a clean stop, and otherwise the failure with the runner's
// name. perr is set when Run panicked.
func (g *Group) stopped(ctx context.Context, m *member, err error, perr *PanicError) error {
	switch {
	case perr != nil:
		g.log.Error("runner panicked", "runner", m.name, "panic", fmt.Sprint(perr.Value), "stack", string(perr.Stack))
		g.fail(m, perr, perr.Error())
		return perr
	case err == nil:
		if ctx.Err() == nil {
			g.log.Info("runner returned before the group was stopped", "runner", m.name)
		} else {
			g.log.Debug("runner stopped", "runner", m.name)
		}
		g.setState(m, PhaseStopped)
		return nil
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		g.log.Debug("runner stopped", "runner", m.name, "error", err)
		g.setState(m, PhaseStopped)
		return nil
	default:
		g.log.Error("runner failed", "runner", m.name, "error", err)
		wrapped := fmt.Errorf("runner %q: %w", m.name, err)
		g.fail(m, wrapped, err.Error())
		return wrapped
	}
}

// fail marks m failed with the given reason and remembers err if it is the
// group's first failure.
func (g *Group) fail(m *member, err error, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.firstErr == nil {
		g.firstErr = err
	}
	g.set(m, PhaseFailed, reason)
}

func (g *Group) setState(m *member, s Phase) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.set(m, s, "")
}

// set moves m to phase s and publishes its status, unless Run has
// returned. g.mu is held.
func (g *Group) set(m *member, s Phase, reason string) {
	if g.finished {
		return
	}
	m.status.Phase = s
	m.status.Err = reason
	m.status.Since = time.Now()
	g.status.Store(m.name, m.status)
}

func (g *Group) report(m *member, key string, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	old, listed := m.status.Problems[key]
	unlisted := false
	if !listed {
		old, unlisted = m.unlisted[key]
	}
	had := listed || unlisted
	if g.finished || (err == nil && !had) || (err != nil && had && old == err.Error()) {
		return
	}
	if err != nil {
		g.log.Warn("runner reported a problem", "runner", m.name, "key", key, "problem", err.Error())
	} else {
		g.log.Info("runner cleared a problem", "runner", m.name, "key", key)
	}
	if unlisted {
		if err != nil {
			m.unlisted[key] = err.Error() // nothing published changes
			return
		}
		delete(m.unlisted, key)
		m.status.MoreProblems--
		g.status.Store(m.name, m.status)
		return
	}
	if err != nil && !listed && len(m.status.Problems) >= MaxProblems {
		if m.unlisted == nil {
			m.unlisted = make(map[string]string)
		}
		m.unlisted[key] = err.Error()
		m.status.MoreProblems++
		g.status.Store(m.name, m.status)
		return
	}
	// A new map each time: the previous one may be shared with readers of
	// the status map. It holds at most MaxProblems entries, so a report
	// costs O(MaxProblems) however many problems there are.
	problems := make(map[string]string, len(m.status.Problems)+1)
	for k, v := range m.status.Problems {
		problems[k] = v
	}
	if err != nil {
		problems[key] = err.Error()
	} else {
		delete(problems, key)
		for k, v := range m.unlisted { // one of them takes the free place
			problems[k] = v
			delete(m.unlisted, k)
			m.status.MoreProblems--
			break
		}
	}
	if len(problems) == 0 {
		problems = nil
	}
	m.status.Problems = problems
	g.status.Store(m.name, m.status)
}

// abandon gives up on the runners that have not returned, marking them
// failed, and returns the group's error.
func (g *Group) abandon() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var stuck []string
	reason := fmt.Sprintf("did not return within %v after the group was stopped", g.wait)
	for _, m := range g.members {
		if s := m.status.Phase; s == PhaseStopped || s == PhaseFailed {
			continue // returned, even if m.done is not closed yet
		}
		stuck = append(stuck, fmt.Sprintf("%q", m.name))
		g.set(m, PhaseFailed, reason)
	}
	g.finish()
	if len(stuck) == 0 {
		// The grace period ended just as the last runner returned, before
		// the group noticed: nobody is stuck.
		return g.firstErr
	}
	g.log.Error("runners did not stop; abandoning their goroutines", "runners", stuck, "grace", g.wait)
	return errors.Join(g.firstErr, fmt.Errorf("%w (%v): %s", ErrStuck, g.wait, strings.Join(stuck, ", ")))
}

// finish ends publishing. g.mu is held.
func (g *Group) finish() {
	g.finished = true
	close(g.ended)
}
