package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := ab(ctx, ".", os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var usage usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &usage):
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(1)
	}
}

// config is what the command line asks for.
type config struct {
	base, head string // revisions; an empty head is the working tree
	bench      string // the -test.bench pattern
	pkg        string // the package directory, relative to the repository's root
	rounds     int
	raw        string // the file for every invocation's output, if any
	quotients  []quotient
	pivots     []pivot
	pass       []string // the arguments after --, given to every run
}

// defaultPkg is the package -pkg names unless told otherwise: the
// side-by-side benchmarks.
const defaultPkg = "bench"

// usageError is a command line ab cannot run.
type usageError struct{ error }

// forbidden are the test binary's flags that ab sets itself and must not
// follow --, by name without "test.", each with the reason.
var forbidden = map[string]string{
	"count": "each run takes one sample, so that the sides alternate sample by sample; -rounds sets how many",
	"run":   "ab runs no tests (it passes -test.run '^$')",
	"bench": "ab's own -bench sets the pattern",
}

// parseFlags reads the command line args (without the program's name).
// The flag package writes its own complaints, and -h's usage, to output.
func parseFlags(args []string, output io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("ab", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.StringVar(&c.base, "base", "", "the old `revision`, any that git rev-parse accepts (required)")
	fs.StringVar(&c.head, "head", "", "the new `revision`; empty for the working tree as it is, uncommitted changes included")
	fs.StringVar(&c.bench, "bench", "", "the benchmarks to run, as go test's -bench `regexp` (required)")
	fs.StringVar(&c.pkg, "pkg", defaultPkg, "the package `directory`, relative to the repository's root")
	fs.IntVar(&c.rounds, "rounds", 6, "how many times to run each side, alternating which goes first (at least 2)")
	fs.StringVar(&c.raw, "raw", "", "also write every run's output to `file`, each followed by a comment line naming it")
	fs.Func("quotient", "also compare `num,den`, the quotient of two units of each sample, such as ns/op,floor-ns/op (repeatable)", func(v string) error {
		q, err := parseQuotient(v)
		if err == nil {
			c.quotients = append(c.quotients, q)
		}
		return err
	})
	fs.Func("pivot", "also divide each benchmark by the one whose name has `key=value` in place of its own key's, such as lib=peer, in the same run (repeatable)", func(v string) error {
		p, err := parsePivot(v)
		if err == nil {
			c.pivots = append(c.pivots, p)
		}
		return err
	})
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: go run ./bench/cmd/ab -base rev -bench regexp [flags] [-- test binary flags]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return config{}, err
		}
		// The flag package has already said what was wrong.
		return config{}, usageError{err}
	}
	c.pass = fs.Args()
	if err := c.check(); err != nil {
		return config{}, usageError{err}
	}
	return c, nil
}

// check says what is wrong with c, if anything.
func (c config) check() error {
	switch {
	case c.base == "":
		return errors.New("-base is required: the old revision, such as HEAD~1")
	case c.bench == "":
		return errors.New("-bench is required: the benchmarks to run, as go test's -bench regexp")
	case c.rounds < 2:
		return fmt.Errorf("-rounds %d: need at least 2, or there is nothing to pair and alternate", c.rounds)
	case !filepath.IsLocal(c.pkg):
		return fmt.Errorf("-pkg %q: need a directory inside the repository, relative to its root", c.pkg)
	}
	for _, a := range c.pass {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if why, ok := forbidden[strings.TrimPrefix(name, "test.")]; ok {
			return fmt.Errorf("%s after --: %s", a, why)
		}
	}
	return nil
}

// args returns the arguments of every run of either side's test binary.
func (c config) args() []string {
	return append([]string{"-test.run", "^$", "-test.bench", c.bench, "-test.count", "1", "-test.benchmem"}, c.pass...)
}

// ab runs the comparison that args (the command line without the
// program's name) ask for, in the repository that dir is in. It writes the
// report to stdout and its progress to stderr, which need not be safe for
// concurrent use.
func ab(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) (err error) {
	stderr = &lockedWriter{w: stderr}
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	root, err := repoRoot(ctx, dir)
	if err != nil {
		return err
	}
	var trees [2]tree
	if trees[base], err = commitTree(ctx, root, c.base); err != nil {
		return err
	}
	if c.head == "" {
		trees[head], err = workingTree(ctx, root)
	} else {
		trees[head], err = commitTree(ctx, root, c.head)
	}
	if err != nil {
		return err
	}

	var raw io.Writer
	if c.raw != "" {
		path := c.raw
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("creating the raw file: %w", err)
		}
		defer func() {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("writing the raw file %s: %w", path, cerr)
			}
		}()
		raw = f
	}

	tmp, err := os.MkdirTemp("", "ab")
	if err != nil {
		return fmt.Errorf("making a temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	var bins, dirs [2]string
	for _, sd := range []side{base, head} {
		if trees[sd].rev != "" {
			trees[sd].dir = filepath.Join(tmp, sd.String())
			remove, err := addWorktree(ctx, root, trees[sd].dir, trees[sd], stderr)
			if err != nil {
				return err
			}
			defer remove()
		}
		fmt.Fprintf(stderr, "ab: building %s (%s)\n", sd, trees[sd].label())
		bins[sd] = filepath.Join(tmp, sd.String()+".test")
		if err := build(ctx, sd, trees[sd], c.pkg, bins[sd], stderr); err != nil {
			return err
		}
		dirs[sd] = filepath.Join(trees[sd].dir, c.pkg)
	}

	start := time.Now()
	l := loop{rounds: c.rounds, args: c.args(), raw: raw, log: stderr}
	s, err := l.run(ctx, binaryRunner(bins, dirs, stderr))
	if err != nil {
		return err
	}
	if s.empty() {
		return fmt.Errorf("-bench %q selected no benchmark of %s on either side", c.bench, c.pkg)
	}
	derivePivots(s, c.pivots)
	derive(s, c.quotients)
	r := report{cfg: c, trees: trees, date: start, elapsed: time.Since(start), table: tabulate(s)}
	if err := r.write(stdout); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// lockedWriter serializes writes: a test binary's standard error and the
// echo of its results reach stderr from two goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
