package generate_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/watchable"
)

func isReady(g *generate.Generation[string]) bool {
	select {
	case <-g.Ready():
		return true
	default:
		return false
	}
}

// TestReadyWaitsForBothInputs checks that the output is initialized only
// once both inputs are, with every application generated.
func TestReadyWaitsForBothInputs(t *testing.T) {
	for _, last := range []string{"apps", "workspaces"} {
		t.Run(last+" initialized last", func(t *testing.T) {
			f := newFixture(t)
			appsDone := f.apps.RegisterInitializer("apps loader")
			workspacesDone := f.workspaces.RegisterInitializer("workspaces loader")
			startGroup(t, runnerOnly{f.gen})

			f.workspaces.Store("ws", generate.Workspace{})
			f.apps.Store("web", app(t, `{name: web, workspace: ws, workload: {containers: [{name: web}]}}`))
			f.waitResources(t, "web", map[string]string{
				"apps/v1:Deployment:web": `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, labels: {app: web}}, spec: {template: {spec: {containers: [{name: web}]}}}}`,
			})
			if isReady(f.gen) {
				t.Fatal("ready before the inputs are initialized")
			}
			first, second := appsDone, workspacesDone
			if last == "apps" {
				first, second = workspacesDone, appsDone
			}
			first()
			f.apps.Store("api", app(t, `{name: api, workspace: ws, workload: {containers: [{name: api}]}}`))
			f.waitResources(t, "api", map[string]string{
				"apps/v1:Deployment:api": `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, labels: {app: api}}, spec: {template: {spec: {containers: [{name: api}]}}}}`,
			})
			if isReady(f.gen) {
				t.Fatalf("ready before %s are initialized", last)
			}
			second()
			receive(t, f.gen.Ready())
			snap := receive(t, f.gen.Output().Subscribe(t.Context()))
			if !snap.Initialized || snap.State.Len() != 2 {
				t.Errorf("first snapshot once ready: initialized %v with %d resources, want true with 2", snap.Initialized, snap.State.Len())
			}
		})
	}
}

// runnerOnly hides the Readier of a runner, so that a group does not wait
// for it to be ready.
type runnerOnly struct {
	r interface {
		Name() string
		Run(context.Context) error
	}
}

func (r runnerOnly) Name() string                  { return r.r.Name() }
func (r runnerOnly) Run(ctx context.Context) error { return r.r.Run(ctx) }

// TestClosedInputs checks that maps closed before Run are generated from
// their final contents.
func TestClosedInputs(t *testing.T) {
	f := newFixture(t)
	f.workspaces.Store("ws", generate.Workspace{Modules: map[string]generate.Config{"workload": {"labels": map[string]any{"team": "shop"}}}})
	f.apps.Store("web", app(t, `{name: web, workspace: ws, workload: {containers: [{name: web}]}}`))
	f.apps.Close()
	f.workspaces.Close()
	f.start(t)
	f.waitResources(t, "web", map[string]string{
		"apps/v1:Deployment:web": `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, labels: {app: web, team: shop}}, spec: {template: {spec: {containers: [{name: web}]}}}}`,
	})
}

// TestPanicIsLoggedWithItsStack checks that a generator's panic is logged
// once, naming the generator, with the stack of the panic.
func TestPanicIsLoggedWithItsStack(t *testing.T) {
	var logs syncBuffer
	f := newFixture(t, generate.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	f.apps.Store("web", app(t, `{name: web, workload: {containers: [{name: web}]}, accessories: {a: {panic: boom}}}`))
	f.start(t)
	f.waitFailure(t, "web")
	out := logs.String()
	if n := strings.Count(out, "\n"); n != 1 {
		t.Errorf("%d records, want 1:\n%s", n, out)
	}
	for _, want := range []string{`generator \"a\": boom`, "key=web", "generate_test.echo"} {
		if !strings.Contains(out, want) {
			t.Errorf("the record does not contain %q:\n%s", want, out)
		}
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNewPanics checks that New refuses what it cannot work with, saying
// why.
func TestNewPanics(t *testing.T) {
	var apps watchable.Map[string, generate.App]
	var workspaces watchable.Map[string, generate.Workspace]
	gen := generate.GeneratorFunc(echo)
	tests := []struct {
		name string
		new  func()
		want string
	}{
		{"zero apps view", func() {
			generate.New("g", watchable.View[string, generate.App]{}, workspaces.View(), gen)
		}, "apps cannot be watched"},
		{"zero workspaces view", func() {
			generate.New("g", apps.View(), watchable.View[string, generate.Workspace]{}, gen)
		}, "workspaces cannot be watched"},
		{"nil workload generator", func() { generate.New[string]("g", apps.View(), workspaces.View(), nil) }, "nil workload generator"},
		{"module registered twice", func() {
			generate.New("g", apps.View(), workspaces.View(), gen, generate.WithGenerator("a", gen), generate.WithGenerator("a", gen))
		}, `module "a" registered twice`},
		{"the workload's module", func() {
			generate.New("g", apps.View(), workspaces.View(), gen, generate.WithGenerator(generate.WorkloadModule, gen))
		}, `module "workload" is the workload generator's`},
		{"empty module", func() {
			generate.New("g", apps.View(), workspaces.View(), gen, generate.WithGenerator("", gen))
		}, "empty module name"},
		{"nil generator", func() {
			generate.New("g", apps.View(), workspaces.View(), gen, generate.WithGenerator("a", nil))
		}, `nil generator for module "a"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				p := recover()
				if s, _ := p.(string); !strings.Contains(s, tt.want) {
					t.Errorf("panic %v, want one containing %q", p, tt.want)
				}
			}()
			tt.new()
		})
	}
}

// TestRunTwice checks that a second Run while the first runs panics, and
// that a later Run starts again.
func TestRunTwice(t *testing.T) {
	f := newFixture(t)
	f.apps.Store("web", app(t, `{name: web, workload: {containers: [{name: web}]}}`))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.gen.Run(ctx) }()
	receive(t, f.gen.Ready())
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(p.(string), "Run called while it is running") {
				t.Errorf("second Run: panic %v", p)
			}
		}()
		f.gen.Run(ctx)
	}()
	cancel()
	if err := receive(t, done); err != nil {
		t.Fatal(err)
	}

	f.apps.Store("api", app(t, `{name: api, workload: {containers: [{name: api}]}}`))
	startGroup(t, f.gen)
	f.waitResources(t, "api", map[string]string{
		"apps/v1:Deployment:api": `{apiVersion: apps/v1, kind: Deployment, metadata: {name: api, labels: {app: api}}, spec: {template: {spec: {containers: [{name: api}]}}}}`,
	})
}
