package watchable_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrieHelpersInlined checks that the trie's per-level helpers are
// inlined where the trie is instantiated: in the package that uses a Map of
// concrete types. When they were plain functions of package hamt, the
// compiler left them as calls in those instantiations, and every level of
// every lookup called them: about a fifth of Load's time at 100 entries,
// and more at a million (docs/design.md, "Inlining across packages"). The
// test compiles such a package (testdata/inlineuse) with -m, which reports
// each call it inlines. It calls the compiler directly, since the go
// command would replay a cached build without the report.
func TestTrieHelpersInlined(t *testing.T) {
	goTool := goCommand(t, "compiles a package")
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		cmd := exec.Command(goTool, args...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Env = append(os.Environ(), "GOFLAGS=") // a -race there would not match the plain compile
		if err := cmd.Run(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String() + stderr.String() // the compiler reports -m on stdout
	}
	importcfg := filepath.Join(t.TempDir(), "importcfg")
	const use = "./testdata/inlineuse"
	cfg := run("list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}", use)
	if err := os.WriteFile(importcfg, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	path := strings.TrimSpace(run("list", "-f", "{{.ImportPath}}", use))
	var files []string
	for _, f := range strings.Fields(run("list", "-f", `{{join .GoFiles " "}}`, use)) {
		files = append(files, filepath.Join(use, f))
	}
	args := append([]string{"tool", "compile", "-p", path, "-importcfg", importcfg, "-lang=go1.24",
		"-o", filepath.Join(t.TempDir(), "use.o"), "-m"}, files...)
	out := run(args...)
	for _, helper := range []string{"hamt.bitpos", "hamt.index"} {
		if !strings.Contains(out, "inlining call to "+helper) {
			t.Errorf("the compiler no longer inlines %s where a user's package instantiates the trie", helper)
		}
	}
}
