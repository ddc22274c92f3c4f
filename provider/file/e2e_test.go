package file_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// TestEndToEnd wires the whole pipeline together in a runner group: files on
// disk -> file provider -> Derive (backend endpoints) -> Compute (a routing
// table from routes and endpoints) -> a message.HandleSubscription consumer,
// and checks the consumer's view as the files change. No runner is ordered
// after another: each waits for its inputs to be initialized.
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "backends.yaml", backendYAML("shop", "web", "10.0.0.1", 80)+"---\n"+backendYAML("shop", "api", "10.0.0.2", 81))
	write(t, dir, "routes.yaml", `kind: Route
metadata: {name: home, namespace: shop}
spec: {backend: web, paths: [/, /index.html]}
---
kind: Route
metadata: {name: cart, namespace: shop}
spec: {backend: api, paths: [/cart]}
`)

	// The provider.
	f := newFixture(t, dir, file.WithDebounce(20*time.Millisecond))

	// Derive: each backend gives its endpoint, keyed "namespace/name". A
	// backend with port 0 is an error.
	derive := translator.Derive("endpoints", f.backends,
		func(_ context.Context, name types.NamespacedName, b Backend) (map[string]string, error) {
			if b.Spec.Port == 0 {
				return nil, errors.New("port 0")
			}
			return map[string]string{name.String(): fmt.Sprintf("%s:%d", b.Spec.Host, b.Spec.Port)}, nil
		})
	endpoints := derive.Output()

	// Compute: the routing table, path -> endpoint, from two maps.
	compute := translator.Compute("table", []translator.Input{f.routes, endpoints}, func(context.Context) (map[string]string, error) {
		eps := endpoints.State()
		out := make(map[string]string)
		for name, r := range f.routes.State().All() {
			ep, ok := eps.Get(name.Namespace + "/" + r.Spec.Backend)
			if !ok {
				continue
			}
			for _, path := range r.Spec.Paths {
				out[path] = ep
			}
		}
		return out, nil
	})
	table := compute.Output()

	// The consumer keeps its own view of the table, one update at a time.
	var mu sync.Mutex
	view := make(map[string]string)
	consumer := runner.Func("consumer", func(ctx context.Context) error {
		message.HandleSubscription(ctx, message.Loop{Runner: "consumer", Message: "table"}, table.Subscribe(ctx),
			func(_ context.Context, u watchable.Update[string, string]) error {
				mu.Lock()
				defer mu.Unlock()
				if u.Delete {
					delete(view, u.Key)
				} else {
					view[u.Key] = u.Value
				}
				return nil
			})
		return nil
	})

	g := runGroup(t, consumer, compute, derive, f.p)
	wait(t, g.Ready(), "group ready")

	// Readiness is on the data: once the table is initialized it was
	// computed from initialized inputs, so it is whole, with no waiting.
	want := map[string]string{"/": "10.0.0.1:80", "/index.html": "10.0.0.1:80", "/cart": "10.0.0.2:81"}
	wait(t, table.Initialized(), "table initialized")
	if diff := cmp.Diff(want, table.State().Map()); diff != "" {
		t.Errorf("initialized table (-want +got):\n%s", diff)
	}

	waitView := func(want map[string]string) {
		t.Helper()
		waitFor(t, func() string {
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(want, view); diff != "" {
				return "consumer's view (-want +got):\n" + diff
			}
			return ""
		})
	}
	// waitProblem waits until runnerName has a problem with text (under
	// any key), or none when text is "".
	waitProblem := func(runnerName, text string) {
		t.Helper()
		waitFor(t, func() string {
			st, _ := g.Status().Load(runnerName)
			if text == "" && len(st.Problems) == 0 {
				return ""
			}
			for _, p := range st.Problems {
				if text != "" && strings.Contains(p, text) {
					return ""
				}
			}
			return fmt.Sprintf("status of %s = %+v, want a problem with %q", runnerName, st, text)
		})
	}

	waitView(want)

	// Editing a backend flows through every stage.
	write(t, dir, "backends.yaml", backendYAML("shop", "web", "10.0.0.1", 8080)+"---\n"+backendYAML("shop", "api", "10.0.0.2", 81))
	want = map[string]string{"/": "10.0.0.1:8080", "/index.html": "10.0.0.1:8080", "/cart": "10.0.0.2:81"}
	waitView(want)

	// A new file adds a route; deleting it removes it.
	write(t, dir, "more.yaml", "kind: Route\nmetadata: {name: admin, namespace: shop}\nspec: {backend: api, paths: [/admin]}\n")
	waitView(map[string]string{"/": "10.0.0.1:8080", "/index.html": "10.0.0.1:8080", "/cart": "10.0.0.2:81", "/admin": "10.0.0.2:81"})
	remove(t, dir, "more.yaml")
	waitView(want)

	// A broken file is reported in the provider's status and changes
	// nothing downstream; fixing it clears the problem.
	write(t, dir, "backends.yaml", "kind: Backend\nmetadata: {name: web, namespace: shop}\nspec: {port: eighty}\n")
	waitProblem(f.p.Name(), "file "+filepath.Join(dir, "backends.yaml"))
	mu.Lock()
	if diff := cmp.Diff(want, maps.Clone(view)); diff != "" {
		t.Errorf("view changed by a broken file (-want +got):\n%s", diff)
	}
	mu.Unlock()

	// A backend the translation rejects keeps its last endpoint, and the
	// translator's status says why.
	write(t, dir, "backends.yaml", backendYAML("shop", "web", "10.0.0.9", 0)+"---\n"+backendYAML("shop", "api", "10.0.0.2", 82))
	waitProblem(f.p.Name(), "")
	waitProblem("endpoints", "key shop/web: port 0")
	want = map[string]string{"/": "10.0.0.1:8080", "/index.html": "10.0.0.1:8080", "/cart": "10.0.0.2:82"}
	waitView(want)

	// Deleting the backends file deletes the endpoints and so the table.
	remove(t, dir, "backends.yaml")
	waitView(map[string]string{})
	waitProblem("endpoints", "")
}
