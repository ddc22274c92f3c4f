package translator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// split produces one output per comma-separated word of v, keyed
// "k/word", with the value "word from k"; "" produces nothing, "fail"
// returns an error and "panic" panics.
func split(_ context.Context, k, v string) (map[string]string, error) {
	switch v {
	case "fail":
		return nil, errors.New("cannot split fail")
	case "panic":
		panic("split panicked")
	case "":
		return nil, nil
	}
	out := make(map[string]string)
	for _, w := range strings.Split(v, ",") {
		out[k+"/"+w] = w + " from " + k
	}
	return out, nil
}

func TestDeriveFollowsInput(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x,y")
	in.Store("b", "z")
	d := translator.Derive("split", in.View(), split)
	start(t, d)
	out := d.Output()
	waitContents(t, out, map[string]string{"a/x": "x from a", "a/y": "y from a", "b/z": "z from b"})

	// a stops producing a/x: it is deleted; a/w is new.
	in.Store("a", "y,w")
	waitContents(t, out, map[string]string{"a/y": "y from a", "a/w": "w from a", "b/z": "z from b"})

	// Deleting an input key deletes all its outputs.
	in.Delete("a")
	waitContents(t, out, map[string]string{"b/z": "z from b"})

	// Producing nothing deletes what was produced.
	in.Store("b", "")
	waitContents(t, out, map[string]string{})
}

// TestDeriveRunAgain checks that a Run following an earlier one makes the
// output exactly what it produces, in one change: outputs of input keys
// deleted while nothing ran are gone.
func TestDeriveRunAgain(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x")
	in.Store("b", "y")
	d := translator.Derive("split", in.View(), split)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	waitReady(t, d)
	cancel()
	if err := receive(t, done); err != nil {
		t.Fatalf("first Run returned %v", err)
	}

	in.Delete("b")
	in.Store("a", "w")
	sub := d.Output().Subscribe(t.Context())
	<-sub // what the first Run left
	start(t, d)
	want := map[string]string{"a/w": "w from a"}
	if diff := cmp.Diff(want, receive(t, sub).State.Map()); diff != "" {
		t.Errorf("first change of the second Run (-want +got):\n%s", diff)
	}
}

func TestDeriveTranslatesOnlyChangedKeys(t *testing.T) {
	in := new(watchable.Map[string, string])
	want := make(map[string]string)
	for i := range 100 {
		k := fmt.Sprint("k", i)
		in.Store(k, "v")
		want[k+"/v"] = "v from " + k
	}
	var calls counter[string]
	d := translator.Derive("split", in.View(), func(ctx context.Context, k, v string) (map[string]string, error) {
		calls.add(k)
		return split(ctx, k, v)
	})
	start(t, d)
	waitReady(t, d)
	if got := calls.take(); len(got) != 100 {
		t.Fatalf("initial translation called fn for %d keys, want 100", len(got))
	}

	in.Store("k7", "w")
	delete(want, "k7/v")
	want["k7/w"] = "w from k7"
	waitContents(t, d.Output(), want)
	in.Delete("k8")
	delete(want, "k8/v")
	waitContents(t, d.Output(), want)
	if diff := cmp.Diff(map[string]int{"k7": 1}, calls.take()); diff != "" {
		t.Errorf("calls after changing k7 and deleting k8 (-want +got):\n%s", diff)
	}
}

func TestDeriveFailureKeepsOutputs(t *testing.T) {
	for _, tc := range []struct {
		value string
		is    error // the error the KeyError wraps, if a sentinel
		text  string
	}{
		{value: "fail", text: "cannot split fail"},
		{value: "panic", is: translator.ErrPanicked, text: "split panicked"},
	} {
		t.Run(tc.value, func(t *testing.T) {
			in := new(watchable.Map[string, string])
			in.Store("a", "x")
			in.Store("b", "y")
			errs := make(chan error, 10)
			d := translator.Derive("split", in.View(), split, translator.WithErrorHandler(func(err error) { errs <- err }),
				translator.WithLogger(discard))
			start(t, d)
			out := d.Output()
			waitContents(t, out, map[string]string{"a/x": "x from a", "b/y": "y from b"})

			in.Store("a", tc.value)
			in.Store("b", "z") // translated in the same or a later snapshot
			err := receive(t, errs)
			var ke *translator.KeyError[string]
			if !errors.As(err, &ke) {
				t.Fatalf("error %v (%T) is not a *KeyError[string]", err, err)
			}
			if ke.Key != "a" || ke.Translator != "split" || !strings.Contains(ke.Error(), tc.text) {
				t.Errorf("KeyError = %+v (%q), want key a, translator split, text %q", ke, ke.Error(), tc.text)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			// a's previous output stays; b moves on.
			waitContents(t, out, map[string]string{"a/x": "x from a", "b/z": "z from b"})

			// Once a translates again, its outputs follow.
			in.Store("a", "w")
			waitContents(t, out, map[string]string{"a/w": "w from a", "b/z": "z from b"})
		})
	}
}

// claim makes every input key produce the output key "shared".
func claim(_ context.Context, k, v string) (map[string]string, error) {
	if v == "" {
		return nil, nil
	}
	return map[string]string{"shared": k + ":" + v}, nil
}

func TestDeriveConflict(t *testing.T) {
	for _, order := range [][]string{{"a", "b", "c"}, {"c", "b", "a"}, {"b", "c", "a"}} {
		t.Run(strings.Join(order, ""), func(t *testing.T) {
			in := new(watchable.Map[string, string])
			errs := make(chan error, 10)
			d := translator.Derive("claim", in.View(), claim, translator.WithErrorHandler(func(err error) { errs <- err }),
				translator.WithLogger(discard))
			start(t, d)
			out := d.Output()
			for _, k := range order {
				in.Store(k, "v")
			}
			// Whatever the order of events, the smallest key wins.
			waitContents(t, out, map[string]string{"shared": "a:v"})
			var last *translator.ConflictError[string, string]
			for last == nil || len(last.Claimants) < 3 {
				err := receive(t, errs)
				if !errors.Is(err, translator.ErrConflict) || !errors.As(err, &last) {
					t.Fatalf("error %v (%T) is not a *ConflictError[string, string]", err, err)
				}
			}
			want := &translator.ConflictError[string, string]{Translator: "claim", Key: "shared", Claimants: []string{"a", "b", "c"}, Winner: "a"}
			if diff := cmp.Diff(want, last); diff != "" {
				t.Errorf("conflict (-want +got):\n%s", diff)
			}

			// A loser's change is not published.
			in.Store("c", "w")
			// The winner's change is.
			in.Store("a", "w")
			waitContents(t, out, map[string]string{"shared": "a:w"})
			// When the winner stops producing it, the next claimant takes over.
			in.Store("a", "")
			waitContents(t, out, map[string]string{"shared": "b:v"})
			in.Delete("b")
			waitContents(t, out, map[string]string{"shared": "c:w"})
			in.Delete("c")
			waitContents(t, out, map[string]string{})
		})
	}
}

func TestDeriveConflictOrdersNumbersByValue(t *testing.T) {
	in := new(watchable.Map[int, string])
	in.Store(10, "")
	in.Store(9, "")
	in.Store(100, "")
	d := translator.Derive("numbers", in.View(), func(_ context.Context, k int, _ string) (map[string]int, error) {
		return map[string]int{"shared": k}, nil
	}, translator.WithLogger(discard))
	start(t, d)
	waitReady(t, d)
	if diff := cmp.Diff(map[string]int{"shared": 9}, d.Output().State().Map()); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
}

func TestDeriveReady(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x")
	d := translator.Derive("split", in.View(), split)
	if d.Name() != "split" {
		t.Errorf("Name() = %q, want split", d.Name())
	}
	if isReady(d) {
		t.Fatal("ready before Run")
	}
	if diff := cmp.Diff([]string{"split"}, d.Output().PendingInitializers()); diff != "" {
		t.Errorf("the output's pending initializers before Run (-want +got):\n%s", diff)
	}
	start(t, d)
	waitReady(t, d)
	if diff := cmp.Diff(map[string]string{"a/x": "x from a"}, d.Output().State().Map()); diff != "" {
		t.Errorf("contents when ready (-want +got):\n%s", diff)
	}
}

func TestDeriveRunReturnsNilWhenDone(t *testing.T) {
	for _, closeInput := range []bool{false, true} {
		t.Run(fmt.Sprint("closeInput=", closeInput), func(t *testing.T) {
			in := new(watchable.Map[string, string])
			d := translator.Derive("split", in.View(), split)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			waitReady(t, d)
			if closeInput {
				in.Close()
				select {
				case err := <-done:
					t.Fatalf("Run returned %v when its input closed, want it to wait for ctx", err)
				default:
				}
			}
			cancel()
			if err := receive(t, done); err != nil {
				t.Errorf("Run returned %v, want nil", err)
			}
		})
	}
}

// TestDeriveInputClosedBeforeRun checks that a map closed before Run (filled
// once, say, then closed) is still translated: its contents stay readable.
func TestDeriveInputClosedBeforeRun(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x,y")
	in.Close()
	d := translator.Derive("split", in.View(), split)
	start(t, d)
	waitReady(t, d)
	if diff := cmp.Diff(map[string]string{"a/x": "x from a", "a/y": "y from a"}, d.Output().State().Map()); diff != "" {
		t.Errorf("contents when ready (-want +got):\n%s", diff)
	}
}

// TestDeriveStopsQuietlyWhenDone checks that a transformation cut short by
// the end of Run, returning the context's error, is not reported as failed.
func TestDeriveStopsQuietlyWhenDone(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Replace(map[string]string{"a": "x", "b": "y", "c": "z"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs []error // written by Run's goroutine, read once Run returned
	d := translator.Derive("split", in.View(), func(ctx context.Context, k, v string) (map[string]string, error) {
		cancel() // the program stops while the first key is translated
		return nil, ctx.Err()
	}, translator.WithErrorHandler(func(err error) { errs = append(errs, err) }))
	if err := d.Run(ctx); err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
	if len(errs) != 0 {
		t.Errorf("errors reported after ctx was done: %v", errs)
	}
	if isReady(d) {
		t.Error("ready after a cut-short first translation")
	}
}

func TestDeriveInputEqual(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x")
	// Values that differ only in case are the same to the outputs' purpose.
	var calls counter[string]
	d := translator.Derive("split", in.View(), func(ctx context.Context, k, v string) (map[string]string, error) {
		calls.add(k)
		return split(ctx, k, strings.ToLower(v))
	}).WithInputEqual(strings.EqualFold)
	start(t, d)
	out := d.Output()
	waitContents(t, out, map[string]string{"a/x": "x from a"})
	calls.take()

	in.Store("a", "X")
	in.Store("b", "y") // a sentinel: once b/y is published, the change to a was handled
	waitContents(t, out, map[string]string{"a/x": "x from a", "b/y": "y from b"})
	if diff := cmp.Diff(map[string]int{"b": 1}, calls.take()); diff != "" {
		t.Errorf("calls after an equal change (-want +got):\n%s", diff)
	}
	in.Store("a", "z")
	waitContents(t, out, map[string]string{"a/z": "z from a", "b/y": "y from b"})
	// A deleted key that comes back is translated, whatever its value.
	in.Delete("a")
	waitContents(t, out, map[string]string{"b/y": "y from b"})
	in.Store("a", "Z")
	waitContents(t, out, map[string]string{"a/z": "z from a", "b/y": "y from b"})
}
