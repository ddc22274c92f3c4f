package file_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestInitialScan(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "backends.yaml", backendYAML("shop", "web", "10.0.0.1", 80)+"---\n# only a comment\n---\n"+backendYAML("shop", "api", "10.0.0.2", 81))
	write(t, dir, "more.json", `{"kind": "Backend", "metadata": {"name": "db"}, "spec": {"host": "10.0.0.3", "port": 5432}}
{"kind": "Route", "metadata": {"name": "home", "namespace": "shop"}, "spec": {"backend": "web", "paths": ["/", "/index"]}}`)
	write(t, dir, "route.yml", "kind: Route\nmetadata: {name: cart, namespace: shop}\nspec: {backend: api}\n")
	// Not documents: another extension, a hidden file, a subdirectory.
	write(t, dir, "README.md", "kind: Backend\n")
	write(t, dir, ".hidden.yaml", "kind: Nonsense\n")
	if err := os.Mkdir(filepath.Join(dir, "sub.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}

	f := newFixture(t, dir)
	if got, want := f.p.Name(), "file:"+dir; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	select {
	case <-f.p.Ready():
		t.Fatal("ready before Run")
	default:
	}
	f.start(t)
	// Everything is published by the time the provider is ready.
	checkContents(t, f.backends, map[types.NamespacedName]Backend{
		nn("shop", "web"): backend("shop", "web", "10.0.0.1", 80),
		nn("shop", "api"): backend("shop", "api", "10.0.0.2", 81),
		nn("", "db"):      backend("", "db", "10.0.0.3", 5432),
	})
	home := Route{Kind: "Route", Metadata: file.Metadata{Name: "home", Namespace: "shop"}}
	home.Spec.Backend, home.Spec.Paths = "web", []string{"/", "/index"}
	cart := Route{Kind: "Route", Metadata: file.Metadata{Name: "cart", Namespace: "shop"}}
	cart.Spec.Backend = "api"
	checkContents(t, f.routes, map[types.NamespacedName]Route{nn("shop", "home"): home, nn("shop", "cart"): cart})
	if errs := f.p.Errors(); len(errs) != 0 {
		t.Errorf("Errors() = %v, want none", errs)
	}
}

// TestRunAgainReplacesLeftovers checks that the first reading of a new Run
// makes the maps exactly what the directory holds, whatever a previous Run
// left in them.
func TestRunAgainReplacesLeftovers(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", backendYAML("", "stale", "h", 2))
	f := newFixture(t, dir)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- f.p.Run(ctx) }()
	wait(t, f.p.Ready(), "first run ready")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first Run returned %v", err)
	}

	remove(t, dir, "a.yaml")
	write(t, dir, "b.yaml", backendYAML("", "web", "h", 1))
	rev := f.backends.Revision()
	f.start(t)
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1)})
	if got := f.backends.Revision(); got != rev+1 {
		t.Errorf("revision went from %d to %d, want one replacement", rev, got)
	}
}

func TestFollowsFiles(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir)
	f.start(t)
	checkContents(t, f.backends, map[types.NamespacedName]Backend{})

	// A new file.
	write(t, dir, "a.yaml", backendYAML("", "web", "h1", 1)+"---\n"+backendYAML("", "api", "h2", 2))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{
		nn("", "web"): backend("", "web", "h1", 1),
		nn("", "api"): backend("", "api", "h2", 2),
	})

	// An edit replaces the file's documents in one batch: api changes,
	// web goes, db comes.
	rev := f.backends.Revision()
	write(t, dir, "a.yaml", backendYAML("", "api", "h2", 20)+"---\n"+backendYAML("", "db", "h3", 3))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{
		nn("", "api"): backend("", "api", "h2", 20),
		nn("", "db"):  backend("", "db", "h3", 3),
	})
	if got := f.backends.Revision(); got != rev+1 {
		t.Errorf("revision went from %d to %d for one edit, want one batch", rev, got)
	}

	// Writing in place (not through a rename) is followed too.
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(backendYAML("", "in-place", "h", 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		if _, ok := f.backends.Load(nn("", "in-place")); !ok {
			return "b.yaml not read"
		}
		return ""
	})

	// Deleting files deletes their documents.
	remove(t, dir, "a.yaml")
	remove(t, dir, "b.yaml")
	waitContents(t, f.backends, map[types.NamespacedName]Backend{})
}

func TestBadInputKeepsLastGood(t *testing.T) {
	const good = "kind: Backend\nmetadata: {name: web}\nspec: {host: h, port: 1}\n"
	for _, tc := range []struct {
		name    string
		content string
		is      error
		text    string // in the error, after the file name
	}{
		{"invalid YAML", good + "---\nkind: Backend\nmetadata: [\n", file.ErrInvalid, "document 2: invalid document"},
		{"invalid JSON", `{"kind": "Backend", "metadata": {"name": "web"}}` + "\n{\"kind\": ", file.ErrInvalid, "document 2: invalid document"},
		{"a list", good + "---\n- a list\n", file.ErrInvalid, "document 2: invalid document: not an object"},
		{"a string", good + "---\njust words\n", file.ErrInvalid, "document 2: invalid document: not an object"},
		{"JSON, not an object", `{"kind": "Backend", "metadata": {"name": "web"}}` + "\n[1, 2]\n", file.ErrInvalid, "document 2: invalid document: not an object"},
		{"missing kind", good + "---\nmetadata: {name: x}\n", file.ErrMissingKind, "document 2 (name x): missing kind"},
		{"unknown kind", good + "---\nkind: Gadget\nmetadata: {name: x}\n", file.ErrUnknownKind, "document 2 (kind Gadget, name x): unknown kind"},
		{"missing name", good + "---\nkind: Backend\nmetadata: {namespace: ns}\n", file.ErrMissingName, "document 2 (kind Backend): missing metadata.name"},
		{"wrong field type", good + "---\nkind: Backend\nmetadata: {name: x}\nspec: {port: eighty}\n", file.ErrInvalid, "document 2 (kind Backend, name x): invalid document"},
		{"wrong metadata type", good + "---\nkind: Backend\nmetadata: {name: [x]}\n", file.ErrInvalid, "document 2: invalid document"},
		{"unknown field", good + "---\nkind: Backend\nmetadata: {name: x}\nspec: {colour: red}\n", file.ErrInvalid, `unknown field "colour"`},
		{"duplicate field", "kind: Backend\nkind: Route\nmetadata: {name: x}\n", file.ErrInvalid, "document 1: invalid document"},
		{"duplicate nested field", good + "---\nkind: Backend\nmetadata: {name: x, name: y}\n", file.ErrInvalid, "document 2: invalid document"},
		{"duplicate JSON field", `{"kind": "Backend", "metadata": {"name": "web"}}` + "\n" + `{"kind": "Backend", "kind": "Route", "metadata": {"name": "x"}}`, file.ErrInvalid, `document 2: invalid document: duplicate key "kind"`},
		{"duplicate nested JSON field", `{"kind": "Backend", "metadata": {"name": "web"}}` + "\n" + `{"kind": "Backend", "metadata": {"name": "x", "name": "y"}}`, file.ErrInvalid, `document 2: invalid document: duplicate key "name" in metadata`},
		{"duplicate JSON field in a list", `{"kind": "Route", "metadata": {"name": "r"}, "spec": {"paths": [], "x": [{"a": 1, "a": 2}]}}`, file.ErrInvalid, `document 1: invalid document: duplicate key "a" in spec.x[0]`},
		{"duplicate name in file", good + "---\n" + good, file.ErrDuplicate, "document 2 (kind Backend, name web): duplicate name: also document 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.yaml", backendYAML("", "old", "h", 1))
			write(t, dir, "b.yaml", backendYAML("", "other", "h", 2))
			f := newFixture(t, dir)
			f.start(t)
			want := map[types.NamespacedName]Backend{
				nn("", "old"):   backend("", "old", "h", 1),
				nn("", "other"): backend("", "other", "h", 2),
			}
			checkContents(t, f.backends, want)

			path := filepath.Join(dir, "a.yaml")
			write(t, dir, "a.yaml", tc.content)
			var err error
			waitFor(t, func() string {
				if err = f.p.Errors()[path]; err == nil {
					return "no error for " + path
				}
				return ""
			})
			var derr *file.DocumentError
			if !errors.As(err, &derr) || derr.File != path || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %q (%T), want a *DocumentError for %s wrapping %v with %q", err, err, path, tc.is, tc.text)
			}
			select {
			case got := <-f.errs:
				if got.Error() != err.Error() {
					t.Errorf("error handler got %q, want %q", got, err)
				}
			case <-time.After(waitTimeout):
				t.Errorf("error handler not called")
			}
			// The file's last good documents stay, and nothing else changes.
			checkContents(t, f.backends, want)
			if errs := f.p.Errors(); len(errs) != 1 {
				t.Errorf("Errors() = %v, want only %s", errs, path)
			}

			write(t, dir, "a.yaml", backendYAML("", "new", "h", 3))
			delete(want, nn("", "old"))
			want[nn("", "new")] = backend("", "new", "h", 3)
			waitContents(t, f.backends, want)
			if errs := f.p.Errors(); len(errs) != 0 {
				t.Errorf("Errors() = %v after the fix, want none", errs)
			}
		})
	}
}

// TestDuplicateAcrossFiles checks that the file already providing a
// document keeps it when another file defines it too, whatever their names:
// the newcomer gets an error naming both, and its other documents apply.
func TestDuplicateAcrossFiles(t *testing.T) {
	for _, order := range [][]string{{"a.yaml", "b.yaml"}, {"b.yaml", "a.yaml"}} {
		t.Run(strings.Join(order, ","), func(t *testing.T) {
			dir := t.TempDir()
			f := newFixture(t, dir)
			f.start(t)
			first, second := order[0], order[1]
			content := func(name string, withWeb bool) string {
				s := backendYAML("ns", "only-"+name[:1], "h", 2)
				if withWeb {
					s = backendYAML("ns", "web", "from-"+name[:1], 1) + "---\n" + s
				}
				return s
			}
			write(t, dir, first, content(first, true))
			want := map[types.NamespacedName]Backend{
				nn("ns", "web"):             backend("ns", "web", "from-"+first[:1], 1),
				nn("ns", "only-"+first[:1]): backend("ns", "only-"+first[:1], "h", 2),
			}
			waitContents(t, f.backends, want)

			// The newcomer's other document applies; web stays as it was.
			write(t, dir, second, content(second, true))
			want[nn("ns", "only-"+second[:1])] = backend("ns", "only-"+second[:1], "h", 2)
			waitContents(t, f.backends, want)
			firstPath, secondPath := filepath.Join(dir, first), filepath.Join(dir, second)
			var err error
			waitFor(t, func() string {
				if err = f.p.Errors()[secondPath]; err == nil {
					return "no error for " + secondPath
				}
				return ""
			})
			if !errors.Is(err, file.ErrDuplicate) || !strings.Contains(err.Error(), "file "+secondPath+": document 1 (kind Backend, name ns/web)") ||
				!strings.Contains(err.Error(), "already defined in "+firstPath) {
				t.Errorf("error %q, want a duplicate naming %s and %s", err, secondPath, firstPath)
			}
			if errs := f.p.Errors(); len(errs) != 1 {
				t.Errorf("Errors() = %v, want only %s", errs, secondPath)
			}

			// When the provider stops defining it, the other file's
			// document takes over and its error clears.
			write(t, dir, first, content(first, false))
			want[nn("ns", "web")] = backend("ns", "web", "from-"+second[:1], 1)
			waitContents(t, f.backends, want)
			waitFor(t, func() string {
				if errs := f.p.Errors(); len(errs) != 0 {
					return fmt.Sprintf("Errors() = %v after the takeover, want none", errs)
				}
				return ""
			})

			// The first file defining it again is now the newcomer.
			write(t, dir, first, content(first, true))
			waitFor(t, func() string {
				if f.p.Errors()[firstPath] == nil {
					return "no error for " + firstPath
				}
				return ""
			})
			checkContents(t, f.backends, want)

			// Deleting the provider hands the document over too.
			remove(t, dir, second)
			delete(want, nn("ns", "only-"+second[:1]))
			want[nn("ns", "web")] = backend("ns", "web", "from-"+first[:1], 1)
			waitContents(t, f.backends, want)
			waitFor(t, func() string {
				if errs := f.p.Errors(); len(errs) != 0 {
					return fmt.Sprintf("Errors() = %v after the takeover, want none", errs)
				}
				return ""
			})
		})
	}
}

// TestDuplicateInOneScan checks the tie-break when two files defining the
// same document are read in the same scan: the file whose name sorts first
// provides it.
func TestDuplicateInOneScan(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "b.yaml", backendYAML("ns", "web", "from-b", 1))
	write(t, dir, "a.yaml", backendYAML("ns", "web", "from-a", 1))
	f := newFixture(t, dir)
	f.start(t)
	checkContents(t, f.backends, map[types.NamespacedName]Backend{nn("ns", "web"): backend("ns", "web", "from-a", 1)})
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	errs := f.p.Errors()
	if len(errs) != 1 || !errors.Is(errs[b], file.ErrDuplicate) || !strings.Contains(errs[b].Error(), "already defined in "+a) {
		t.Errorf("Errors() = %v, want a duplicate for %s naming %s", errs, b, a)
	}
}

func TestDebounce(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", backendYAML("", "web", "h", 0))
	f := newFixture(t, dir, file.WithDebounce(500*time.Millisecond), file.WithRescanInterval(0))
	f.start(t)
	rev := f.backends.Revision()
	// A burst of in-place writes, as an editor or a script makes.
	for i := 1; i <= 20; i++ {
		if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(backendYAML("", "web", "h", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 20)})
	if got := f.backends.Revision(); got != rev+1 {
		t.Errorf("revision went from %d to %d for a burst of writes, want one update", rev, got)
	}
}

func TestRescanCatchesMissedChanges(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, dir, file.WithFSNotify(false), file.WithRescanInterval(20*time.Millisecond))
	f.start(t)
	write(t, dir, "a.yaml", backendYAML("", "web", "h", 1))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1)})
	write(t, dir, "a.yaml", backendYAML("", "web", "h", 2))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 2)})
	remove(t, dir, "a.yaml")
	waitContents(t, f.backends, map[types.NamespacedName]Backend{})
}

func TestDirectoryComesAndGoes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	f := newFixture(t, dir, file.WithRescanInterval(0)) // events only
	f.start(t)
	checkContents(t, f.backends, map[types.NamespacedName]Backend{})
	if err := f.p.Errors()[dir]; !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error for the missing directory = %v, want one wrapping os.ErrNotExist", err)
	}

	// The directory appears, then a file in it.
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		if errs := f.p.Errors(); len(errs) != 0 {
			return "errors remain after the directory was created"
		}
		return ""
	})
	write(t, dir, "a.yaml", backendYAML("", "web", "h", 1))
	want := map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1)}
	waitContents(t, f.backends, want)

	// The directory goes: its documents stay, with an error.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() string {
		if f.p.Errors()[dir] == nil {
			return "no error after the directory was removed"
		}
		return ""
	})
	checkContents(t, f.backends, want)

	// It comes back with other contents.
	tmp := dir + ".new"
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, tmp, "b.yaml", backendYAML("", "api", "h", 2))
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "api"): backend("", "api", "h", 2)})
}

func TestRunWhileRunning(t *testing.T) {
	f := newFixture(t, t.TempDir())
	f.start(t)
	if err := f.p.Run(t.Context()); err == nil {
		t.Error("second Run returned nil, want an error")
	}
}

func TestRegisterPanics(t *testing.T) {
	type uncopyable struct{ OnChange func() }
	for _, tc := range []struct {
		name     string
		register func(p *file.Provider)
		text     string // in the panic
	}{
		{"kind twice", func(p *file.Provider) { file.Register[Backend](p, "Backend") }, `file.Register("Backend"): kind already registered`},
		{"empty kind", func(p *file.Provider) { file.Register[Backend](p, "") }, "file.Register: empty kind"},
		{"type that cannot be copied", func(p *file.Provider) { file.Register[uncopyable](p, "Other") }, `file.Register("Other"): watchable: cannot deep-copy`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, t.TempDir())
			checkPanic(t, func() { tc.register(f.p) }, tc.text)
		})
	}

	// Once the provider has run, its kinds are fixed: a new map could not
	// be initialized by a reading that is over.
	for _, running := range []bool{true, false} {
		f := newFixture(t, t.TempDir())
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- f.p.Run(ctx) }()
		wait(t, f.p.Ready(), "ready")
		if !running {
			cancel()
			<-done
		}
		checkPanic(t, func() { file.Register[Backend](f.p, "Other") }, `file.Register("Other"): provider file:`+f.dir+` has started running`)
		cancel()
		if running {
			<-done
		}
	}
}

// checkPanic checks that fn panics with a message holding text.
func checkPanic(t *testing.T, fn func(), text string) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		if msg := fmt.Sprint(r); r == nil || !strings.Contains(msg, text) {
			t.Errorf("panic %v, want one with %q", r, text)
		}
	}()
	fn()
}

func TestObjectDeepCopy(t *testing.T) {
	o := file.Object[Route]{Kind: "R", Metadata: file.Metadata{Name: "n", Labels: map[string]string{"a": "b"}}}
	o.Spec.Spec.Paths = []string{"/"}
	c := watchable.DeepCopy(o)
	if diff := cmp.Diff(o, c); diff != "" {
		t.Fatalf("copy differs (-orig +copy):\n%s", diff)
	}
	c.Metadata.Labels["a"] = "changed"
	c.Spec.Spec.Paths[0] = "/changed"
	if o.Metadata.Labels["a"] != "b" || o.Spec.Spec.Paths[0] != "/" {
		t.Errorf("changing the copy changed the original: %+v", o)
	}
}

// TestConfigMapVolume follows the way Kubernetes updates a ConfigMap volume:
// the files are symlinks through "..data", itself a symlink to a hidden
// directory, and an update swaps "..data" atomically.
func TestConfigMapVolume(t *testing.T) {
	dir := t.TempDir()
	version := func(name, content string) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), "a.yaml", content)
		if err := os.Symlink(name, filepath.Join(dir, "..data_tmp")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version("..v1", backendYAML("", "web", "h", 1))
	if err := os.Symlink(filepath.Join("..data", "a.yaml"), filepath.Join(dir, "a.yaml")); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, dir, file.WithRescanInterval(0)) // events only
	f.start(t)
	checkContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1)})

	version("..v2", backendYAML("", "web", "h", 2))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 2)})
}

// TestSymlinkedDirectory follows a directory that is a symlink, as in a
// deployment that switches "current" from one release to the next: changes
// in its target are seen, and so is the switch, by events alone.
func TestSymlinkedDirectory(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"v1", "v2"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "current")
	if err := os.Symlink("v1", link); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, link, file.WithRescanInterval(0)) // events only
	f.start(t)

	write(t, filepath.Join(root, "v1"), "a.yaml", backendYAML("", "web", "h", 1))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1)})

	// Switch the link atomically, the way `ln -sfn` does.
	write(t, filepath.Join(root, "v2"), "a.yaml", backendYAML("", "web", "h", 2))
	if err := os.Symlink("v2", filepath.Join(root, "next")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, "next"), link); err != nil {
		t.Fatal(err)
	}
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 2)})

	// The new target is the one watched now.
	write(t, filepath.Join(root, "v2"), "a.yaml", backendYAML("", "web", "h", 3))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 3)})
	write(t, filepath.Join(root, "v1"), "b.yaml", backendYAML("", "old", "h", 4))
	write(t, filepath.Join(root, "v2"), "c.yaml", backendYAML("", "new", "h", 5))
	waitContents(t, f.backends, map[types.NamespacedName]Backend{
		nn("", "web"): backend("", "web", "h", 3),
		nn("", "new"): backend("", "new", "h", 5),
	})
}

// TestUnusualFiles checks files that are valid but unusual: they provide
// what they hold, possibly nothing, without an error.
func TestUnusualFiles(t *testing.T) {
	web, api := backendYAML("", "web", "h", 1), backendYAML("", "api", "h", 2)
	both := map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1), nn("", "api"): backend("", "api", "h", 2)}
	var many strings.Builder
	manyWant := make(map[types.NamespacedName]Backend)
	for i := range 1000 {
		name := fmt.Sprintf("b%d", i)
		many.WriteString("---\n" + backendYAML("ns", name, strings.Repeat("h", 100), i))
		manyWant[nn("ns", name)] = backend("ns", name, strings.Repeat("h", 100), i)
	}
	for _, tc := range []struct {
		name, content string
		want          map[types.NamespacedName]Backend
	}{
		{"empty", "", map[types.NamespacedName]Backend{}},
		{"blank lines", "\n  \n\n", map[types.NamespacedName]Backend{}},
		{"only comments", "# nothing yet\n# still nothing\n", map[types.NamespacedName]Backend{}},
		{"null document", "null\n", map[types.NamespacedName]Backend{}},
		{"null among documents", web + "---\nnull\n---\n~\n---\n" + api, both},
		{"CRLF line ends", strings.ReplaceAll(web+"---\n"+api, "\n", "\r\n"), both},
		{"byte order mark", "\ufeff" + web + "---\n" + api, both},
		{"separators at both ends", "---\n" + web + "---\n" + api + "---\n", both},
		{"JSON with CRLF", "{\"kind\": \"Backend\",\r\n \"metadata\": {\"name\": \"web\"},\r\n \"spec\": {\"host\": \"h\", \"port\": 1}}\r\n", map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1)}},
		{"a long line", "kind: Backend\nmetadata: {name: web}\nspec: {host: " + strings.Repeat("x", 1<<18) + "}\n", map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", strings.Repeat("x", 1<<18), 0)}},
		{"many documents", many.String(), manyWant},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.yaml", tc.content)
			f := newFixture(t, dir)
			f.start(t)
			checkContents(t, f.backends, tc.want)
			if errs := f.p.Errors(); len(errs) != 0 {
				t.Errorf("Errors() = %v, want none", errs)
			}
		})
	}
}

func TestMaxFileSize(t *testing.T) {
	big := backendYAML("", "big", strings.Repeat("h", file.DefaultMaxFileSize), 1)
	for _, tc := range []struct {
		name    string
		opts    []file.Option
		content string
		text    string // in the error, after the file name; "" when the file is read
	}{
		{"under the limit", []file.Option{file.WithMaxFileSize(200)}, backendYAML("", "new", "h", 3), ""},
		{"over the limit", []file.Option{file.WithMaxFileSize(200)}, backendYAML("", "new", strings.Repeat("h", 200), 3),
			fmt.Sprintf(": too large: %d bytes, over the limit of 200 bytes", len(backendYAML("", "new", strings.Repeat("h", 200), 3)))},
		{"over the default limit", nil, big, fmt.Sprintf(": too large: %d bytes, over the limit of %d bytes", len(big), file.DefaultMaxFileSize)},
		{"no limit", []file.Option{file.WithMaxFileSize(0)}, big, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "a.yaml", backendYAML("", "old", "h", 1))
			f := newFixture(t, dir, tc.opts...)
			f.start(t)
			checkContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "old"): backend("", "old", "h", 1)})

			write(t, dir, "a.yaml", tc.content)
			path := filepath.Join(dir, "a.yaml")
			if tc.text == "" {
				waitFor(t, func() string {
					if _, ok := f.backends.Load(nn("", "old")); ok {
						return "a.yaml not read again"
					}
					return ""
				})
				if errs := f.p.Errors(); len(errs) != 0 {
					t.Errorf("Errors() = %v, want none", errs)
				}
				return
			}
			var err error
			waitFor(t, func() string {
				if err = f.p.Errors()[path]; err == nil {
					return "no error for " + path
				}
				return ""
			})
			if !errors.Is(err, file.ErrTooLarge) || err.Error() != "file "+path+tc.text {
				t.Errorf("error %q, want one wrapping ErrTooLarge: %q", err, "file "+path+tc.text)
			}
			// The last good documents stay.
			checkContents(t, f.backends, map[types.NamespacedName]Backend{nn("", "old"): backend("", "old", "h", 1)})
		})
	}
}

// TestNewFS reads documents from an fs.FS once, with the same decoding and
// the same errors as from a directory.
func TestNewFS(t *testing.T) {
	fsys := fstest.MapFS{
		"config/backends.yaml": {Data: []byte(backendYAML("shop", "web", "10.0.0.1", 80) + "---\n" + backendYAML("shop", "api", "10.0.0.2", 81))},
		"config/more.json":     {Data: []byte(`{"kind": "Backend", "metadata": {"name": "db"}, "spec": {"host": "10.0.0.3", "port": 5432}}`)},
		"config/bad.yaml":      {Data: []byte("kind: Gadget\nmetadata: {name: x}\n")},
		"config/dup.json":      {Data: []byte(`{"kind": "Backend", "kind": "Backend", "metadata": {"name": "dup"}}`)},
		"config/big.yaml":      {Data: []byte(backendYAML("", "big", strings.Repeat("h", 300), 1))},
		"config/.hidden.yaml":  {Data: []byte("kind: Nonsense\n")},
		"config/README.md":     {Data: []byte("kind: Nonsense\n")},
		"config/sub/c.yaml":    {Data: []byte(backendYAML("", "sub", "h", 1))},
		"other/d.yaml":         {Data: []byte(backendYAML("", "other", "h", 1))},
	}
	p := file.NewFS(fsys, "config/", file.WithMaxFileSize(200), file.WithLogger(quiet))
	backends := file.Register[Backend](p, "Backend")
	if got, want := p.Name(), "file:fs:config"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	wait(t, p.Ready(), "ready")
	checkContents(t, backends, map[types.NamespacedName]Backend{
		nn("shop", "web"): backend("shop", "web", "10.0.0.1", 80),
		nn("shop", "api"): backend("shop", "api", "10.0.0.2", 81),
		nn("", "db"):      backend("", "db", "10.0.0.3", 5432),
	})
	errs := p.Errors()
	for name, want := range map[string]error{
		"config/bad.yaml": file.ErrUnknownKind,
		"config/dup.json": file.ErrInvalid,
		"config/big.yaml": file.ErrTooLarge,
	} {
		var derr *file.DocumentError
		if !errors.As(errs[name], &derr) || derr.File != name || !errors.Is(derr, want) {
			t.Errorf("error for %s = %v, want a *DocumentError for it wrapping %v", name, errs[name], want)
		}
	}
	if len(errs) != 3 {
		t.Errorf("Errors() = %v, want 3 files", errs)
	}

	// Nothing is read again: a change to fsys is not seen.
	fsys["config/late.yaml"] = &fstest.MapFile{Data: []byte(backendYAML("", "late", "h", 1))}
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before ctx was done", err)
	default:
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v, want nil", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return after cancel")
	}
	if _, ok := backends.Load(nn("", "late")); ok {
		t.Error("a file added after the first reading was read")
	}
}

func TestNewFSMissingDirectory(t *testing.T) {
	p := file.NewFS(fstest.MapFS{}, "config", file.WithLogger(quiet))
	backends := file.Register[Backend](p, "Backend")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	wait(t, p.Ready(), "ready")
	// The map is initialized, empty: the directory's absence is known.
	wait(t, backends.Initialized(), "map initialized")
	checkContents(t, backends, map[types.NamespacedName]Backend{})
	if err := p.Errors()["config"]; !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error for the missing directory = %v, want one wrapping fs.ErrNotExist", err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
}

// TestEmptiedFileConfirmed checks that a file found empty, as when a writer
// has truncated it and not yet written, keeps its documents until a scan a
// debounce period later finds it still empty.
func TestEmptiedFileConfirmed(t *testing.T) {
	t.Run("written again", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a.yaml", backendYAML("", "web", "h", 1))
		// Rescans only, and a debounce so long that the file cannot be
		// confirmed empty during the test.
		f := newFixture(t, dir, file.WithFSNotify(false), file.WithRescanInterval(10*time.Millisecond), file.WithDebounce(time.Hour))
		f.start(t)
		rev := f.backends.Revision()

		if err := os.Truncate(filepath.Join(dir, "a.yaml"), 0); err != nil {
			t.Fatal(err)
		}
		// Once b.yaml is read, so is the truncated a.yaml.
		write(t, dir, "b.yaml", backendYAML("", "api", "h", 2))
		want := map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1), nn("", "api"): backend("", "api", "h", 2)}
		waitContents(t, f.backends, want)
		if got := f.backends.Revision(); got != rev+1 {
			t.Errorf("revision went from %d to %d, want only b.yaml's update", rev, got)
		}

		// The writer goes on.
		if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(backendYAML("", "web", "h", 3)), 0o644); err != nil {
			t.Fatal(err)
		}
		want[nn("", "web")] = backend("", "web", "h", 3)
		waitContents(t, f.backends, want)
		if errs := f.p.Errors(); len(errs) != 0 {
			t.Errorf("Errors() = %v, want none", errs)
		}
	})
	t.Run("left empty", func(t *testing.T) {
		dir := t.TempDir()
		write(t, dir, "a.yaml", backendYAML("", "web", "h", 1))
		f := newFixture(t, dir, file.WithDebounce(20*time.Millisecond))
		f.start(t)
		if err := os.Truncate(filepath.Join(dir, "a.yaml"), 0); err != nil {
			t.Fatal(err)
		}
		waitContents(t, f.backends, map[types.NamespacedName]Backend{})
	})
}

func TestWithName(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		p    *file.Provider
		want string
	}{
		{file.New(dir), "file:" + dir},
		{file.New(dir, file.WithName("config")), "config"},
		{file.New(dir, file.WithName("")), "file:" + dir},
		{file.NewFS(fstest.MapFS{}, "config"), "file:fs:config"},
		{file.NewFS(fstest.MapFS{}, "config", file.WithName("config")), "config"},
	} {
		if got := tc.p.Name(); got != tc.want {
			t.Errorf("Name() = %q, want %q", got, tc.want)
		}
	}

	// The name is the one a runner group knows the provider by, with no
	// wrapper to rename it; the maps' initializer goes by it too.
	p := file.New(dir, file.WithName("config"), file.WithLogger(quiet))
	backends := file.Register[Backend](p, "Backend")
	if diff := cmp.Diff([]string{"config"}, backends.PendingInitializers()); diff != "" {
		t.Errorf("pending initializers (-want +got):\n%s", diff)
	}
	g := runGroup(t, p)
	wait(t, g.Ready(), "group ready")
	if st, ok := g.Status().Load("config"); !ok || st.Phase != runner.PhaseReady {
		t.Errorf("status of config = %+v, %v; want ready", st, ok)
	}
}

// TestNewFSRefusesWatchOptions checks that NewFS refuses, naming them, the
// options about following changes, which an fs.FS read once would ignore,
// and takes the others.
func TestNewFSRefusesWatchOptions(t *testing.T) {
	for _, tc := range []struct {
		opts []file.Option
		text string // in the panic
	}{
		{[]file.Option{file.WithDebounce(time.Second)}, `file.NewFS("config"): file.WithDebounce: an fs.FS is read once`},
		{[]file.Option{file.WithRescanInterval(0)}, "file.WithRescanInterval:"},
		{[]file.Option{file.WithFSNotify(false)}, "file.WithFSNotify:"},
		{[]file.Option{file.WithLogger(quiet), file.WithFSNotify(true), file.WithDebounce(0)}, "file.WithFSNotify, file.WithDebounce:"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			checkPanic(t, func() { file.NewFS(fstest.MapFS{}, "config", tc.opts...) }, tc.text)
		})
	}
	file.NewFS(fstest.MapFS{}, "config", file.WithName("n"), file.WithLogger(quiet),
		file.WithErrorHandler(func(error) {}), file.WithMaxFileSize(1))
}

// TestInitializedAfterFirstLoad checks that the maps Register returns are
// not initialized until the provider has published its first reading to
// every one of them, and are then, whole.
func TestInitializedAfterFirstLoad(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", backendYAML("", "web", "h", 1)+"---\n"+backendYAML("", "api", "h", 2))
	write(t, dir, "b.yaml", "kind: Route\nmetadata: {name: home}\nspec: {backend: web}\n")
	f := newFixture(t, dir)
	want := map[types.NamespacedName]Backend{nn("", "web"): backend("", "web", "h", 1), nn("", "api"): backend("", "api", "h", 2)}

	sub := f.backends.Subscribe(t.Context())
	snap := receive(t, sub)
	if snap.Initialized || snap.State.Len() != 0 {
		t.Errorf("first snapshot before Run: initialized %v with %d entries, want uninitialized and empty", snap.Initialized, snap.State.Len())
	}
	for _, ch := range []<-chan struct{}{f.backends.Initialized(), f.routes.Initialized(), f.p.Ready()} {
		select {
		case <-ch:
			t.Fatal("initialized or ready before Run")
		default:
		}
	}
	if diff := cmp.Diff([]string{"file:" + dir}, f.routes.PendingInitializers()); diff != "" {
		t.Errorf("pending initializers (-want +got):\n%s", diff)
	}

	f.start(t)
	for !snap.Initialized {
		snap = receive(t, sub)
	}
	// The first initialized snapshot holds the whole first reading.
	if diff := cmp.Diff(want, snap.State.Map()); diff != "" {
		t.Errorf("first initialized snapshot (-want +got):\n%s", diff)
	}
	wait(t, f.backends.Initialized(), "backends initialized")
	wait(t, f.routes.Initialized(), "routes initialized")
	if n := f.routes.Len(); n != 1 {
		t.Errorf("routes has %d entries, want 1", n)
	}
}

// receive returns the next value from ch.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatal("channel closed")
		}
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("nothing received after %v", waitTimeout)
	}
	panic("unreachable")
}

// TestProblemsKeyedByFile checks that each bad file is a problem of its
// own in the runner's status, under its path: fixing one file clears its
// problem and keeps the others'.
func TestProblemsKeyedByFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	write(t, dir, "a.yaml", "kind: Gadget\nmetadata: {name: x}\n")
	write(t, dir, "b.yaml", backendYAML("", "web", "h", 1))
	f := newFixture(t, dir)
	g := runGroup(t, f.p)
	wait(t, g.Ready(), "group ready")
	waitProblems(t, g, f.p.Name(), map[string]string{a: "unknown kind"})

	// A second bad file, with the same kind of problem.
	write(t, dir, "b.yaml", "kind: Gadget\nmetadata: {name: z}\n")
	waitProblems(t, g, f.p.Name(), map[string]string{a: "unknown kind", b: "unknown kind"})

	// Fixing one keeps the other's problem.
	write(t, dir, "a.yaml", backendYAML("", "api", "h", 2))
	waitProblems(t, g, f.p.Name(), map[string]string{b: "unknown kind"})

	// The directory's own problem is under the directory's path.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitProblems(t, g, f.p.Name(), map[string]string{b: "unknown kind", dir: "read directory"})
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitProblems(t, g, f.p.Name(), nil)
}

// waitProblems waits until the status of runner name in g lists a problem
// under each key of want holding its text, and no other.
func waitProblems(t *testing.T, g *runner.Group, name string, want map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitTimeout)
	defer cancel()
	var last map[string]string
	for snap := range g.Status().Subscribe(ctx) {
		st, _ := snap.State.Get(name)
		last = st.Problems
		if len(last) == len(want) && func() bool {
			for key, text := range want {
				if !strings.Contains(last[key], text) {
					return false
				}
			}
			return true
		}() {
			return
		}
	}
	t.Fatalf("problems of %s = %q, want %q", name, last, want)
}

// lockedBuffer is a bytes.Buffer safe for a logger on another goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestNilLoggerMeansDefault checks that with no logger, or a nil one, a bad
// file is logged through slog.Default(): never silently.
func TestNilLoggerMeansDefault(t *testing.T) {
	for name, opts := range map[string][]file.Option{
		"no WithLogger":   nil,
		"WithLogger(nil)": {file.WithLogger(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			var logs lockedBuffer
			old := slog.Default()
			slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
			t.Cleanup(func() { slog.SetDefault(old) })

			dir := t.TempDir()
			write(t, dir, "a.yaml", "kind: Gadget\nmetadata: {name: x}\n")
			p := file.New(dir, opts...)
			file.Register[Backend](p, "Backend")
			run(t, p)
			wait(t, p.Ready(), "ready")
			path := filepath.Join(dir, "a.yaml")
			if got := logs.String(); !strings.Contains(got, "bad document file") || !strings.Contains(got, "file="+path) {
				t.Errorf("slog.Default() got %q, want a record for %s", got, path)
			}
		})
	}
}
