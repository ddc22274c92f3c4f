package translator

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"runtime/debug"
	"sync"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Group returns a runner that keeps out holding one entry per group of the
// entries of in: key names the group of each input entry, and build makes a
// group's output value from its members.
//
// key says which group an input entry belongs to, if any (false: none). It
// must be a pure function of its arguments; it is called for every input
// entry that changes. build makes the value of one group from all its
// members; it is called only for groups whose membership or members' values
// changed. The members passed to build come in no particular order, and
// the iterator is valid only during the call. Values seen by key and build
// (v and the members' values) are shared with the input map and must not
// be mutated; the value build returns is copied into out. Both run on the
// runner's goroutine, one call at a time.
//
// While it runs, the runner:
//
//   - groups every entry of in when it starts, builds every group, and makes
//     out exactly the result (one Replace, so anything else out held is
//     deleted), then becomes ready;
//   - for each snapshot it reads from in, moves the changed entries between
//     groups, builds again only the groups that gained, lost or changed a
//     member (an entry whose key changed affects both its old and its new
//     group), and applies the results to out as one Batch: a group whose
//     last member left is deleted, and an output that builds to an equal
//     value is not written again;
//   - when build returns an error or panics, keeps the group's previous
//     output (or none, if it never built) and reports a *KeyError whose Key
//     is the group key (type K2), until the group builds again or loses its
//     last member; when key panics, keeps the entry where it was, with its
//     previous value, and reports a *KeyError whose Key is the input key
//     (type K1), until key succeeds for it or it is deleted.
//
// With WithInputEqual, a change to an entry that compares equal to its
// previous value and stays in the same group does not rebuild the group;
// the next build of the group sees the newest value. Use it when inputs
// change often in ways the outputs ignore, such as a timestamp that
// heartbeats move.
//
// Failures are reported through runner.HealthOf(ctx) under the key
// "translator " + name (the current set, cleared when the last one is
// resolved), so problems that build reports under keys of its own are left
// alone; they are also logged (see WithLogger) and passed to
// WithErrorHandler.
//
// The runner is the owner of out: do not give out another writer. Run
// returns nil when ctx is done; if in is closed, the runner keeps its
// outputs and waits for ctx. Run must not be called again while it is
// running. The returned runner is also a runner.Readier.
//
// Group panics if WithInputEqual was given a function for a type other
// than V1.
func Group[K1 comparable, V1 any, K2 comparable, V2 any](
	name string,
	in *watchable.Map[K1, V1],
	out *watchable.Map[K2, V2],
	key func(k K1, v V1) (K2, bool),
	build func(ctx context.Context, group K2, members iter.Seq2[K1, V1]) (V2, error),
	opts ...Option,
) runner.Runner {
	cfg := newConfig(opts)
	return &grouping[K1, V1, K2, V2]{
		name:  name,
		in:    in,
		out:   out,
		key:   key,
		build: build,
		equal: inputEqual[V1](cfg, "Group", name),
		cfg:   cfg,
		ready: make(chan struct{}),
	}
}

type grouping[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	name      string
	in        *watchable.Map[K1, V1]
	out       *watchable.Map[K2, V2]
	key       func(k K1, v V1) (K2, bool)
	build     func(ctx context.Context, group K2, members iter.Seq2[K1, V1]) (V2, error)
	equal     func(a, b V1) bool // nil: every change rebuilds
	cfg       config
	ready     chan struct{}
	readyOnce sync.Once
}

// Name returns the name given to Group.
func (g *grouping[K1, V1, K2, V2]) Name() string { return g.name }

// Ready is closed once the first grouping of the whole input has been
// published to the output map.
func (g *grouping[K1, V1, K2, V2]) Ready() <-chan struct{} { return g.ready }

// Run groups until ctx is done, then returns nil.
func (g *grouping[K1, V1, K2, V2]) Run(ctx context.Context) error {
	r := &groupRun[K1, V1, K2, V2]{
		g:         g,
		health:    runner.HealthOf(ctx),
		groupOf:   make(map[K1]K2),
		members:   make(map[K2]map[K1]V1),
		failed:    make(map[K2]error),
		keyFailed: make(map[K1]error),
		touched:   make(map[K2]struct{}),
	}
	follow(ctx, g.in, r.apply, func() { g.readyOnce.Do(func() { close(g.ready) }) })
	return nil
}

// groupRun is the state of one Run: the membership of every group. It is
// only used by the Run goroutine.
type groupRun[K1 comparable, V1 any, K2 comparable, V2 any] struct {
	g      *grouping[K1, V1, K2, V2]
	health runner.Health

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
	if had && in && r.g.equal != nil && r.groupOf[k] == group {
		same = r.g.equal(prev, v)
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
