package translator_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"testing"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// discard is the logger of tests whose failures are expected.
var discard = slog.New(slog.DiscardHandler)

// TestFailuresReachStatus runs translators in a runner group and checks that
// their failures appear in, and disappear from, the group's status, under
// each translator's own key.
func TestFailuresReachStatus(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x")
	derive := translator.Derive("split", in.View(), split, translator.WithLogger(discard))
	compute := translator.Compute("count", []translator.Input{in}, func(context.Context) (map[string]int, error) {
		s := in.State()
		if v, _ := s.Get("a"); v == "fail" {
			return nil, errors.New("a is fail")
		}
		return map[string]int{"entries": s.Len()}, nil
	}, translator.WithLogger(discard))
	g := startGroup(t, derive, compute)

	in.Store("a", "fail")
	waitProblems(t, g, "split", map[string]string{"translator split": "translator split: key a: cannot split fail"})
	waitProblems(t, g, "count", map[string]string{"translator count": "translator count: compute: a is fail"})
	in.Store("b", "fail")
	waitProblems(t, g, "split", map[string]string{"translator split": "key b: cannot split fail"})
	in.Delete("b")
	in.Store("a", "y")
	waitProblems(t, g, "split", nil)
	waitProblems(t, g, "count", nil)

	// Many failing keys: the status lists a few and counts the rest.
	for i := range 20 {
		in.Store(fmt.Sprint("k", i), "fail")
	}
	waitProblems(t, g, "split", map[string]string{"translator split": "and 10 more errors"})
}

// TestComputeKeepsTheProblemsOfFn is the test for a bug: Compute cleared
// the runner's one problem after a success, erasing what fn had reported
// itself. fn fails once (the translator reports it), then reports a
// problem of its own and succeeds: the translator clears its problem only.
func TestComputeKeepsTheProblemsOfFn(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("mode", "fail")
	c := translator.Compute("count", []translator.Input{in}, func(ctx context.Context) (map[string]int, error) {
		mode, _ := in.State().Get("mode")
		switch mode {
		case "fail":
			return nil, errors.New("cannot count")
		case "degraded":
			runner.HealthOf(ctx).Report("mine", errors.New("counting without the cache"))
		default:
			runner.HealthOf(ctx).Report("mine", nil)
		}
		return map[string]int{"entries": in.State().Len()}, nil
	}, translator.WithLogger(discard))
	g := runner.NewGroup()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, c) }()
	defer func() {
		cancel()
		if err := receive(t, done); err != nil {
			t.Errorf("group returned %v", err)
		}
	}()
	waitProblems(t, g, "count", map[string]string{"translator count": "translator count: compute: cannot count"})

	in.Store("mode", "degraded")
	waitContents(t, c.Output(), map[string]int{"entries": 1}) // published
	waitProblems(t, g, "count", map[string]string{"mine": "counting without the cache"})

	in.Store("mode", "fine")
	waitProblems(t, g, "count", nil)
}

// TestDeriveAndGroupByKeepTheProblemsOfFn checks the same for the
// translators that report per key: a transformation that reports a problem
// of its own keeps it when the translator clears its failures.
func TestDeriveAndGroupByKeepTheProblemsOfFn(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:fail")
	reportMine := func(ctx context.Context, v string) error {
		if strings.HasSuffix(v, ":fail") {
			return errors.New("cannot use " + v)
		}
		if strings.HasSuffix(v, ":slow") {
			runner.HealthOf(ctx).Report("mine", errors.New("slow "+v))
		}
		return nil
	}
	derive := translator.Derive("derive", in.View(), func(ctx context.Context, k, v string) (map[string]string, error) {
		if err := reportMine(ctx, v); err != nil {
			return nil, err
		}
		return map[string]string{k: v}, nil
	}, translator.WithLogger(discard))
	group := translator.GroupBy("group", in.View(), groupOf,
		func(ctx context.Context, _ string, members iter.Seq2[string, string]) (string, error) {
			for _, v := range members {
				if err := reportMine(ctx, v); err != nil {
					return "", err
				}
			}
			return "built", nil
		}, translator.WithLogger(discard))
	g := startGroup(t, derive, group)
	waitProblems(t, g, "derive", map[string]string{"translator derive": "cannot use x:fail"})
	waitProblems(t, g, "group", map[string]string{"translator group": "cannot use x:fail"})

	in.Store("a", "x:slow")
	waitProblems(t, g, "derive", map[string]string{"mine": "slow x:slow"})
	waitProblems(t, g, "group", map[string]string{"mine": "slow x:slow"})
}

// recorder is a slog.Handler that sends every record's message and
// attributes to a channel.
type recorder chan string

func (r recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r recorder) WithGroup(string) slog.Handler            { return r }
func (r recorder) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	select {
	case r <- b.String():
	default:
	}
	return nil
}

// TestFailuresAreLoggedByDefault checks that, without WithLogger or with a
// nil logger, failures of each shape go to slog.Default(), and with a
// logger, to it.
func TestFailuresAreLoggedByDefault(t *testing.T) {
	failing := func(ctx context.Context, k, v string) (map[string]string, error) { return nil, errors.New("no") }
	shapes := []struct {
		name string
		make func(in watchable.View[string, string], opts ...translator.Option) readyRunner
		want string
	}{
		{"Derive", func(in watchable.View[string, string], opts ...translator.Option) readyRunner {
			return translator.Derive("t", in, failing, opts...)
		}, "transformation failed runner=t key=a error=translator t: key a: no"},
		{"GroupBy", func(in watchable.View[string, string], opts ...translator.Option) readyRunner {
			return translator.GroupBy("t", in, func(k, _ string) (string, bool) { return k, true },
				func(context.Context, string, iter.Seq2[string, string]) (int, error) { panic("boom") }, opts...)
		}, "build panicked runner=t key=a error=translator t: key a: transformation panicked: boom"},
		{"Compute", func(in watchable.View[string, string], opts ...translator.Option) readyRunner {
			return translator.Compute("t", []translator.Input{in}, func(context.Context) (map[string]int, error) {
				return nil, errors.New("no")
			}, opts...)
		}, "computation failed runner=t error=translator t: compute: no"},
	}
	for _, shape := range shapes {
		for _, logger := range []string{"absent", "nil", "given"} {
			t.Run(shape.name+"/"+logger, func(t *testing.T) {
				records, defaults := make(recorder, 10), make(recorder, 10)
				old := slog.Default()
				slog.SetDefault(slog.New(defaults))
				t.Cleanup(func() { slog.SetDefault(old) })
				var opts []translator.Option
				want := defaults
				switch logger {
				case "nil":
					opts = append(opts, translator.WithLogger(nil))
				case "given":
					opts = append(opts, translator.WithLogger(slog.New(records)))
					want = records
				}
				in := new(watchable.Map[string, string])
				in.Store("a", "x")
				start(t, shape.make(in.View(), opts...))
				if got := receive(t, want); got != shape.want {
					t.Errorf("record %q, want %q", got, shape.want)
				}
				if logger == "given" && len(defaults) != 0 {
					t.Errorf("slog.Default() got %q although a logger was given", <-defaults)
				}
			})
		}
	}
}
