package translator

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"runtime/debug"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// GroupBy returns a translator that keeps its output map holding one entry
// per group of the entries of in: key names the group of each input entry,
// and build makes a group's output value from its members. The translator
// creates the output and is its only writer; Output returns a read-only
// view of it, available at once, so consumers can be wired (and can
// subscribe) before Run.
//
// key says which group an input entry belongs to, if any (false: none). It
// must be a pure function of its arguments; it is called for every input
// entry that changes. build makes the value of one group from all its
// members; it is called only for groups whose membership or members' values
// changed. The members passed to build come in no particular order, and
// the iterator is valid only during the call. Values seen by key and build
// (v and the members' values) are shared with the input map and must not
// be mutated; the value build returns is copied into the output. Both run
// on Run's goroutine, one call at a time; build gets Run's ctx.
//
// While it runs, the translator:
//
//   - groups every entry of in when it starts, builds every group, and makes
//     the output exactly the result (one Replace);
//   - for each snapshot it reads from in, moves the changed entries between
//     groups, builds again only the groups that gained, lost or changed a
//     member (an entry whose key changed affects both its old and its new
//     group), and applies the results to the output as one Batch: a group
//     whose last member left is deleted, and an output that builds to an
//     equal value is not written again;
//   - when build returns an error or panics, keeps the group's previous
//     output (or none, if it never built) and reports a *KeyError whose Key
//     is the group key (type K2), until the group builds again or loses its
//     last member; when key panics, keeps the entry where it was, with its
//     previous value, and reports a *KeyError whose Key is the input key
//     (type K1), until key succeeds for it or it is deleted.
//
// The output is initialized (see watchable.Map.RegisterInitializer), and
// Ready closed, once the grouping of a snapshot of in taken while in was
// initialized has been published. Until then, groupings of an uninitialized
// input are published as they come, so the output may be partial, and its
// snapshots say Initialized false. Groups that fail to build do not hold
// initialization back; they are reported.
//
// Failures are reported through runner.HealthOf(ctx) under the key
// "translator " + name (the current set, cleared when the last one is
// resolved), so problems that build reports under keys of its own are left
// alone; they are also logged (see WithLogger) and passed to
// WithErrorHandler.
//
// GroupBy panics if in is a zero watchable.View.
func GroupBy[K1 comparable, V1 any, K2 comparable, V2 any](
	name string,
	in watchable.View[K1, V1],
	key func(k K1, v V1) (K2, bool),
	build func(ctx context.Context, group K2, members iter.Seq2[K1, V1]) (V2, error),
	opts ...Option,
) *Grouping[K1, V1, K2, V2] {
	checkInput(fmt.Sprintf("translator.GroupBy %s: input", name), in)
	g := &Grouping[K1, V1, K2, V2]{name: name, in: in, key: key, build: build, cfg: newConfig(opts)}
	g.initialized = g.out.RegisterInitializer(name)
	return g
}

// Grouping is the translator GroupBy returns: a runner.Runner and a
// runner.Readier. Name, Ready and Output are safe to call from any
// goroutine, at any time. Run may be called again after it has returned,
// not while it runs.
type Grouping[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	name        string
	in          watchable.View[K1, V1]
	out         watchable.Map[K2, V2]
	initialized func() // the output's initializer
	key         func(k K1, v V1) (K2, bool)
	build       func(ctx context.Context, group K2, members iter.Seq2[K1, V1]) (V2, error)
	cfg         config

	guard runGuard
	equal func(a, b V1) bool // guarded by guard; nil: every change rebuilds
}

// Name returns the name given to GroupBy.
func (g *Grouping[K1, V1, K2, V2]) Name() string { return g.name }

// Output returns the read-only view of the map the translator writes.
func (g *Grouping[K1, V1, K2, V2]) Output() watchable.View[K2, V2] { return g.out.View() }

// Ready returns the output's Initialized channel: it is closed once the
// output holds the grouping of the initialized input (see GroupBy), and
// stays closed.
func (g *Grouping[K1, V1, K2, V2]) Ready() <-chan struct{} { return g.out.Initialized() }

// WithInputEqual makes the translator ignore a change to an input entry
// that eq reports equal to its previous value and that stays in the same
// group: the group is not built again, and its next build sees the newest
// value. An entry that moves to another group is always a change. Use it
// when inputs often change in fields the outputs ignore, such as a
// timestamp that heartbeats move: without it, such a change costs a build
// whose result equals what is published.
//
// eq must be an equivalence (reflexive, symmetric, transitive) and must not
// mutate its arguments; it runs on Run's goroutine, and a panic in it counts
// as a failure of the key function for that input key. A nil eq rebuilds on
// every change, as without WithInputEqual.
//
// Call it before Run, typically where the translator is made; it returns g
// so that the calls chain:
//
//	translator.GroupBy("endpoints", instances, byService, endpoints).WithInputEqual(sameExceptHeartbeat)
//
// Calling it while Run is running is a programming error: it panics.
func (g *Grouping[K1, V1, K2, V2]) WithInputEqual(eq func(a, b V1) bool) *Grouping[K1, V1, K2, V2] {
	g.guard.configure("translator.Grouping "+g.name, "WithInputEqual", func() { g.equal = eq })
	return g
}

// Run groups until ctx is done, then returns nil. If in is closed, Run
// keeps the outputs and waits for ctx; a map closed before Run is grouped
// once, from its final contents. A Run that follows an earlier one starts
// again from in's current contents, and its first publication makes the
// output exactly what it produces. Run panics if it is running already.
func (g *Grouping[K1, V1, K2, V2]) Run(ctx context.Context) error {
	r := &groupRun[K1, V1, K2, V2]{
		g:         g,
		health:    runner.HealthOf(ctx),
		groupOf:   make(map[K1]K2),
		members:   make(map[K2]map[K1]V1),
		failed:    make(map[K2]error),
		keyFailed: make(map[K1]error),
		touched:   make(map[K2]struct{}),
	}
	g.guard.start("translator.Grouping "+g.name, func() { r.equal = g.equal })
	defer g.guard.stop()
	follow(ctx, g.in, r.apply, g.initialized)
	return nil
}

// groupRun is the state of one Run: the membership of every group. It is
// only used by the Run goroutine.
type groupRun[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	g      *Grouping[K1, V1, K2, V2]
	health runner.Health
	equal  func(a, b V1) bool // nil: every change rebuilds

	groupOf map[K1]K2        // the group of each input key that has one
	members map[K2]map[K1]V1 // the newest value of each member, by group
	touched map[K2]struct{}  // groups to build in this snapshot
	results []groupResult[K2, V2]

	failed    map[K2]error // build failures, by group
	keyFailed map[K1]error // key failures, by input key
	dirty     bool         // failed or keyFailed changed since the last report
}

type groupResult[K2 comparable, V2 any] struct {
	group  K2
	value  V2
	delete bool
}

// apply moves the changed entries between groups, builds the groups that
// changed and publishes them as one batch (one Replace for the first
// snapshot). It reports false, publishing nothing, when ctx ended the work
// part way.
func (r *groupRun[K1, V1, K2, V2]) apply(ctx context.Context, snap watchable.Snapshot[K1, V1], first bool) bool {
	for _, u := range snap.Updates {
		if ctx.Err() != nil {
			return false
		}
		r.update(ctx, u)
	}
	if first {
		// Every group is built, whatever the updates said.
		for group := range r.members {
			r.touched[group] = struct{}{}
		}
	}
	if !r.buildTouched(ctx) {
		return false
	}
	r.publish(first)
	if r.dirty {
		r.dirty = false
		r.health.Report(problemKey(r.g.name), r.summary())
	}
	return true
}

// update moves one changed input entry between groups, marking the groups
// to build.
func (r *groupRun[K1, V1, K2, V2]) update(ctx context.Context, u watchable.Update[K1, V1]) {
	old, had := r.groupOf[u.Key]
	if u.Delete {
		if had {
			r.leave(u.Key, old)
		}
		r.clearKeyFailure(u.Key)
		return
	}
	var prev V1
	if had {
		prev = r.members[old][u.Key]
	}
	group, in, same, stack, err := r.place(u.Key, u.Value, had, prev)
	if err != nil {
		r.failKey(ctx, u.Key, err, stack)
		return
	}
	r.clearKeyFailure(u.Key)
	switch {
	case had && in && group == old:
		r.members[old][u.Key] = u.Value
		if !same {
			r.touched[old] = struct{}{}
		}
	default:
		if had {
			r.leave(u.Key, old)
		}
		if in {
			m := r.members[group]
			if m == nil {
				m = make(map[K1]V1)
				r.members[group] = m
			}
			m[u.Key] = u.Value
			r.groupOf[u.Key] = group
			r.touched[group] = struct{}{}
		}
	}
}

// place calls key for k, and the input equality if k stays in its group,
// turning a panic into an error.
func (r *groupRun[K1, V1, K2, V2]) place(k K1, v V1, had bool, prev V1) (group K2, in, same bool, stack []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			stack, err = debug.Stack(), fmt.Errorf("key function: %w: %v", ErrPanicked, p)
		}
	}()
	group, in = r.g.key(k, v)
	if had && in && r.equal != nil && r.groupOf[k] == group {
		same = r.equal(prev, v)
	}
	return group, in, same, nil, nil
}

// leave removes k from group.
func (r *groupRun[K1, V1, K2, V2]) leave(k K1, group K2) {
	delete(r.members[group], k)
	delete(r.groupOf, k)
	r.touched[group] = struct{}{}
}

// buildTouched builds the touched groups into r.results. It runs before
// the output's Batch, so that build never runs with the output locked. It
// reports false when ctx ended the work part way.
func (r *groupRun[K1, V1, K2, V2]) buildTouched(ctx context.Context) bool {
	r.results = r.results[:0]
	for group := range r.touched {
		delete(r.touched, group)
		m := r.members[group]
		if len(m) == 0 {
			delete(r.members, group)
			r.clearFailure(group)
			r.results = append(r.results, groupResult[K2, V2]{group: group, delete: true})
			continue
		}
		v, stack, err := r.call(ctx, group, m)
		if err != nil {
			if ctx.Err() != nil {
				return false // cut short by the end of Run, not a failure
			}
			r.fail(ctx, group, err, stack)
			continue // the previous output stays
		}
		r.clearFailure(group)
		r.results = append(r.results, groupResult[K2, V2]{group: group, value: v})
	}
	return true
}

// call runs build, turning a panic into an error.
func (r *groupRun[K1, V1, K2, V2]) call(ctx context.Context, group K2, m map[K1]V1) (v V2, stack []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero V2
			v, stack, err = zero, debug.Stack(), fmt.Errorf("%w: %v", ErrPanicked, p)
		}
	}()
	v, err = r.g.build(ctx, group, maps.All(m))
	return v, nil, err
}

func (r *groupRun[K1, V1, K2, V2]) publish(first bool) {
	if first {
		all := make(map[K2]V2, len(r.results))
		for _, res := range r.results {
			if !res.delete {
				all[res.group] = res.value
			}
		}
		r.g.out.Replace(all)
	} else if len(r.results) > 0 {
		r.g.out.Batch(func(b *watchable.Batch[K2, V2]) {
			for _, res := range r.results {
				if res.delete {
					b.Delete(res.group)
				} else {
					b.Store(res.group, res.value)
				}
			}
		})
	}
	clear(r.results) // drop references to the built values
}

func (r *groupRun[K1, V1, K2, V2]) fail(ctx context.Context, group K2, err error, stack []byte) {
	if ctx.Err() != nil {
		return // stopping: build most likely failed because of it
	}
	ke := &KeyError[K2]{Translator: r.g.name, Key: group, Err: err}
	r.failed[group] = ke
	r.dirty = true
	r.log(ke, group, stack, "build panicked", "build failed")
}

func (r *groupRun[K1, V1, K2, V2]) failKey(ctx context.Context, k K1, err error, stack []byte) {
	if ctx.Err() != nil {
		return
	}
	ke := &KeyError[K1]{Translator: r.g.name, Key: k, Err: err}
	r.keyFailed[k] = ke
	r.dirty = true
	r.log(ke, k, stack, "key function panicked", "key function failed")
}

func (r *groupRun[K1, V1, K2, V2]) log(err error, key any, stack []byte, panicked, failed string) {
	if stack != nil {
		r.g.cfg.log().Error(panicked, "runner", r.g.name, "key", key, "error", err, "stack", string(stack))
	} else {
		r.g.cfg.log().Warn(failed, "runner", r.g.name, "key", key, "error", err)
	}
	if r.g.cfg.onError != nil {
		r.g.cfg.onError(err)
	}
}

func (r *groupRun[K1, V1, K2, V2]) clearFailure(group K2) {
	if _, ok := r.failed[group]; ok {
		delete(r.failed, group)
		r.dirty = true
	}
}

func (r *groupRun[K1, V1, K2, V2]) clearKeyFailure(k K1) {
	if _, ok := r.keyFailed[k]; ok {
		delete(r.keyFailed, k)
		r.dirty = true
	}
}

func (r *groupRun[K1, V1, K2, V2]) summary() error {
	errs := make([]error, 0, len(r.failed)+len(r.keyFailed))
	for _, err := range r.failed {
		errs = append(errs, err)
	}
	for _, err := range r.keyFailed {
		errs = append(errs, err)
	}
	return summarize(errs)
}
