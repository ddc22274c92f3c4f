package generate

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// New returns a translator that keeps its output holding the resources that
// the generators make for every application of apps, with the platform and
// runtime configuration of the workspaces they name. The translator creates
// the output and is its only writer; Output returns a read-only view of it,
// available at once, so consumers can be wired (and can subscribe) before
// Run.
//
// For each application, the workload generator runs first; then the
// generator of each accessory, in the order of the module names, each
// given the resources the workload generator made. Their resources are
// collected, their patchers are checked for conflicts and applied to the
// workload (see Patcher), and the result is published under keys
// Key{App: the application's key, ID: the resource's ID}.
//
// While it runs, the translator:
//
//   - generates every application when it starts, and makes the output
//     exactly the result;
//   - generates again only the applications whose inputs changed: the
//     App itself, or the part of its workspace it uses (its runtime
//     configuration, and the platform configuration of its modules); a
//     change to a module that an application does not use does not touch
//     it;
//   - publishes the changes of a snapshot of the inputs as one batch, so an
//     application's resources change together: resources whose contents
//     changed are stored, those no longer produced are deleted, and an
//     application deleted from apps has all its resources deleted;
//   - when a generator fails or panics for an application, when its
//     response is invalid, or when two generators conflict, keeps that
//     application's last published resources and reports the failure,
//     until the application generates again.
//
// The output is initialized, and Ready closed, once both inputs are
// initialized and every application of them has been generated (those that
// fail do not hold it back; they are reported).
//
// Failures are reported through runner.HealthOf(ctx) under the key
// "translator " + name, as *translator.KeyError values keyed by application
// (see WithErrorHandler); they are also logged, to slog.Default() unless
// WithLogger says otherwise.
//
// New panics if apps or workspaces is a zero watchable.View, if workload is
// nil, or if WithGenerator was misused.
func New[K comparable](
	name string,
	apps watchable.View[K, App],
	workspaces watchable.View[string, Workspace],
	workload Generator,
	opts ...Option,
) *Generation[K] {
	checkView(name, "apps", apps)
	checkView(name, "workspaces", workspaces)
	if workload == nil {
		panic(fmt.Sprintf("generate.New %s: nil workload generator", name))
	}
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	for _, m := range cfg.dups {
		panic(fmt.Sprintf("generate.New %s: module %q registered twice", name, m))
	}
	for m, g := range cfg.generators {
		switch {
		case m == "":
			panic(fmt.Sprintf("generate.New %s: WithGenerator with an empty module name", name))
		case m == WorkloadModule:
			panic(fmt.Sprintf("generate.New %s: module %q is the workload generator's", name, m))
		case g == nil:
			panic(fmt.Sprintf("generate.New %s: nil generator for module %q", name, m))
		}
	}

	g := &Generation[K]{
		name:       name,
		workload:   workload,
		generators: cfg.generators,
		join:       &join[K]{apps: apps, workspaces: workspaces},
	}
	g.join.initialized = g.join.out.RegisterInitializer(name)
	topts := []translator.Option{translator.WithLogger(cfg.logger)}
	if cfg.onError != nil {
		topts = append(topts, translator.WithErrorHandler(cfg.onError))
	}
	g.derive = translator.Derive(name, g.join.out.View(), g.generate, topts...)
	return g
}

// Generation is the translator New returns: a runner.Runner and a
// runner.Readier. Name, Ready and Output are safe to call from any
// goroutine, at any time. Run may be called again after it has returned,
// not while it runs.
type Generation[K comparable] struct {
	name       string
	workload   Generator
	generators map[string]Generator // by module name
	join       *join[K]
	derive     *translator.Derivation[K, *job, Key[K], Resource]
	running    atomic.Bool
}

// Name returns the name given to New.
func (g *Generation[K]) Name() string { return g.name }

// Output returns the read-only view of the map the translator writes: every
// application's resources, keyed by application and resource ID.
func (g *Generation[K]) Output() watchable.View[Key[K], Resource] { return g.derive.Output() }

// Ready returns the output's Initialized channel: it is closed once the
// output holds the resources of every application of the initialized
// inputs (see New), and stays closed.
func (g *Generation[K]) Ready() <-chan struct{} { return g.derive.Ready() }

// Run generates until ctx is done, then returns nil. If an input map is
// closed, Run keeps going with its final contents. A Run that follows an
// earlier one starts again from the inputs' current contents. Run panics if
// it is running already.
func (g *Generation[K]) Run(ctx context.Context) error {
	if !g.running.CompareAndSwap(false, true) {
		panic(fmt.Sprintf("generate.Generation %s: Run called while it is running", g.name))
	}
	defer g.running.Store(false)
	joined := make(chan struct{})
	go func() {
		defer close(joined)
		g.join.run(ctx)
	}()
	err := g.derive.Run(ctx)
	<-joined
	return err
}

// checkView panics, naming the input, if v is a zero View.
func checkView[K comparable, V any](name, what string, v watchable.View[K, V]) {
	defer func() {
		if p := recover(); p != nil {
			panic(fmt.Sprintf("generate.New %s: %s cannot be watched: %v", name, what, p))
		}
	}()
	v.Initialized() // a zero View panics here
}
