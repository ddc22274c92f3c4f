package translator

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Derive returns a runner that keeps out equal to the union of fn's results
// over the entries of in.
//
// fn translates one input entry into any number of output entries (none is
// fine). It should be a pure function of its arguments: the translator calls
// it again only when that input entry changes, so anything else it reads is
// not watched (use Compute for that). v is shared with the input map and
// must not be mutated; the returned map must not be used by fn after it
// returns. fn runs on the runner's goroutine, one call at a time.
//
// While it runs, the runner:
//
//   - translates every entry of in when it starts, and makes out exactly the
//     result (one Replace), then becomes ready;
//   - translates only the input keys that changed in each snapshot it reads
//     from in, and applies the net result to out as one Batch: outputs whose
//     value changed are stored, outputs that the key produced before and no
//     longer produces are deleted, and deleting an input key deletes all its
//     outputs;
//   - when fn returns an error or panics for a key, keeps the outputs that
//     key produced before and reports a *KeyError, until fn succeeds for it
//     or it is deleted;
//   - when two input keys produce the same output key, publishes the value
//     of the smaller input key and reports a *ConflictError; when that key
//     stops producing it, the next claimant's value takes over. Keys whose
//     underlying type is a string, integer or float are ordered by value,
//     other keys by their fmt.Sprint text, so the winner does not depend on
//     the order of events.
//
// With WithInputEqual, a change to an entry that compares equal to its
// previous value is not translated. Derive panics if WithInputEqual was given
// a function for a type other than V1.
//
// Failures are reported through runner.HealthOf(ctx) under the key
// "translator " + name (the current set, cleared when the last one is
// resolved), so problems that fn reports under keys of its own are left
// alone; they are also logged (see WithLogger) and passed to
// WithErrorHandler.
//
// The runner is the owner of out: it deletes keys it no longer produces, and
// its first publication deletes anything else out held. Do not give out
// another writer. Run returns nil when ctx is done; if in is closed, the
// runner keeps its outputs and waits for ctx (a map closed before Run is
// translated once, from its final contents). Run must not be called again
// while it is running; Name and Ready are safe to call from any goroutine.
func Derive[K1 comparable, V1 any, K2 comparable, V2 any](
	name string,
	in *watchable.Map[K1, V1],
	out *watchable.Map[K2, V2],
	fn func(ctx context.Context, k K1, v V1) (map[K2]V2, error),
	opts ...Option,
) runner.Runner {
	cfg := newConfig(opts)
	return &derivation[K1, V1, K2, V2]{
		name:  name,
		in:    in,
		out:   out,
		fn:    fn,
		equal: inputEqual[V1](cfg, "Derive", name),
		cfg:   cfg,
		ready: make(chan struct{}),
	}
}

type derivation[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	name      string
	in        *watchable.Map[K1, V1]
	out       *watchable.Map[K2, V2]
	fn        func(ctx context.Context, k K1, v V1) (map[K2]V2, error)
	equal     func(a, b V1) bool // nil: every change is translated
	cfg       config
	ready     chan struct{}
	readyOnce sync.Once
}

// Name returns the name given to Derive.
func (d *derivation[K1, V1, K2, V2]) Name() string { return d.name }

// Ready is closed once the first translation of the whole input has been
// published to the output map.
func (d *derivation[K1, V1, K2, V2]) Ready() <-chan struct{} { return d.ready }

// Run translates until ctx is done, then returns nil.
func (d *derivation[K1, V1, K2, V2]) Run(ctx context.Context) error {
	r := &deriveRun[K1, V1, K2, V2]{
		d:         d,
		health:    runner.HealthOf(ctx),
		produced:  make(map[K1]map[K2]V2),
		claims:    make(map[K2][]K1),
		failed:    make(map[K1]error),
		conflicts: make(map[K2]*ConflictError[K1, K2]),
	}
	follow(ctx, d.in, r.apply, func() { d.readyOnce.Do(func() { close(d.ready) }) })
	return nil
}

// deriveRun is the state of one Run: what each input key produced last, and
// who claims each output key. It is only used by the Run goroutine.
type deriveRun[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	d      *derivation[K1, V1, K2, V2]
	health runner.Health

	// produced holds the last successful result per input key.
	produced map[K1]map[K2]V2
	// claims lists the input keys producing each output key, ordered by
	// compareKeys: claims[k2][0] is the one published.
	claims map[K2][]K1

	failed    map[K1]error
	conflicts map[K2]*ConflictError[K1, K2]
	dirty     bool // failed or conflicts changed since the last report

	touched []K2 // output keys to publish in this snapshot

	prev watchable.State[K1, V1] // the input as of the last snapshot, for equal
}

// apply translates the changes of snap and publishes the result. It
// returns false, having published nothing, when ctx is done before it
// finishes: Run is ending, and errors caused by the cancellation are not
// failures of the transformation.
func (r *deriveRun[K1, V1, K2, V2]) apply(ctx context.Context, snap watchable.Snapshot[K1, V1], first bool) bool {
	r.touched = r.touched[:0]
	for _, u := range snap.Updates {
		if ctx.Err() != nil {
			return false
		}
		if u.Delete {
			r.set(u.Key, nil)
			if _, ok := r.failed[u.Key]; ok {
				delete(r.failed, u.Key)
				r.dirty = true
			}
			continue
		}
		outs, skip, stack, err := r.call(ctx, u.Key, u.Value)
		if skip {
			continue // equal to the value translated before
		}
		if err != nil {
			if ctx.Err() != nil {
				return false
			}
			r.fail(u.Key, err, stack)
			continue
		}
		if _, ok := r.failed[u.Key]; ok {
			delete(r.failed, u.Key)
			r.dirty = true
		}
		r.set(u.Key, outs)
	}
	if r.d.equal != nil {
		r.prev = snap.State
	}
	r.publish(first)
	r.checkConflicts()
	if r.dirty {
		r.dirty = false
		r.health.Report(problemKey(r.d.name), r.summary())
	}
	return true
}

// call runs the transformation, unless v equals the previous value by the
// input equality (skip), turning a panic into an error.
func (r *deriveRun[K1, V1, K2, V2]) call(ctx context.Context, k K1, v V1) (outs map[K2]V2, skip bool, stack []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			outs, skip, stack, err = nil, false, debug.Stack(), fmt.Errorf("%w: %v", ErrPanicked, p)
		}
	}()
	if r.d.equal != nil {
		if old, ok := r.prev.Get(k); ok && r.d.equal(old, v) {
			return nil, true, nil, nil
		}
	}
	outs, err = r.d.fn(ctx, k, v)
	return outs, false, nil, err
}

func (r *deriveRun[K1, V1, K2, V2]) fail(k K1, err error, stack []byte) {
	ke := &KeyError[K1]{Translator: r.d.name, Key: k, Err: err}
	r.failed[k] = ke
	r.dirty = true
	if stack != nil {
		r.d.cfg.log().Error("transformation panicked", "runner", r.d.name, "key", k, "error", ke, "stack", string(stack))
	} else {
		r.d.cfg.log().Warn("transformation failed", "runner", r.d.name, "key", k, "error", ke)
	}
	if r.d.cfg.onError != nil {
		r.d.cfg.onError(ke)
	}
}

// set records outs as what k produces now, and marks the output keys whose
// published value may change.
func (r *deriveRun[K1, V1, K2, V2]) set(k K1, outs map[K2]V2) {
	prev := r.produced[k]
	for k2 := range prev {
		if _, still := outs[k2]; !still {
			r.unclaim(k2, k)
			r.touched = append(r.touched, k2)
		}
	}
	for k2, v2 := range outs {
		old, had := prev[k2]
		switch {
		case !had:
			r.claim(k2, k)
		case r.claims[k2][0] != k || watchable.DeepEqual(old, v2):
			continue // not published, or unchanged
		}
		r.touched = append(r.touched, k2)
	}
	if len(outs) == 0 {
		delete(r.produced, k)
	} else {
		r.produced[k] = outs
	}
}

func (r *deriveRun[K1, V1, K2, V2]) claim(k2 K2, k K1) {
	c := r.claims[k2]
	i, _ := slices.BinarySearchFunc(c, k, compareKeys[K1])
	r.claims[k2] = slices.Insert(c, i, k)
}

func (r *deriveRun[K1, V1, K2, V2]) unclaim(k2 K2, k K1) {
	c := r.claims[k2]
	i := slices.Index(c, k)
	if i < 0 {
		return
	}
	if len(c) == 1 {
		delete(r.claims, k2)
		return
	}
	r.claims[k2] = slices.Delete(c, i, i+1)
}

// publish writes the touched output keys, or everything on the first
// snapshot, to the output map.
func (r *deriveRun[K1, V1, K2, V2]) publish(first bool) {
	if first {
		all := make(map[K2]V2, len(r.claims))
		for k2, c := range r.claims {
			all[k2] = r.produced[c[0]][k2]
		}
		r.d.out.Replace(all)
		return
	}
	if len(r.touched) == 0 {
		return
	}
	r.d.out.Batch(func(b *watchable.Batch[K2, V2]) {
		for _, k2 := range r.touched {
			if c := r.claims[k2]; len(c) > 0 {
				b.Store(k2, r.produced[c[0]][k2])
			} else {
				b.Delete(k2)
			}
		}
	})
}

// checkConflicts updates the reported conflicts for the touched output keys.
func (r *deriveRun[K1, V1, K2, V2]) checkConflicts() {
	for _, k2 := range r.touched {
		c := r.claims[k2]
		old, had := r.conflicts[k2]
		if len(c) < 2 {
			if had {
				delete(r.conflicts, k2)
				r.dirty = true
			}
			continue
		}
		if had && slices.Equal(old.Claimants, c) {
			continue
		}
		ce := &ConflictError[K1, K2]{Translator: r.d.name, Key: k2, Claimants: slices.Clone(c), Winner: c[0]}
		r.conflicts[k2] = ce
		r.dirty = true
		r.d.cfg.log().Warn("output key conflict", "runner", r.d.name, "key", k2, "error", ce)
		if r.d.cfg.onError != nil {
			r.d.cfg.onError(ce)
		}
	}
}

func (r *deriveRun[K1, V1, K2, V2]) summary() error {
	errs := make([]error, 0, len(r.failed)+len(r.conflicts))
	for _, err := range r.failed {
		errs = append(errs, err)
	}
	for _, err := range r.conflicts {
		errs = append(errs, err)
	}
	return summarize(errs)
}
