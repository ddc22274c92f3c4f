package translator

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Derive returns a translator that keeps its output map equal to the union
// of fn's results over the entries of in. The translator creates the output
// and is its only writer; Output returns a read-only view of it, available
// at once, so consumers can be wired (and can subscribe) before Run.
//
// fn translates one input entry into any number of output entries (none is
// fine). It should be a pure function of its arguments: the translator calls
// it again only when that input entry changes, so anything else it reads is
// not watched (use Compute for that). v is shared with the input map and
// must not be mutated; the returned map must not be used by fn after it
// returns. fn runs on Run's goroutine, one call at a time, with Run's ctx.
//
// While it runs, the translator:
//
//   - translates every entry of in when it starts, and makes the output
//     exactly the result (one Replace);
//   - translates only the input keys that changed in each snapshot it reads
//     from in, and applies the net result to the output as one Batch:
//     outputs whose value changed are stored, outputs that the key produced
//     before and no longer produces are deleted, and deleting an input key
//     deletes all its outputs;
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
// The output is initialized (see watchable.Map.RegisterInitializer), and
// Ready closed, once the translation of a snapshot of in taken while in was
// initialized has been published. Until then, translations of an
// uninitialized input are published as they come, so the output may be
// partial, and its snapshots say Initialized false. Keys that fail do not
// hold initialization back; they are reported.
//
// Failures are reported through runner.HealthOf(ctx) under the key
// "translator " + name (the current set, cleared when the last one is
// resolved), so problems that fn reports under keys of its own are left
// alone; they are also logged (see WithLogger) and passed to
// WithErrorHandler.
//
// Derive panics if in is a zero watchable.View.
func Derive[K1 comparable, V1 any, K2 comparable, V2 any](
	name string,
	in watchable.View[K1, V1],
	fn func(ctx context.Context, k K1, v V1) (map[K2]V2, error),
	opts ...Option,
) *Derivation[K1, V1, K2, V2] {
	checkInput(fmt.Sprintf("translator.Derive %s: input", name), in)
	d := &Derivation[K1, V1, K2, V2]{name: name, in: in, fn: fn, cfg: newConfig(opts)}
	d.initialized = d.out.RegisterInitializer(name)
	return d
}

// Derivation is the translator Derive returns: a runner.Runner and a
// runner.Readier. Name, Ready and Output are safe to call from any
// goroutine, at any time. Run may be called again after it has returned,
// not while it runs.
type Derivation[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	name        string
	in          watchable.View[K1, V1]
	out         watchable.Map[K2, V2]
	initialized func() // the output's initializer
	fn          func(ctx context.Context, k K1, v V1) (map[K2]V2, error)
	cfg         config

	guard runGuard
	equal func(a, b V1) bool // guarded by guard; nil: every change is translated
}

// Name returns the name given to Derive.
func (d *Derivation[K1, V1, K2, V2]) Name() string { return d.name }

// Output returns the read-only view of the map the translator writes.
func (d *Derivation[K1, V1, K2, V2]) Output() watchable.View[K2, V2] { return d.out.View() }

// Ready returns the output's Initialized channel: it is closed once the
// output holds the translation of the initialized input (see Derive), and
// stays closed.
func (d *Derivation[K1, V1, K2, V2]) Ready() <-chan struct{} { return d.out.Initialized() }

// WithInputEqual makes the translator ignore a change to an input entry
// when eq reports the new value equal to the previous one: the entry is not
// translated again. Use it when inputs often change in fields the outputs
// ignore, such as a timestamp that heartbeats move: without it, such a
// change costs a call of fn whose result equals what is published.
//
// eq must be an equivalence (reflexive, symmetric, transitive) and must not
// mutate its arguments; it runs on Run's goroutine, and a panic in it counts
// as a failure of the transformation for that key. A nil eq translates
// every change again, as without WithInputEqual.
//
// Call it before Run, typically where the translator is made; it returns d
// so that the calls chain:
//
//	translator.Derive("routes", listeners, route).WithInputEqual(sameExceptHeartbeat)
//
// Calling it while Run is running is a programming error: it panics.
func (d *Derivation[K1, V1, K2, V2]) WithInputEqual(eq func(a, b V1) bool) *Derivation[K1, V1, K2, V2] {
	d.guard.configure("translator.Derivation "+d.name, "WithInputEqual", func() { d.equal = eq })
	return d
}

// Run translates until ctx is done, then returns nil. If in is closed, Run
// keeps the outputs and waits for ctx; a map closed before Run is translated
// once, from its final contents. A Run that follows an earlier one starts
// again from in's current contents, and its first publication makes the
// output exactly what it produces. Run panics if it is running already.
func (d *Derivation[K1, V1, K2, V2]) Run(ctx context.Context) error {
	r := &deriveRun[K1, V1, K2, V2]{
		d:         d,
		health:    runner.HealthOf(ctx),
		produced:  make(map[K1]map[K2]V2),
		claims:    make(map[K2][]K1),
		failed:    make(map[K1]error),
		conflicts: make(map[K2]*ConflictError[K1, K2]),
	}
	d.guard.start("translator.Derivation "+d.name, func() { r.equal = d.equal })
	defer d.guard.stop()
	follow(ctx, d.in, r.apply, d.initialized)
	return nil
}

// deriveRun is the state of one Run: what each input key produced last, and
// who claims each output key. It is only used by the Run goroutine.
type deriveRun[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	d      *Derivation[K1, V1, K2, V2]
	health runner.Health
	equal  func(a, b V1) bool // nil: every change is translated

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
	if r.equal != nil {
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
	if r.equal != nil {
		if old, ok := r.prev.Get(k); ok && r.equal(old, v) {
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
