package translator_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// TestOutputBeforeRun checks that each shape's output can be subscribed to
// before Run, and delivers what Run publishes.
func TestOutputBeforeRun(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:1")
	d := translator.Derive("derive", in.View(), split)
	g := translator.GroupBy("group", in.View(), groupOf, list)
	c := translator.Compute("compute", []translator.Input{in}, func(context.Context) (map[string]string, error) {
		return in.State().Map(), nil
	})
	for _, tc := range []struct {
		r    readyRunner
		out  watchable.View[string, string]
		want map[string]string
	}{
		{d, d.Output(), map[string]string{"a/x:1": "x:1 from a"}},
		{g, g.Output(), map[string]string{"x": "a=1"}},
		{c, c.Output(), map[string]string{"a": "x:1"}},
	} {
		t.Run(tc.r.Name(), func(t *testing.T) {
			sub := tc.out.Subscribe(t.Context())
			if snap := receive(t, sub); snap.State.Len() != 0 || snap.Initialized {
				t.Errorf("first snapshot before Run = %+v, want empty and not initialized", snap)
			}
			start(t, tc.r)
			for {
				snap := receive(t, sub)
				if snap.Initialized {
					if diff := cmp.Diff(tc.want, snap.State.Map()); diff != "" {
						t.Errorf("initialized contents (-want +got):\n%s", diff)
					}
					break
				}
			}
		})
	}
}

// TestOutputIsReadOnly checks that what Output returns offers no way to
// write, and shows what the translator writes.
func TestOutputIsReadOnly(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x")
	d := translator.Derive("split", in.View(), split)
	out := d.Output()
	typ := reflect.TypeOf(out)
	if typ != reflect.TypeFor[watchable.View[string, string]]() {
		t.Fatalf("Output returns a %v, want a watchable.View", typ)
	}
	for _, write := range []string{"Store", "Delete", "LoadOrStore", "LoadAndDelete", "CompareAndSwap", "Batch", "Replace", "Close", "RegisterInitializer"} {
		if _, ok := typ.MethodByName(write); ok {
			t.Errorf("the output has the writing method %s", write)
		}
	}
	start(t, d)
	waitReady(t, d)
	if diff := cmp.Diff(map[string]string{"a/x": "x from a"}, out.State().Map()); diff != "" {
		t.Errorf("contents seen through a view taken before Run (-want +got):\n%s", diff)
	}
}

// TestMisuseWhileRunningPanics checks that WithInputEqual, and Run, called
// while Run is running panic with a message naming the translator, and
// that WithInputEqual is fine again once Run has returned.
func TestMisuseWhileRunningPanics(t *testing.T) {
	in := new(watchable.Map[string, string])
	same := func(a, b string) bool { return a == b }
	derive := func() *translator.Derivation[string, string, string, string] {
		return translator.Derive("split", in.View(), split)
	}
	group := func() *translator.Grouping[string, string, string, string] {
		return translator.GroupBy("list", in.View(), groupOf, list)
	}
	for _, tc := range []struct {
		make func() (r readyRunner, misuse func())
		want string
	}{{
		func() (readyRunner, func()) { d := derive(); return d, func() { d.WithInputEqual(same) } },
		"translator.Derivation split: WithInputEqual called while Run is running; call it before Run",
	}, {
		func() (readyRunner, func()) { g := group(); return g, func() { g.WithInputEqual(same) } },
		"translator.Grouping list: WithInputEqual called while Run is running; call it before Run",
	}, {
		func() (readyRunner, func()) { d := derive(); return d, func() { _ = d.Run(t.Context()) } },
		"translator.Derivation split: Run called while it is running",
	}, {
		func() (readyRunner, func()) { g := group(); return g, func() { _ = g.Run(t.Context()) } },
		"translator.Grouping list: Run called while it is running",
	}, {
		func() (readyRunner, func()) {
			c := translator.Compute("none", nil, func(context.Context) (map[string]int, error) { return nil, nil })
			return c, func() { _ = c.Run(t.Context()) }
		},
		"translator.Computation none: Run called while it is running",
	}} {
		t.Run(tc.want, func(t *testing.T) {
			r, misuse := tc.make()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			waitReady(t, r) // a new translator is ready only once Run runs
			func() {
				defer func() {
					if p := recover(); fmt.Sprint(p) != tc.want {
						t.Errorf("panicked with %v, want %q", p, tc.want)
					}
				}()
				misuse()
			}()
			cancel()
			if err := receive(t, done); err != nil {
				t.Errorf("Run returned %v", err)
			}
		})
	}

	// Once Run has returned, configuring is fine again.
	d := derive()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitReady(t, d)
	cancel()
	receive(t, done)
	d.WithInputEqual(same)
}

// TestDeriveRejectsAZeroView checks the panic of a translator made over a
// view that is no map's.
func TestDeriveRejectsAZeroView(t *testing.T) {
	defer func() {
		want := "translator.Derive split: input cannot be watched: watchable: use of a zero View"
		if p := recover(); !strings.HasPrefix(fmt.Sprint(p), want) {
			t.Errorf("Derive panicked with %v, want %q", p, want)
		}
	}()
	translator.Derive("split", watchable.View[string, string]{}, split)
}
