package generate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The translator is a runner with readiness, without type assertions.
var _ interface {
	runner.Runner
	runner.Readier
} = (*generate.Generation[string])(nil)

// waitTimeout is generous: CI runs everything with -race on two busy cores.
const waitTimeout = 20 * time.Second

// quiet is a logger for tests that do not look at the logs.
var quiet = slog.New(slog.DiscardHandler)

// fixture is a translator over maps that the test writes, with the test's
// generators: deployment for the workload and echo for the accessories
// "a", "b" and "c".
type fixture struct {
	apps       *watchable.Map[string, generate.App]
	workspaces *watchable.Map[string, generate.Workspace]
	gen        *generate.Generation[string]
	group      *runner.Group
	calls      counter
	errs       chan error
}

func newFixture(t *testing.T, opts ...generate.Option) *fixture {
	t.Helper()
	f := &fixture{
		apps:       new(watchable.Map[string, generate.App]),
		workspaces: new(watchable.Map[string, generate.Workspace]),
		errs:       make(chan error, 1000),
	}
	count := func(module string, g generate.GeneratorFunc) generate.Generator {
		return generate.GeneratorFunc(func(ctx context.Context, req generate.Request) (generate.Response, error) {
			f.calls.add(req.App + "/" + module)
			return g(ctx, req)
		})
	}
	opts = append([]generate.Option{
		generate.WithLogger(quiet),
		generate.WithErrorHandler(func(err error) { f.errs <- err }),
		generate.WithGenerator("a", count("a", echo)),
		generate.WithGenerator("b", count("b", echo)),
		generate.WithGenerator("c", count("c", echo)),
	}, opts...)
	f.gen = generate.New("gen", f.apps.View(), f.workspaces.View(), count(generate.WorkloadModule, deployment), opts...)
	return f
}

// start runs the translator in a runner group until the test ends, and
// waits until it is ready.
func (f *fixture) start(t *testing.T) {
	t.Helper()
	f.group = startGroup(t, f.gen)
}

// waitResources waits until app's published resources are want (objects
// by ID, written as YAML).
func (f *fixture) waitResources(t *testing.T, app string, want map[string]string) {
	t.Helper()
	objs := make(map[string]map[string]any, len(want))
	for id, y := range want {
		objs[id] = parse(t, y)
	}
	waitState(t, f.gen.Output(), func(s watchable.State[generate.Key[string], generate.Resource]) bool {
		return cmp.Diff(objs, objects(s, app)) == ""
	}, "the resources of %s to be %v", app, want)
}

// waitFailures waits for the error handler to receive a failure of each of
// apps, and returns their reasons (the KeyErrors' Err) by application.
// Failures of other applications are dropped.
func (f *fixture) waitFailures(t *testing.T, apps ...string) map[string]error {
	t.Helper()
	want := make(map[string]bool, len(apps))
	for _, a := range apps {
		want[a] = true
	}
	got := make(map[string]error, len(apps))
	timeout := time.After(waitTimeout)
	for len(got) < len(want) {
		select {
		case err := <-f.errs:
			var ke *translator.KeyError[string]
			if !errors.As(err, &ke) {
				t.Fatalf("error handler received %T %v, want a *translator.KeyError[string]", err, err)
			}
			if want[ke.Key] {
				got[ke.Key] = ke.Err
			}
		case <-timeout:
			t.Fatalf("failures after %v: %v; want failures of %q", waitTimeout, got, apps)
		}
	}
	return got
}

// waitFailure waits for a failure of app, and returns its reason.
func (f *fixture) waitFailure(t *testing.T, app string) error {
	t.Helper()
	return f.waitFailures(t, app)[app]
}

// objects returns the objects of app's resources in s, by ID.
func objects(s watchable.State[generate.Key[string], generate.Resource], app string) map[string]map[string]any {
	out := make(map[string]map[string]any)
	for k, r := range s.All() {
		if k.App == app {
			out[k.ID] = r.Object
		}
	}
	return out
}

// parse parses YAML into a JSON object.
func parse(t *testing.T, y string) map[string]any {
	t.Helper()
	var out map[string]any
	if err := yaml.Unmarshal([]byte(y), &out); err != nil {
		t.Fatalf("parse %q: %v", y, err)
	}
	return out
}

// app parses the YAML of an App.
func app(t *testing.T, y string) generate.App {
	t.Helper()
	var a generate.App
	if err := yaml.UnmarshalStrict([]byte(y), &a); err != nil {
		t.Fatalf("parse app %q: %v", y, err)
	}
	return a
}

// deployment is the workload generator of the tests: a Deployment named
// after the application, labelled app: <name>, with the containers of the
// workload configuration, its replicas, and the labels of the platform's
// configuration of the workload; and the patchers of the workload
// configuration, if any. It fails with the configuration's "fail" text.
func deployment(_ context.Context, req generate.Request) (generate.Response, error) {
	var cfg struct {
		Containers []any               `json:"containers"`
		Replicas   *int                `json:"replicas"`
		Patchers   []generate.Patcher  `json:"patchers"`
		Resources  []generate.Resource `json:"resources"` // more resources, of which the Deployment is the workload
		Fail       string              `json:"fail"`
	}
	if err := req.Workload.Decode(&cfg); err != nil {
		return generate.Response{}, err
	}
	if cfg.Fail != "" {
		return generate.Response{}, errors.New(cfg.Fail)
	}
	var platform struct {
		Labels map[string]string `json:"labels"`
	}
	if err := req.PlatformConfig.Decode(&platform); err != nil {
		return generate.Response{}, err
	}
	labels := map[string]any{"app": req.App}
	for k, v := range platform.Labels {
		labels[k] = v
	}
	spec := map[string]any{"template": map[string]any{"spec": map[string]any{"containers": cfg.Containers}}}
	if cfg.Replicas != nil {
		spec["replicas"] = *cfg.Replicas
	}
	d := generate.Resource{Workload: true, Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": req.App, "labels": labels},
		"spec":       spec,
	}}
	return generate.Response{Resources: append([]generate.Resource{d}, cfg.Resources...), Patchers: cfg.Patchers}, nil
}

// echo is the accessory generator of the tests: it returns the response its
// configuration spells out, fails with its "fail" text, or panics with its
// "panic" text.
func echo(_ context.Context, req generate.Request) (generate.Response, error) {
	var cfg struct {
		generate.Response
		Fail  string `json:"fail"`
		Panic string `json:"panic"`
	}
	if err := req.DevConfig.Decode(&cfg); err != nil {
		return generate.Response{}, err
	}
	if cfg.Panic != "" {
		panic(cfg.Panic)
	}
	if cfg.Fail != "" {
		return generate.Response{}, errors.New(cfg.Fail)
	}
	return cfg.Response, nil
}

// startGroup runs runners in a runner group until the test ends, waits
// until the group is ready, and returns it.
func startGroup(t *testing.T, runners ...runner.Runner) *runner.Group {
	t.Helper()
	g := runner.NewGroup(runner.WithLogger(quiet))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, runners...) }()
	t.Cleanup(func() {
		cancel()
		if err := receive(t, done); err != nil {
			t.Errorf("group returned %v", err)
		}
	})
	receive(t, g.Ready())
	return g
}

// waitState waits, through a subscription, until m's contents satisfy
// cond, and fails the test saying what was awaited and what m held last if
// they do not within waitTimeout.
func waitState[K comparable, V any](t *testing.T, m watchable.View[K, V], cond func(watchable.State[K, V]) bool, format string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var last watchable.State[K, V]
	for snap := range m.Subscribe(ctx) {
		if cond(snap.State) {
			return
		}
		last = snap.State
	}
	t.Fatalf("waited %v for %s; last contents: %v", waitTimeout, fmt.Sprintf(format, args...), last.Map())
}

// waitProblem waits until the runner named name in g's status has a problem
// under key that contains every text of want, or none if want is empty.
func waitProblem(t *testing.T, g *runner.Group, name, key string, want ...string) {
	t.Helper()
	waitState(t, g.Status(), func(s watchable.State[string, runner.Status]) bool {
		st, _ := s.Get(name)
		got, ok := st.Problems[key]
		if len(want) == 0 {
			return !ok
		}
		for _, w := range want {
			if !strings.Contains(got, w) {
				return false
			}
		}
		return ok
	}, "the problem of %s under %q to contain %q", name, key, want)
}

// receive waits for a value on ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("nothing received after %v", waitTimeout)
		panic("unreachable")
	}
}

// counter counts calls per key; safe for concurrent use.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(k string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[string]int)
	}
	c.n[k]++
}

// take returns the counts so far and starts again from zero.
func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = nil
	return n
}
