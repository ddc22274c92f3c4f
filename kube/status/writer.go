package status

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Writer is a runner that writes desired statuses to the status
// subresource while its process leads; see NewWriter. It implements
// runner.Runner. Its methods are safe to call at any time; Run may be
// called again after it has returned, not while it runs.
type Writer[V informer.Object, S any] struct {
	name    string
	objects watchable.View[types.NamespacedName, V]
	desired watchable.View[types.NamespacedName, S]
	target  Target[V, S]
	leader  *runner.Leader
	cfg     config

	idle func() // tests: called whenever nothing is left to do
}

// NewWriter returns a Writer that keeps the status of every object of
// objects that has an entry in desired equal to that entry, while elector
// elects this process.
//
// objects is the program's picture of the objects, usually an
// informer.Informer's Output; the Writer reads statuses there to decide
// whether to write, and takes the object there as the base of its update.
// desired holds the statuses the program wants, under the same keys. An
// object without a desired status, a desired status without an object
// (not created yet, or deleted), and a deleted desired status are left
// alone: the Writer writes no status it was not given.
//
// The Writer runs under runner.LeaderOnly(elector, ...): it writes only
// during the terms it wins, and checks every desired status when a term
// begins, then every change of either map; when a term ends it stops (an
// update in flight is cancelled) and campaigns again; when Run's context
// ends during a term, it resigns, so that another replica leads at once.
// Give each Writer an Elector of its own (one candidacy per election).
//
// Problems are reported through runner.HealthOf: the election's under
// runner.ProblemElection, an object's under "status " followed by its
// namespace/name; each is cleared once solved.
func NewWriter[V informer.Object, S any](
	name string,
	objects watchable.View[types.NamespacedName, V],
	desired watchable.View[types.NamespacedName, S],
	target Target[V, S],
	elector runner.Elector,
	opts ...Option,
) *Writer[V, S] {
	if target.Client == nil || target.Status == nil || target.SetStatus == nil {
		panic(fmt.Sprintf("status.NewWriter %s: the Target needs Client, Status and SetStatus", name))
	}
	w := &Writer[V, S]{name: name, objects: objects, desired: desired, target: target, cfg: newConfig(opts)}
	w.leader = runner.LeaderOnly(elector, runner.Func(name, w.lead),
		runner.WithLogger(w.cfg.logger), runner.WithBackoff(w.cfg.minBackoff, w.cfg.maxBackoff))
	return w
}

// Name returns the name given to NewWriter.
func (w *Writer[V, S]) Name() string { return w.name }

// Leading returns the map in which the Writer publishes its term, under its
// Name, while it leads (and so writes); it is empty otherwise. See
// runner.Leader.Leading.
func (w *Writer[V, S]) Leading() watchable.View[string, runner.Ownership] { return w.leader.Leading() }

// Run campaigns and writes while leading, until ctx is done; then it
// resigns a term it holds and returns nil.
func (w *Writer[V, S]) Run(ctx context.Context) error { return w.leader.Run(ctx) }

// lead writes until ctx, the term's, is done.
func (w *Writer[V, S]) lead(ctx context.Context) error {
	log := w.cfg.logger.With("runner", w.name)
	health := runner.HealthOf(ctx)
	objSub := w.objects.Subscribe(ctx)
	desSub := w.desired.Subscribe(ctx)
	var objs watchable.State[types.NamespacedName, V]
	var des watchable.State[types.NamespacedName, S]
	q := newQueue(w.cfg.minBackoff, w.cfg.maxBackoff)
	defer q.stop()

	onObjects := func(s watchable.Snapshot[types.NamespacedName, V]) {
		objs = s.State
		for _, u := range s.Updates {
			if _, ok := des.Get(u.Key); ok && !u.Delete {
				q.add(u.Key)
			}
		}
	}
	onDesired := func(s watchable.Snapshot[types.NamespacedName, S]) {
		des = s.State
		for _, u := range s.Updates {
			if !u.Delete {
				q.add(u.Key)
			}
		}
	}
	for {
		// Read what is pending without waiting, so that every key is
		// checked against the newest desired status and object.
		select {
		case s, ok := <-objSub:
			if !ok {
				return nil
			}
			onObjects(s)
			continue
		case s, ok := <-desSub:
			if !ok {
				return nil
			}
			onDesired(s)
			continue
		default:
		}
		if ctx.Err() != nil {
			return nil
		}
		if k, ok := q.next(time.Now()); ok {
			w.sync(ctx, k, objs, des, q, log, health)
			continue
		}
		if w.idle != nil {
			w.idle()
		}
		select {
		case <-ctx.Done():
			return nil
		case s, ok := <-objSub:
			if !ok {
				return nil
			}
			onObjects(s)
		case s, ok := <-desSub:
			if !ok {
				return nil
			}
			onDesired(s)
		case <-q.wake():
		}
	}
}

// sync makes the status of k the desired one, if it is not already.
func (w *Writer[V, S]) sync(ctx context.Context, k types.NamespacedName,
	objs watchable.State[types.NamespacedName, V], des watchable.State[types.NamespacedName, S],
	q *queue, log *slog.Logger, health runner.Health,
) {
	key := "status " + k.String()
	want, ok := des.Get(k)
	if !ok {
		q.forget(k)
		health.Report(key, nil)
		return
	}
	obj, ok := objs.Get(k)
	if !ok {
		// Not there yet: the object's arrival queues it again.
		q.forget(k)
		health.Report(key, nil)
		return
	}
	err := w.write(ctx, k, obj, want, log)
	switch {
	case err == nil || errors.Is(err, errGone):
		q.forget(k)
		health.Report(key, nil)
	case ctx.Err() != nil:
		// The term ended; the next one checks everything again.
	default:
		health.Report(key, err)
		log.Warn("write status", "key", k.String(), "error", err)
		q.retry(k, time.Now())
	}
}

// errGone reports an object deleted since the map saw it.
var errGone = errors.New("object deleted")

// write updates obj's status to want, reading it afresh after each
// conflict, and writes nothing when the status is already want.
func (w *Writer[V, S]) write(ctx context.Context, k types.NamespacedName, obj V, want S, log *slog.Logger) error {
	t := w.target
	if t.equal(t.Status(obj), want) {
		return nil
	}
	c := t.Client(k.Namespace)
	cur := watchable.DeepCopy(obj)
	for attempt := 1; ; attempt++ {
		t.SetStatus(cur, watchable.DeepCopy(want))
		_, err := c.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		switch {
		case err == nil:
			log.Debug("status written", "key", k.String(), "attempt", attempt)
			return nil
		case apierrors.IsNotFound(err):
			return errGone
		case !apierrors.IsConflict(err) || ctx.Err() != nil:
			return fmt.Errorf("update the status of %s: %w", k, err)
		case attempt == w.cfg.conflicts:
			return fmt.Errorf("update the status of %s: %d conflicts in a row: %w", k, attempt, err)
		}
		// Someone changed the object since our copy was made: start again
		// from what the API server holds now.
		log.Debug("status update conflicts: reading again", "key", k.String(), "attempt", attempt)
		fresh, err := c.Get(ctx, k.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return errGone
		}
		if err != nil {
			return fmt.Errorf("read %s after a conflict: %w", k, err)
		}
		if t.equal(t.Status(fresh), want) {
			return nil
		}
		cur = fresh
	}
}

// queue holds the keys to check, in order, and those waiting to be tried
// again after a failure.
type queue struct {
	min, max time.Duration
	ready    []types.NamespacedName
	queued   map[types.NamespacedName]bool
	waiting  map[types.NamespacedName]time.Time
	delay    map[types.NamespacedName]time.Duration // the last wait, per failing key
	timer    *time.Timer
}

func newQueue(minDelay, maxDelay time.Duration) *queue {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &queue{
		min: minDelay, max: maxDelay, timer: t,
		queued:  map[types.NamespacedName]bool{},
		waiting: map[types.NamespacedName]time.Time{},
		delay:   map[types.NamespacedName]time.Duration{},
	}
}

// add queues k to be checked now.
func (q *queue) add(k types.NamespacedName) {
	delete(q.waiting, k)
	if !q.queued[k] {
		q.queued[k] = true
		q.ready = append(q.ready, k)
	}
}

// next returns the next key to check, moving the waiting keys whose time
// has come to the queue first.
func (q *queue) next(now time.Time) (types.NamespacedName, bool) {
	for k, at := range q.waiting {
		if !at.After(now) {
			q.add(k)
		}
	}
	if len(q.ready) == 0 {
		return types.NamespacedName{}, false
	}
	k := q.ready[0]
	q.ready = q.ready[1:]
	delete(q.queued, k)
	return k, true
}

// retry makes k wait, twice as long as the last time.
func (q *queue) retry(k types.NamespacedName, now time.Time) {
	d := q.min
	if last, ok := q.delay[k]; ok {
		d = min(2*last, q.max)
	}
	q.delay[k] = d
	q.waiting[k] = now.Add(jitter(d))
}

// forget drops k's failure history.
func (q *queue) forget(k types.NamespacedName) { delete(q.delay, k) }

// wake returns a channel that fires when the first waiting key is due.
func (q *queue) wake() <-chan time.Time {
	if len(q.waiting) == 0 {
		return nil
	}
	var first time.Time
	for _, at := range q.waiting {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	q.timer.Reset(time.Until(first))
	return q.timer.C
}

func (q *queue) stop() { q.timer.Stop() }

// jitter returns a duration between d/2 and d, so that replicas that failed
// together do not retry together.
func jitter(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }
