package file_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitTimeout is generous: CI runs everything with -race on two busy cores.
const waitTimeout = 20 * time.Second

type BackendSpec struct {
	Host string `json:"host"`
	Port int    `json:"port"`
}

// Backend uses the ready-made envelope.
type Backend = file.Object[BackendSpec]

// Route is a document type of the user's own, with a slice: no DeepCopy
// method is needed.
type Route struct {
	Kind     string        `json:"kind"`
	Metadata file.Metadata `json:"metadata"`
	Spec     struct {
		Backend string   `json:"backend"`
		Paths   []string `json:"paths,omitempty"`
	} `json:"spec"`
}

// fixture is a provider of Backends and Routes over a temporary directory.
type fixture struct {
	dir      string
	p        *file.Provider
	backends watchable.View[types.NamespacedName, Backend]
	routes   watchable.View[types.NamespacedName, Route]
	errs     chan error
}

// quiet is a logger for tests that do not look at the logs.
var quiet = slog.New(slog.DiscardHandler)

func newFixture(t *testing.T, dir string, opts ...file.Option) *fixture {
	t.Helper()
	f := &fixture{dir: dir, errs: make(chan error, 100)}
	opts = append([]file.Option{file.WithLogger(quiet), file.WithErrorHandler(func(err error) {
		select {
		case f.errs <- err:
		default:
		}
	})}, opts...)
	f.p = file.New(dir, opts...)
	f.backends = file.Register[Backend](f.p, "Backend")
	f.routes = file.Register[Route](f.p, "Route")
	return f
}

// start runs the provider until the test ends and waits until it is ready.
func (f *fixture) start(t *testing.T) {
	t.Helper()
	run(t, f.p)
	wait(t, f.p.Ready(), "provider ready")
}

// run runs r, on its own, until the test ends; it fails the test if Run
// returns an error or does not return after the test.
func run(t *testing.T, r runner.Runner) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("Run did not return after cancel")
		}
	})
}

// runGroup runs runners in a runner group until the test ends, and returns
// the group.
func runGroup(t *testing.T, runners ...runner.Runner) *runner.Group {
	t.Helper()
	g := runner.NewGroup(runner.WithLogger(quiet))
	run(t, runner.Func("group", func(ctx context.Context) error { return g.Run(ctx, runners...) }))
	return g
}

// wait waits until ch is closed.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("%s: not after %v", what, waitTimeout)
	}
}

// write saves a file the way editors do: a temporary file renamed over it.
func write(t *testing.T, dir, name, content string) {
	t.Helper()
	tmp := filepath.Join(dir, ".tmp-"+name)
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

func remove(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// waitFor waits until cond returns "", and fails with its last answer.
func waitFor(t *testing.T, cond func() string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		why := cond()
		if why == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(why)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func nn(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}

func backend(namespace, name, host string, port int) Backend {
	return Backend{
		Kind:     "Backend",
		Metadata: file.Metadata{Name: name, Namespace: namespace},
		Spec:     BackendSpec{Host: host, Port: port},
	}
}

// backendYAML is the YAML document for backend(namespace, name, host, port).
func backendYAML(namespace, name, host string, port int) string {
	return strings.NewReplacer("NS", namespace, "NAME", name, "HOST", host, "PORT", strconv.Itoa(port)).Replace(
		"kind: Backend\nmetadata:\n  name: NAME\n  namespace: NS\nspec:\n  host: HOST\n  port: PORT\n")
}

// waitContents waits until m holds exactly want.
func waitContents[V any](t *testing.T, m watchable.View[types.NamespacedName, V], want map[types.NamespacedName]V) {
	t.Helper()
	waitFor(t, func() string {
		if diff := cmp.Diff(want, m.State().Map()); diff != "" {
			return "map contents (-want +got):\n" + diff
		}
		return ""
	})
}

// checkContents checks that m holds exactly want now.
func checkContents[V any](t *testing.T, m watchable.View[types.NamespacedName, V], want map[types.NamespacedName]V) {
	t.Helper()
	if diff := cmp.Diff(want, m.State().Map()); diff != "" {
		t.Errorf("map contents (-want +got):\n%s", diff)
	}
}
