package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the output of testdata/in")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitTimeout is generous: CI runs everything with -race on two busy cores.
const waitTimeout = 20 * time.Second

// quiet is a logger for tests that do not look at the logs.
var quiet = slog.New(slog.DiscardHandler)

// TestOnce generates the files of testdata/in and compares them with
// testdata/golden: the same files, holding the same objects.
func TestOnce(t *testing.T) {
	out := t.TempDir()
	var stderr bytes.Buffer
	if err := run(t.Context(), []string{"-in", "testdata/in", "-out", out, "-once"}, &stderr); err != nil {
		t.Fatalf("run: %v\n%s", err, &stderr)
	}
	if *update {
		if err := os.RemoveAll("testdata/golden"); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS("testdata/golden", os.DirFS(out)); err != nil {
			t.Fatal(err)
		}
	}
	compareDirs(t, "testdata/golden", out)

	// A second run finds every file up to date, and writes none.
	stderr.Reset()
	if err := run(t.Context(), []string{"-in", "testdata/in", "-out", out, "-once"}, &stderr); err != nil {
		t.Fatalf("run again: %v\n%s", err, &stderr)
	}
	if strings.Contains(stderr.String(), "msg=wrote") {
		t.Errorf("a second run over the same inputs wrote files:\n%s", &stderr)
	}
}

// TestOnceReportsProblems checks that -once writes what it can, and fails
// naming the broken file and document, and the application a generator
// rejected.
func TestOnceReportsProblems(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	copyDir(t, "testdata/in", in)
	editFile(t, filepath.Join(in, "broken.yaml"), `
kind: AppConfiguration
metadata: {name: fine, namespace: broken}
spec: {workload: {containers: {fine: {image: fine}}}}
---
kind: AppConfiguration
metadata: {name: typo, namespace: broken}
spec: {workload: {containers: {typo: {image: typo}}, replica: 2}}`)
	editFile(t, filepath.Join(in, "rejected.yaml"), `
kind: AppConfiguration
metadata: {name: rejected, namespace: shop}
spec:
  workload: {containers: {rejected: {image: rejected}}}
  accessories: {prometheus: {}}`)
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"-in", in, "-out", out, "-once"}, &stderr)
	if err == nil {
		t.Fatalf("run succeeded with broken configurations:\n%s", &stderr)
	}
	for _, want := range []string{
		"2 problems",
		`config: broken.yaml: file broken.yaml: document 2 (kind AppConfiguration, name broken/typo): invalid document`,
		`unknown field "replica"`,
		`generate: translator generate: translator generate: key shop/rejected: generator "prometheus": the workload has no Service to scrape`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	// The good applications are written. The broken file's are not, not
	// even the good one: a file with a problem keeps its last good
	// documents, and it never had any.
	got := files(t, out)
	if want := []string{"blog_site.yaml", "shop_web.yaml", "shop_worker.yaml"}; !slices.Equal(got, want) {
		t.Errorf("files %q, want %q", got, want)
	}
}

func TestUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{{}, {"-in", dir}, {"-out", dir}, {"-in", dir, "-out", dir + "/x", "extra"}, {"-nope"}} {
		var stderr bytes.Buffer
		if err := run(t.Context(), args, &stderr); !errors.Is(err, errUsage) {
			t.Errorf("run %q: %v, want errUsage", args, err)
		}
	}
	var stderr bytes.Buffer
	if err := run(t.Context(), []string{"-in", dir, "-out", dir + "/."}, &stderr); err == nil || !strings.Contains(err.Error(), "same directory") {
		t.Errorf("run with -in and -out the same: %v", err)
	}
	if err := run(t.Context(), []string{"-in", dir + "/missing", "-out", dir}, &stderr); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("run with a missing -in: %v", err)
	}
}

// start runs a pipeline that follows in until the test ends, and waits until
// its files are written.
func start(t *testing.T, in, out string) *pipeline {
	t.Helper()
	p := newPipeline(options{in: in, out: out, log: quiet, debounce: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run returned %v", err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("run did not return after cancel")
		}
	})
	select {
	case <-p.writer.Ready():
	case <-time.After(waitTimeout):
		t.Fatalf("files not written after %v", waitTimeout)
	}
	return p
}

// waitState waits, through a subscription, until m's contents satisfy
// cond, and fails the test saying what was awaited and what m held last if
// they do not within waitTimeout.
func waitState[K comparable, V any](t *testing.T, m watchable.View[K, V], cond func(watchable.State[K, V]) bool, format string, args ...any) watchable.State[K, V] {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var last watchable.State[K, V]
	for snap := range m.Subscribe(ctx) {
		if cond(snap.State) {
			return snap.State
		}
		last = snap.State
	}
	t.Fatalf("waited %v for %s; last contents: %v", waitTimeout, fmt.Sprintf(format, args...), last.Map())
	panic("unreachable")
}

// waitWrites waits until the writer has written each file the number of
// times want says, and no other file.
func waitWrites(t *testing.T, p *pipeline, want map[string]int) {
	t.Helper()
	waitState(t, p.writer.Written(), func(s watchable.State[string, int]) bool {
		return cmp.Diff(want, s.Map()) == ""
	}, "the writes %v", want)
}

// waitProblem waits until the runner named name has a problem under key
// that contains every text of want, or none under key if want is empty.
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

// compareDirs fails the test unless dirs want and got hold the same files,
// each holding the same YAML documents (the same objects, by ID, however
// they are formatted and ordered).
func compareDirs(t *testing.T, want, got string) {
	t.Helper()
	if w, g := files(t, want), files(t, got); !slices.Equal(w, g) {
		t.Fatalf("files %q, want %q", g, w)
	}
	for _, name := range files(t, want) {
		if diff := cmp.Diff(documents(t, filepath.Join(want, name)), documents(t, filepath.Join(got, name))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// files lists the names of the files in dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// documents parses the YAML documents of a file, by object ID.
func documents(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	docs := make(map[string]map[string]any)
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if obj == nil {
			continue // the header comment
		}
		docs[generate.ObjectID(obj)] = obj
	}
	return docs
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	for _, name := range files(t, from) {
		data, err := os.ReadFile(filepath.Join(from, name))
		if err != nil {
			t.Fatal(err)
		}
		editFile(t, filepath.Join(to, name), string(data))
	}
}

// editFile writes a file as an editor does: through a temporary file and
// a rename.
func editFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".swp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
