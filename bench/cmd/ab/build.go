package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// tree is one side's source code.
type tree struct {
	rev string // the revision as given; empty for the working tree
	// sha is rev's commit, or for the working tree the commit it is on
	// (empty in a repository without commits).
	sha   string
	short string   // sha abbreviated
	dir   string   // the root of the checkout
	dirty []string // for the working tree, the paths git status lists
}

// label names t in the report and in errors: "abc1234 (HEAD~1)", or
// "working tree".
func (t tree) label() string {
	if t.rev == "" {
		return "working tree"
	}
	if t.rev == t.sha || strings.HasPrefix(t.sha, t.rev) {
		return t.short
	}
	return fmt.Sprintf("%s (%s)", t.short, t.rev)
}

// git runs git in dir and returns its standard output without the final
// newline; its error includes what git wrote to standard error.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	c := exec.CommandContext(ctx, "git", args...)
	c.Dir = dir
	c.Stdout = &stdout
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, msg)
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSuffix(stdout.String(), "\n"), nil
}

// repoRoot returns the root of the repository dir is in.
func repoRoot(ctx context.Context, dir string) (string, error) {
	root, err := git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", fmt.Errorf("finding the repository of %s: %w", dir, err)
	}
	return root, nil
}

// commitTree resolves rev to a commit of the repository at root; its dir
// is left for addWorktree to fill.
func commitTree(ctx context.Context, root, rev string) (tree, error) {
	sha, err := git(ctx, root, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return tree{}, fmt.Errorf("revision %q is not a commit of %s: %w", rev, root, err)
	}
	short, err := git(ctx, root, "rev-parse", "--short", sha)
	if err != nil {
		return tree{}, fmt.Errorf("abbreviating %s: %w", sha, err)
	}
	return tree{rev: rev, sha: sha, short: short}, nil
}

// workingTree describes the working tree at root as it is: the commit it
// is on and the paths that differ from it.
func workingTree(ctx context.Context, root string) (tree, error) {
	t := tree{dir: root}
	// A repository without commits has no HEAD, and its working tree
	// can still be measured.
	if sha, err := git(ctx, root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}"); err == nil {
		t.sha = sha
		if t.short, err = git(ctx, root, "rev-parse", "--short", sha); err != nil {
			return tree{}, fmt.Errorf("abbreviating %s: %w", sha, err)
		}
	}
	status, err := git(ctx, root, "status", "--porcelain")
	if err != nil {
		return tree{}, fmt.Errorf("listing the uncommitted changes of %s: %w", root, err)
	}
	for line := range strings.Lines(status) {
		// "XY path", or "XY old -> new" for a rename.
		if len(line) > 3 {
			t.dirty = append(t.dirty, strings.TrimSpace(line[3:]))
		}
	}
	return t, nil
}

// addWorktree checks out t's commit into dir, a new directory, and returns
// the function that removes it again. A worktree shares the repository's
// objects, so even an old revision checks out in a moment, and it leaves
// the user's working tree alone.
func addWorktree(ctx context.Context, root, dir string, t tree, stderr io.Writer) (remove func(), err error) {
	if _, err := git(ctx, root, "worktree", "add", "--detach", dir, t.sha); err != nil {
		return nil, fmt.Errorf("checking out %s into %s: %w", t.label(), dir, err)
	}
	return func() {
		// Not ctx: after Ctrl-C, it is canceled, and the worktree must
		// still go, or git keeps listing it.
		if _, err := git(context.Background(), root, "worktree", "remove", "--force", dir); err != nil {
			fmt.Fprintf(stderr, "ab: removing the worktree of %s (git worktree prune forgets it): %v\n", t.label(), err)
		}
	}, nil
}

// build compiles the test binary of package pkg (a directory relative to
// t's root) into bin. It runs go inside the package's directory rather than
// naming the package from the root: the root need not be in the package's
// module (bench has a go.mod of its own).
func build(ctx context.Context, sd side, t tree, pkg, bin string, stderr io.Writer) error {
	dir := filepath.Join(t.dir, pkg)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s (%s) has no package directory %s", sd, t.label(), pkg)
	}
	c := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, ".")
	c.Dir = dir
	c.Env = buildEnv(os.Environ())
	c.Stdout = stderr
	c.Stderr = stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("building the benchmarks of %s (%s) in %s: %w", sd, t.label(), pkg, err)
	}
	// go test -c writes nothing, successfully, for a package without
	// test files.
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("building the benchmarks of %s (%s) in %s: no test binary, does it have test files? %w", sd, t.label(), pkg, err)
	}
	return nil
}

// buildEnv returns env for building a tree. A GOWORK naming a file would
// build the modules that file lists, those of one tree, for both sides;
// without it, go finds each tree's own go.work.
func buildEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GOWORK="); ok && v != "off" && v != "" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// binaryRunner returns the runner of the test binaries bins, each run in
// its side's package directory dirs, so that the benchmarks find their
// testdata. It echoes the result lines to stderr as they come.
func binaryRunner(bins, dirs [2]string, stderr io.Writer) runner {
	return func(ctx context.Context, sd side, args []string) ([]byte, error) {
		var out bytes.Buffer
		c := exec.CommandContext(ctx, bins[sd], args...)
		c.Dir = dirs[sd]
		c.Stdout = io.MultiWriter(&out, &gobench.Progress{W: stderr, Prefix: sd.String() + ": "})
		c.Stderr = stderr
		if err := c.Run(); err != nil {
			if ctx.Err() != nil {
				// "signal: killed" would hide that the user interrupted it.
				err = ctx.Err()
			} else {
				// The output says which benchmark failed, and why.
				stderr.Write(out.Bytes())
			}
			return nil, fmt.Errorf("running %s.test %s: %w", sd, shellJoin(args), err)
		}
		return out.Bytes(), nil
	}
}

// shellJoin joins args into a line a POSIX shell splits back into them.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	return strings.Join(quoted, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
