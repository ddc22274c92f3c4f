package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The module the end-to-end test measures: a benchmark whose cost is
// proportional to the constant work, which the test raises tenfold in the
// working tree after committing it.
const (
	abtestMod = "module example.com/abtest\n\ngo 1.24\n"
	abtestSrc = `package abtest

// work is how many steps Work takes.
const work = 2000

// Work scrambles seed work times.
func Work(seed uint64) uint64 {
	x := seed
	for range work {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	return x
}
`
	abtestBench = `package abtest

import "testing"

var sink uint64

func BenchmarkWork(b *testing.B) {
	for b.Loop() {
		sink = Work(sink + 1)
	}
}
`
)

// TestAB builds and runs the benchmark of a commit and of a working tree
// ten times slower, and checks that the report sees the slowdown and that
// no worktree outlives the command.
func TestAB(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	repo := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(repo, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", abtestMod)
	write("work.go", abtestSrc)
	write("work_test.go", abtestBench)
	gitIn(t, repo, "init", "--quiet")
	gitIn(t, repo, "add", ".")
	gitIn(t, repo, "-c", "user.name=ab test", "-c", "user.email=ab@example.com", "-c", "commit.gpgsign=false",
		"commit", "--quiet", "-m", "work")
	write("work.go", strings.Replace(abtestSrc, "const work = 2000", "const work = 20000", 1))

	raw := filepath.Join(t.TempDir(), "raw.txt")
	var stdout, stderr strings.Builder
	err := ab(context.Background(), repo, []string{"-base", "HEAD", "-pkg", ".", "-rounds", "2", "-bench", ".",
		"-raw", raw, "--", "-test.benchtime=1000x"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("ab: %v\nstderr:\n%s", err, stderr.String())
	}
	out := stdout.String()
	t.Logf("report:\n%s", out)

	row := tableRow(t, out, "BenchmarkWork", "ns/op")
	ratio, err := strconv.ParseFloat(row[4], 64)
	if err != nil {
		t.Fatalf("head ÷ base %q: %v\n%s", row[4], err, out)
	}
	if ratio <= 2 {
		t.Errorf("head ÷ base = %v, want more than 2 for ten times the work\n%s", ratio, out)
	}
	if row[6] != "0 of 2" {
		t.Errorf("head lower = %q, want 0 of 2\n%s", row[6], out)
	}
	if !strings.Contains(out, "with uncommitted changes to work.go") {
		t.Errorf("the header does not name the uncommitted change:\n%s", out)
	}

	if list := gitIn(t, repo, "worktree", "list", "--porcelain"); strings.Count(list, "worktree ") != 1 {
		t.Errorf("worktrees left behind:\n%s", list)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n# ab: "); n != 4 {
		t.Errorf("raw file has %d comment lines, want 4:\n%s", n, data)
	}
}

func TestABBadRevision(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not on PATH")
	}
	repo := t.TempDir()
	gitIn(t, repo, "init", "--quiet")
	err := ab(context.Background(), repo, []string{"-base", "no-such-rev", "-bench", "."}, &strings.Builder{}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), `revision "no-such-rev"`) {
		t.Errorf("ab error = %v, want one naming the revision", err)
	}
}

// gitIn runs git in dir and returns its output.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	c := exec.Command("git", args...)
	c.Dir = dir
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// tableRow returns the cells of the report's row of name and unit.
func tableRow(t *testing.T, report, name, unit string) []string {
	t.Helper()
	for line := range strings.Lines(report) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 3 {
			continue
		}
		cells = cells[1 : len(cells)-1] // the empty strings outside the first and last |
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) == 7 && cells[0] == name && cells[1] == unit {
			return cells
		}
	}
	t.Fatalf("no row for %s in %s:\n%s", name, unit, report)
	return nil
}
