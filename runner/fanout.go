package runner

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-go/switchyard/watchable"
)

// Fanout runs one handler per partition of a map: the per-node fan-out,
// where one shared watch of pods feeds a handler per node. Create one with
// FanOut. It is safe for concurrent use; it runs once at a time.
type Fanout[K comparable, V any, P comparable] struct {
	name   string
	items  watchable.View[K, V]
	part   func(K, V) P
	handle func(ctx context.Context, part P, updates <-chan watchable.Snapshot[K, V]) error
	cfg    config
	clock  Clock

	handlers     watchable.Map[P, Status]
	handlersDone func()
	ready        chan struct{}
	readyOnce    sync.Once
	running      atomic.Bool

	starts, failures atomic.Int64
}

// FanOut returns a runner that runs handle once for each partition of
// items: the entries for which part gives the same value (the node a pod
// is scheduled on, the tenant a route belongs to).
//
// While it runs:
//
//   - a partition's handler starts when the partition gets its first entry,
//     and its context is cancelled when the partition loses its last one
//     (or when the runner stops); if the partition comes back while the
//     handler is still returning, a new one starts after it has returned;
//   - updates is the partition's own subscription (see
//     watchable.Partitions.Subscribe): its first snapshot holds the
//     partition's entries, each later one the net change, and an entry that
//     moves to another partition leaves this one as a delete and arrives in
//     the other as a store; it is closed when the handler's context ends;
//   - a handler that returns an error or panics is reported through the
//     runner's Health under "partition " followed by fmt.Sprint of the
//     partition, logged, and started again, with a new subscription, after
//     the backoff (WithBackoff); the problem is cleared when it starts
//     again. A failure never affects the other partitions; a handler that
//     returns nil is not started again while its partition lasts.
//
// The cost of a write of items does not depend on the number of
// partitions: the index routes each change to its partition's subscriber
// only, and part is called twice per changed entry (see
// watchable.PartitionBy for what part may and may not do).
//
// The runner waits for items to be initialized before it starts handlers;
// it is ready (Readier) once the handlers of the partitions present then
// have started. Handlers publishes each handler's Phase, Err and Since.
//
// Options: WithLogger, WithClock, WithBackoff.
func FanOut[K comparable, V any, P comparable](name string, items watchable.View[K, V], part func(K, V) P,
	handle func(ctx context.Context, part P, updates <-chan watchable.Snapshot[K, V]) error, opts ...Option) *Fanout[K, V, P] {
	cfg := newConfig("runner.FanOut", forFanOut, opts)
	f := &Fanout[K, V, P]{name: name, items: items, part: part, handle: handle, cfg: cfg, clock: cfg.clockOrSystem(), ready: make(chan struct{})}
	f.handlersDone = f.handlers.RegisterInitializer(name)
	return f
}

// Name returns the runner's name.
func (f *Fanout[K, V, P]) Name() string { return f.name }

// Ready returns a channel closed once the handlers of the partitions
// present when items became initialized have started.
func (f *Fanout[K, V, P]) Ready() <-chan struct{} { return f.ready }

// Handlers returns the map of the partitions that have a handler, with the
// handler's state: PhaseRunning, PhaseFailed while it waits to start again,
// PhaseStopped once it returned nil. A partition leaves the map when it
// has no entries left and its handler has returned.
func (f *Fanout[K, V, P]) Handlers() watchable.View[P, Status] { return f.handlers.View() }

// Starts returns how many times a handler was started, restarts included.
func (f *Fanout[K, V, P]) Starts() int64 { return f.starts.Load() }

// Failures returns how many times a handler failed (an error or a panic).
func (f *Fanout[K, V, P]) Failures() int64 { return f.failures.Load() }

// Run starts and stops handlers until ctx is done, then cancels them all,
// waits for them to return, and returns nil.
func (f *Fanout[K, V, P]) Run(ctx context.Context) error {
	if !f.running.CompareAndSwap(false, true) {
		return fmt.Errorf("runner %s: already running", f.name)
	}
	defer f.running.Store(false)
	select {
	case <-f.items.Initialized():
	case <-ctx.Done():
		return nil
	}
	fr := &fanoutRun[K, V, P]{
		f: f, ctx: ctx, log: f.cfg.logger(ctx).With("runner", f.name), health: HealthOf(ctx),
		parts:   watchable.PartitionBy(ctx, f.items, f.part),
		present: map[P]bool{},
		hs:      map[P]*fanHandler{},
		results: make(chan fanResult[P]),
	}
	return fr.serve()
}

// fanHandler is one partition's handler, from its first start until its
// partition is gone and it has returned. Its fields belong to the loop.
type fanHandler struct {
	cancel    context.CancelFunc // of the running handler; nil when none runs
	cancelled bool               // cancelled because its partition emptied
	status    Status
	fails     backoff
	restartAt time.Time // zero unless a failed handler waits
	reported  bool
}

type fanResult[P comparable] struct {
	part P
	err  error
}

// fanoutRun is one Run's loop state.
type fanoutRun[K comparable, V any, P comparable] struct {
	f       *Fanout[K, V, P]
	ctx     context.Context
	log     *slog.Logger
	health  Health
	parts   *watchable.Partitions[K, V, P]
	present map[P]bool
	hs      map[P]*fanHandler
	running int
	results chan fanResult[P]
}

func (r *fanoutRun[K, V, P]) serve() error {
	sizes := r.parts.Sizes().Subscribe(r.ctx)
	first := true
	var timer <-chan time.Time
	for {
		select {
		case s, ok := <-sizes:
			if !ok {
				return r.shutdown()
			}
			for _, u := range s.Updates {
				if u.Delete {
					delete(r.present, u.Key)
				} else {
					r.present[u.Key] = true
				}
				r.reconcile(u.Key)
			}
			if first {
				first = false
				r.f.readyOnce.Do(func() {
					r.f.handlersDone()
					close(r.f.ready)
				})
			}
		case res := <-r.results:
			r.returned(res)
		case <-timer:
			for p, h := range r.hs {
				if !h.restartAt.IsZero() && !r.f.clock.Now().Before(h.restartAt) {
					h.restartAt = time.Time{}
					r.reconcile(p)
				}
			}
		case <-r.ctx.Done():
			return r.shutdown()
		}
		timer = r.nextRestart()
	}
}

// reconcile starts p's handler if its partition has entries and none runs
// or waits, and stops it if the partition has none.
func (r *fanoutRun[K, V, P]) reconcile(p P) {
	h := r.hs[p]
	switch {
	case r.present[p] && h == nil:
		h = &fanHandler{fails: r.f.cfg.newBackoff()}
		r.hs[p] = h
		r.start(p, h)
	case r.present[p] && h.cancel == nil && h.restartAt.IsZero() && h.status.Phase != PhaseStopped:
		r.start(p, h)
	case !r.present[p] && h != nil && h.cancel != nil:
		h.cancel() // it returns shortly, and is forgotten or started again then
		h.cancelled = true
	case !r.present[p] && h != nil:
		r.forget(p, h)
	}
}

func (r *fanoutRun[K, V, P]) start(p P, h *fanHandler) {
	if h.reported {
		r.health.Report(r.key(p), nil)
		h.reported = false
	}
	hctx, cancel := context.WithCancel(r.ctx)
	h.cancel, h.cancelled = cancel, false
	h.status = Status{Phase: PhaseRunning, Since: r.f.clock.Now()}
	r.f.handlers.Store(p, h.status)
	r.f.starts.Add(1)
	r.running++
	updates := r.parts.Subscribe(hctx, p)
	go func() {
		err := r.call(hctx, p, updates)
		r.results <- fanResult[P]{part: p, err: err}
	}()
}

func (r *fanoutRun[K, V, P]) call(ctx context.Context, p P, updates <-chan watchable.Snapshot[K, V]) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Runner: r.f.name + "/" + fmt.Sprint(p), Value: v, Stack: debug.Stack()}
		}
	}()
	return r.f.handle(ctx, p, updates)
}

// returned handles the return of p's handler.
func (r *fanoutRun[K, V, P]) returned(res fanResult[P]) {
	r.running--
	h := r.hs[res.part]
	h.cancel()
	h.cancel = nil
	now := r.f.clock.Now()
	switch {
	case r.ctx.Err() != nil:
		return // shutdown forgets it
	case !r.present[res.part]:
		r.forget(res.part, h)
		return
	case h.cancelled:
		// Its partition emptied and filled again meanwhile: a new one.
		r.start(res.part, h)
		return
	case res.err == nil:
		h.status = Status{Phase: PhaseStopped, Since: now}
	default:
		r.f.failures.Add(1)
		if now.Sub(h.status.Since) > h.fails.max {
			h.fails.reset() // it ran well for a while before failing
		}
		h.restartAt = now.Add(h.fails.next())
		h.status = Status{Phase: PhaseFailed, Err: res.err.Error(), Since: now}
		h.reported = true
		r.health.Report(r.key(res.part), res.err)
		r.log.Error("partition handler failed; starting it again after the backoff",
			"partition", fmt.Sprint(res.part), "error", res.err, "restart_at", h.restartAt)
	}
	r.f.handlers.Store(res.part, h.status)
}

func (r *fanoutRun[K, V, P]) forget(p P, h *fanHandler) {
	if h.reported {
		r.health.Report(r.key(p), nil)
	}
	delete(r.hs, p)
	r.f.handlers.Delete(p)
}

func (r *fanoutRun[K, V, P]) key(p P) string { return "partition " + fmt.Sprint(p) }

// nextRestart returns a channel that fires when the first waiting handler
// is due, nil when none waits.
func (r *fanoutRun[K, V, P]) nextRestart() <-chan time.Time {
	var first time.Time
	for _, h := range r.hs {
		if !h.restartAt.IsZero() && (first.IsZero() || h.restartAt.Before(first)) {
			first = h.restartAt
		}
	}
	if first.IsZero() {
		return nil
	}
	return r.f.clock.After(first.Sub(r.f.clock.Now()))
}

// shutdown cancels every handler and waits for them to return.
func (r *fanoutRun[K, V, P]) shutdown() error {
	for _, h := range r.hs {
		if h.cancel != nil {
			h.cancel()
		}
	}
	for r.running > 0 {
		res := <-r.results
		r.running--
		if h := r.hs[res.part]; h != nil {
			h.cancel = nil
		}
	}
	for p := range r.hs {
		r.f.handlers.Delete(p)
	}
	return nil
}
