package generate

import (
	"context"
	"reflect"

	"github.com/switchyard-go/switchyard/watchable"
)

// A job is everything one application's generation reads: the application,
// and the parts of its workspace it uses. The join keeps a map of jobs, one
// per application, from the applications and the workspaces; the
// generation proper is a translator.Derive of that map, so an application is
// generated again exactly when its job changes, and a workspace change
// reaches only the applications whose part of it changed.
//
// A job is immutable once made: it shares the application and the
// configurations with the input maps' States, which nobody mutates either.
type job struct {
	app      App
	missing  bool              // app.Workspace names no workspace
	platform map[string]Config // the workspace's configuration of the modules app uses
	runtime  Config
}

// DeepCopy returns j itself: a job is never mutated, so a copy would share
// no mutable memory either, and the join's map stores jobs without copying
// applications.
func (j *job) DeepCopy() *job { return j }

// Equal reports whether j and o hold equal contents, so that storing an
// equal job is no change. Applications and configurations that did not
// change are the same maps, which compare at once.
func (j *job) Equal(o *job) bool { return reflect.DeepEqual(j, o) }

func newJob(app App, workspaces watchable.State[string, Workspace]) *job {
	j := &job{app: app}
	if app.Workspace == "" {
		return j
	}
	ws, ok := workspaces.Get(app.Workspace)
	if !ok {
		j.missing = true
		return j
	}
	j.runtime = ws.Runtime
	for _, m := range append([]string{WorkloadModule}, keys(app.Accessories)...) {
		if c, ok := ws.Modules[m]; ok {
			if j.platform == nil {
				j.platform = make(map[string]Config)
			}
			j.platform[m] = c
		}
	}
	return j
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// join keeps out holding one job per application of apps.
type join[K comparable] struct {
	apps        watchable.View[K, App]
	workspaces  watchable.View[string, Workspace]
	out         watchable.Map[K, *job]
	initialized func() // out's initializer
}

// joinRun is the state of one run of the join.
type joinRun[K comparable] struct {
	j          *join[K]
	apps       feed[K, App]
	workspaces feed[string, Workspace]

	workspaceOf map[K]string              // the workspace each application names, if any
	users       map[string]map[K]struct{} // the applications naming each workspace
	dirty       map[K]struct{}            // applications whose job may have changed
}

// run keeps the jobs up to date until ctx is done. It publishes nothing until
// it has a first State of both inputs, then the jobs of every application
// (one Replace), then, for each change, the jobs of the applications it
// touched (one Batch); out becomes initialized once both inputs are and
// their jobs are published.
func (j *join[K]) run(ctx context.Context) {
	r := &joinRun[K]{
		j:           j,
		apps:        feed[K, App]{view: j.apps, sub: j.apps.Subscribe(ctx)},
		workspaces:  feed[string, Workspace]{view: j.workspaces, sub: j.workspaces.Subscribe(ctx)},
		workspaceOf: make(map[K]string),
		users:       make(map[string]map[K]struct{}),
		dirty:       make(map[K]struct{}),
	}
	first, marked := true, false
	for {
		if !r.receive(ctx, true) {
			return
		}
		// Take what the other input has ready too, so that changes to
		// both make one publication; a bounded number of times, so that
		// a busy input cannot hold publication back.
		for range 2 {
			if !r.receive(ctx, false) {
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		if !r.apps.seen || !r.workspaces.seen {
			continue
		}
		r.publish(first)
		first = false
		if !marked && r.apps.init && r.workspaces.init {
			marked = true
			j.initialized()
		}
	}
}

// receive takes one event from either input, waiting for it if wait is true,
// and records what it changes. It reports false when ctx is done, or when
// there was nothing to take without waiting.
func (r *joinRun[K]) receive(ctx context.Context, wait bool) bool {
	if wait {
		select {
		case <-ctx.Done():
			return false
		case snap, ok := <-r.apps.sub:
			r.appsDelivered(ctx, snap, ok)
		case snap, ok := <-r.workspaces.sub:
			r.workspacesDelivered(ctx, snap, ok)
		case <-r.apps.initCh:
			r.apps.initialized()
		case <-r.workspaces.initCh:
			r.workspaces.initialized()
		}
	} else {
		select {
		case <-ctx.Done():
			return false
		case snap, ok := <-r.apps.sub:
			r.appsDelivered(ctx, snap, ok)
		case snap, ok := <-r.workspaces.sub:
			r.workspacesDelivered(ctx, snap, ok)
		case <-r.apps.initCh:
			r.apps.initialized()
		case <-r.workspaces.initCh:
			r.workspaces.initialized()
		default:
			return false
		}
	}
	return ctx.Err() == nil
}

func (r *joinRun[K]) appsDelivered(ctx context.Context, snap watchable.Snapshot[K, App], ok bool) {
	for _, u := range r.apps.take(ctx, snap, ok) {
		r.appChanged(u)
	}
}

func (r *joinRun[K]) workspacesDelivered(ctx context.Context, snap watchable.Snapshot[string, Workspace], ok bool) {
	for _, u := range r.workspaces.take(ctx, snap, ok) {
		for k := range r.users[u.Key] {
			r.dirty[k] = struct{}{}
		}
	}
}

func (r *joinRun[K]) appChanged(u watchable.Update[K, App]) {
	r.dirty[u.Key] = struct{}{}
	name := ""
	if !u.Delete {
		name = u.Value.Workspace
	}
	old, had := r.workspaceOf[u.Key]
	if had && old == name {
		return
	}
	if had {
		delete(r.users[old], u.Key)
		if len(r.users[old]) == 0 {
			delete(r.users, old)
		}
		delete(r.workspaceOf, u.Key)
	}
	if name != "" {
		r.workspaceOf[u.Key] = name
		if r.users[name] == nil {
			r.users[name] = make(map[K]struct{})
		}
		r.users[name][u.Key] = struct{}{}
	}
}

// publish writes the jobs of the dirty applications, or of every
// application the first time. Jobs equal to the published ones are no
// change, so their applications are not generated again.
func (r *joinRun[K]) publish(first bool) {
	apps, workspaces := r.apps.state, r.workspaces.state
	if first {
		all := make(map[K]*job, apps.Len())
		for k, app := range apps.All() {
			all[k] = newJob(app, workspaces)
		}
		clear(r.dirty)
		r.j.out.Replace(all)
		return
	}
	if len(r.dirty) == 0 {
		return
	}
	jobs := make(map[K]*job, len(r.dirty)) // nil: delete
	for k := range r.dirty {
		if app, ok := apps.Get(k); ok {
			jobs[k] = newJob(app, workspaces)
		} else {
			jobs[k] = nil
		}
	}
	clear(r.dirty)
	r.j.out.Batch(func(b *watchable.Batch[K, *job]) {
		for k, jb := range jobs {
			if jb == nil {
				b.Delete(k)
			} else {
				b.Store(k, jb)
			}
		}
	})
}

// feed is one input of the join: its subscription and what it has
// delivered.
type feed[K comparable, V any] struct {
	view   watchable.View[K, V]
	sub    <-chan watchable.Snapshot[K, V] // nil once closed
	state  watchable.State[K, V]
	seen   bool            // state holds a first State
	init   bool            // the input is initialized
	initCh <-chan struct{} // the input's Initialized, watched once sub closed before it was initialized
}

// take records a receive from f.sub and returns the updates it brings. A
// closed subscription means that ctx is done (nothing to do) or that the
// input map was closed: its contents are then final, and if it closed
// before delivering anything they are taken once from its State, as a
// translator does. Its initialization may still complete afterwards.
func (f *feed[K, V]) take(ctx context.Context, snap watchable.Snapshot[K, V], ok bool) []watchable.Update[K, V] {
	if ok {
		f.state, f.init, f.seen = snap.State, snap.Initialized, true
		return snap.Updates
	}
	if ctx.Err() != nil {
		return nil
	}
	f.sub = nil
	var updates []watchable.Update[K, V]
	if !f.seen {
		f.state, f.seen = f.view.State(), true
		for k, v := range f.state.All() {
			updates = append(updates, watchable.Update[K, V]{Key: k, Value: v})
		}
	}
	select {
	case <-f.view.Initialized():
		f.init = true
	default:
		if !f.init {
			f.initCh = f.view.Initialized()
		}
	}
	return updates
}

// initialized records that the input, closed before it was initialized,
// is initialized now.
func (f *feed[K, V]) initialized() {
	f.init, f.initCh = true, nil
}
