package translator_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// Input values of the GroupBy tests are "group:payload"; a value without a
// colon belongs to no group.

// groupOf is the key function of the GroupBy tests.
func groupOf(_ string, v string) (string, bool) {
	group, _, ok := strings.Cut(v, ":")
	return group, ok
}

// payload is the part of v after the colon.
func payload(v string) string {
	_, p, _ := strings.Cut(v, ":")
	return p
}

// list builds "k=payload k=payload ..." sorted by k; a member whose payload
// is "fail" makes it fail and "panic" makes it panic.
func list(_ context.Context, _ string, members iter.Seq2[string, string]) (string, error) {
	var parts []string
	for k, v := range members {
		switch payload(v) {
		case "fail":
			return "", fmt.Errorf("member %s fails", k)
		case "panic":
			panic("member " + k + " panics")
		}
		parts = append(parts, k+"="+payload(v))
	}
	slices.Sort(parts)
	return strings.Join(parts, " "), nil
}

// countBuilds wraps list, counting the builds per group in c.
func countBuilds(c *counter[string]) func(context.Context, string, iter.Seq2[string, string]) (string, error) {
	return func(ctx context.Context, group string, members iter.Seq2[string, string]) (string, error) {
		c.add(group)
		return list(ctx, group, members)
	}
}

// write is a change to the input of a GroupBy test: store Value, or delete
// when Value is "-".
type write struct{ Key, Value string }

func (w write) apply(b *watchable.Batch[string, string]) {
	if w.Value == "-" {
		b.Delete(w.Key)
	} else {
		b.Store(w.Key, w.Value)
	}
}

// TestGroupByFollowsInput applies each step's writes as one Batch and checks
// the output and which groups were built again.
func TestGroupByFollowsInput(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:1")
	in.Store("b", "x:2")
	in.Store("c", "y:3")
	in.Store("n", "none")
	var builds counter[string]
	g := translator.GroupBy("list", in.View(), groupOf, countBuilds(&builds))
	start(t, g)
	waitReady(t, g)
	out := g.Output()
	if diff := cmp.Diff(map[string]string{"x": "a=1 b=2", "y": "c=3"}, out.State().Map()); diff != "" {
		t.Fatalf("contents when ready (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"x": 1, "y": 1}, builds.take()); diff != "" {
		t.Fatalf("initial builds (-want +got):\n%s", diff)
	}

	for _, step := range []struct {
		name   string
		writes []write
		want   map[string]string
		builds map[string]int
	}{{
		name:   "a member's value changes",
		writes: []write{{"a", "x:10"}},
		want:   map[string]string{"x": "a=10 b=2", "y": "c=3"},
		builds: map[string]int{"x": 1},
	}, {
		name:   "a member moves to another group",
		writes: []write{{"b", "y:2"}},
		want:   map[string]string{"x": "a=10", "y": "b=2 c=3"},
		builds: map[string]int{"x": 1, "y": 1},
	}, {
		name:   "an entry joins a new group",
		writes: []write{{"d", "z:4"}},
		want:   map[string]string{"x": "a=10", "y": "b=2 c=3", "z": "d=4"},
		builds: map[string]int{"z": 1},
	}, {
		name:   "the last member moves away: its group is deleted",
		writes: []write{{"a", "y:1"}},
		want:   map[string]string{"y": "a=1 b=2 c=3", "z": "d=4"},
		builds: map[string]int{"y": 1},
	}, {
		name:   "the last member leaves every group",
		writes: []write{{"d", "none"}},
		want:   map[string]string{"y": "a=1 b=2 c=3"},
	}, {
		name:   "a member is deleted",
		writes: []write{{"b", "-"}},
		want:   map[string]string{"y": "a=1 c=3"},
		builds: map[string]int{"y": 1},
	}, {
		name:   "several changes in one snapshot build each group once",
		writes: []write{{"a", "x:1"}, {"c", "x:3"}, {"e", "x:5"}, {"f", "w:6"}, {"f", "-"}},
		want:   map[string]string{"x": "a=1 c=3 e=5"},
		builds: map[string]int{"x": 1},
	}, {
		name:   "every member is deleted",
		writes: []write{{"a", "-"}, {"c", "-"}, {"e", "-"}, {"n", "-"}},
		want:   map[string]string{},
	}} {
		in.Batch(func(b *watchable.Batch[string, string]) {
			for _, w := range step.writes {
				w.apply(b)
			}
		})
		waitContents(t, out, step.want)
		if diff := cmp.Diff(step.builds, builds.take()); diff != "" {
			t.Errorf("%s: builds (-want +got):\n%s", step.name, diff)
		}
	}
}

func TestGroupByUnrelatedChangesBuildNothing(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:1")
	var builds counter[string]
	g := translator.GroupBy("list", in.View(), groupOf, countBuilds(&builds))
	start(t, g)
	out := g.Output()
	waitContents(t, out, map[string]string{"x": "a=1"})
	builds.take()

	in.Store("n", "none")  // in no group
	in.Store("n", "other") // still in none
	in.Delete("n")
	in.Store("b", "y:2") // a sentinel: once y is published, the writes above were handled
	waitContents(t, out, map[string]string{"x": "a=1", "y": "b=2"})
	if diff := cmp.Diff(map[string]int{"y": 1}, builds.take()); diff != "" {
		t.Errorf("builds (-want +got):\n%s", diff)
	}
}

// TestGroupByFirstPublicationIsOneChange checks that a subscriber of the
// output from before Run sees the whole first grouping in one change, never
// a mix.
func TestGroupByFirstPublicationIsOneChange(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Replace(map[string]string{"a": "x:1", "b": "x:2", "c": "y:3"})
	g := translator.GroupBy("list", in.View(), groupOf, list)
	sub := g.Output().Subscribe(t.Context())
	<-sub // empty, before Run
	start(t, g)
	want := map[string]string{"x": "a=1 b=2", "y": "c=3"}
	if diff := cmp.Diff(want, receive(t, sub).State.Map()); diff != "" {
		t.Errorf("first change seen by a subscriber (-want +got):\n%s", diff)
	}
}

func TestGroupByBuildFailureKeepsOutput(t *testing.T) {
	for _, tc := range []struct {
		payload string
		is      error // the error the KeyError wraps, if a sentinel
		text    string
	}{
		{payload: "fail", text: "member b fails"},
		{payload: "panic", is: translator.ErrPanicked, text: "member b panics"},
	} {
		t.Run(tc.payload, func(t *testing.T) {
			in := new(watchable.Map[string, string])
			in.Store("a", "x:1")
			in.Store("c", "y:3")
			errs := make(chan error, 10)
			g := translator.GroupBy("list", in.View(), groupOf, list,
				translator.WithErrorHandler(func(err error) { errs <- err }), translator.WithLogger(discard))
			start(t, g)
			out := g.Output()
			waitContents(t, out, map[string]string{"x": "a=1", "y": "c=3"})

			in.Batch(func(b *watchable.Batch[string, string]) {
				b.Store("b", "x:"+tc.payload)
				b.Store("c", "y:30")
			})
			err := receive(t, errs)
			var ke *translator.KeyError[string]
			if !errors.As(err, &ke) {
				t.Fatalf("error %v (%T) is not a *KeyError[string]", err, err)
			}
			if ke.Key != "x" || ke.Translator != "list" || !strings.Contains(ke.Error(), tc.text) {
				t.Errorf("KeyError = %+v (%q), want the group x, translator list, text %q", ke, ke.Error(), tc.text)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			// x keeps its previous output; y, built in the same snapshot, moves on.
			waitContents(t, out, map[string]string{"x": "a=1", "y": "c=30"})

			// Once x builds again, its output follows.
			in.Store("b", "x:2")
			waitContents(t, out, map[string]string{"x": "a=1 b=2", "y": "c=30"})

			// A failing group whose members all leave is deleted.
			in.Store("b", "x:"+tc.payload)
			receive(t, errs)
			in.Batch(func(b *watchable.Batch[string, string]) {
				b.Delete("a")
				b.Delete("b")
			})
			waitContents(t, out, map[string]string{"y": "c=30"})
		})
	}
}

func TestGroupByKeyPanicKeepsEntry(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:1")
	in.Store("b", "x:2")
	key := func(k, v string) (string, bool) {
		if v == "panic" {
			panic("cannot group " + k)
		}
		return groupOf(k, v)
	}
	errs := make(chan error, 10)
	g := translator.GroupBy("list", in.View(), key, list,
		translator.WithErrorHandler(func(err error) { errs <- err }), translator.WithLogger(discard))
	start(t, g)
	out := g.Output()
	waitContents(t, out, map[string]string{"x": "a=1 b=2"})

	in.Store("a", "panic")
	err := receive(t, errs)
	var ke *translator.KeyError[string]
	if !errors.As(err, &ke) || ke.Key != "a" || !errors.Is(err, translator.ErrPanicked) ||
		!strings.Contains(err.Error(), "cannot group a") {
		t.Fatalf("error %v (%T), want a *KeyError for the input key a wrapping ErrPanicked", err, err)
	}
	// a stays in x with its previous value.
	in.Store("b", "x:20")
	waitContents(t, out, map[string]string{"x": "a=1 b=20"})
	// Deleting it removes it.
	in.Delete("a")
	waitContents(t, out, map[string]string{"x": "b=20"})
}

// TestGroupByFailuresReachStatus checks that failures appear in, and
// disappear from, the status of a runner group.
func TestGroupByFailuresReachStatus(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:1")
	g := startGroup(t, translator.GroupBy("list", in.View(), groupOf, list, translator.WithLogger(discard)))

	in.Store("b", "x:fail")
	waitProblems(t, g, "list", map[string]string{"translator list": "translator list: key x: member b fails"})
	in.Store("c", "y:fail")
	waitProblems(t, g, "list", map[string]string{"translator list": "key y: member c fails"})
	in.Delete("c") // y is gone, and its failure with it
	in.Store("b", "x:2")
	waitProblems(t, g, "list", nil)
}

func TestGroupByInputEqual(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x:1")
	in.Store("b", "x:2")
	// Payloads ending in "~" are the same payload for the output's purpose:
	// "1~" and "1" compare equal.
	samePayload := func(a, b string) bool { return strings.TrimSuffix(a, "~") == strings.TrimSuffix(b, "~") }
	var builds counter[string]
	g := translator.GroupBy("list", in.View(), groupOf, countBuilds(&builds)).WithInputEqual(samePayload)
	start(t, g)
	out := g.Output()
	waitContents(t, out, map[string]string{"x": "a=1 b=2"})
	builds.take()

	in.Store("a", "x:1~")
	in.Store("c", "y:3") // sentinel
	waitContents(t, out, map[string]string{"x": "a=1 b=2", "y": "c=3"})
	if diff := cmp.Diff(map[string]int{"y": 1}, builds.take()); diff != "" {
		t.Errorf("builds after an equal change (-want +got):\n%s", diff)
	}
	// The next build of x sees a's newest value.
	in.Store("b", "x:20")
	waitContents(t, out, map[string]string{"x": "a=1~ b=20", "y": "c=3"})
	// An equal value in another group is a move.
	in.Store("a", "y:1~")
	waitContents(t, out, map[string]string{"x": "b=20", "y": "a=1~ c=3"})
}

func TestGroupByReady(t *testing.T) {
	in := new(watchable.Map[string, string])
	g := translator.GroupBy("list", in.View(), groupOf, list)
	if g.Name() != "list" {
		t.Errorf("Name() = %q, want list", g.Name())
	}
	if isReady(g) {
		t.Fatal("ready before Run")
	}
	start(t, g)
	waitReady(t, g) // an empty input is a complete first grouping too
	if n := g.Output().Len(); n != 0 {
		t.Errorf("the output has %d entries, want 0", n)
	}
}

func TestGroupByRunReturnsNilWhenDone(t *testing.T) {
	for _, closeInput := range []bool{false, true} {
		t.Run(fmt.Sprint("closeInput=", closeInput), func(t *testing.T) {
			in := new(watchable.Map[string, string])
			in.Store("a", "x:1")
			g := translator.GroupBy("list", in.View(), groupOf, list)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- g.Run(ctx) }()
			waitReady(t, g)
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
			if diff := cmp.Diff(map[string]string{"x": "a=1"}, g.Output().State().Map()); diff != "" {
				t.Errorf("contents after Run (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGroupMatchesFromScratch makes random writes, some in batches, and
// checks after each round that the output equals a grouping of the input
// done from scratch.
func TestGroupByMatchesFromScratch(t *testing.T) {
	for _, withEqual := range []bool{false, true} {
		t.Run(fmt.Sprint("withEqual=", withEqual), func(t *testing.T) {
			in := new(watchable.Map[string, string])
			lower := func(ctx context.Context, g string, members iter.Seq2[string, string]) (string, error) {
				s, err := list(ctx, g, members)
				return strings.ToLower(s), err
			}
			rng := rand.New(rand.NewPCG(3, 4))
			value := func() string {
				if rng.IntN(8) == 0 {
					return "none"
				}
				p := []string{"p", "P", "q"}[rng.IntN(3)]
				return fmt.Sprintf("g%d:%s", rng.IntN(5), p)
			}
			write := func(b *watchable.Batch[string, string]) {
				k := fmt.Sprint("k", rng.IntN(40))
				if rng.IntN(5) == 0 {
					b.Delete(k)
				} else {
					b.Store(k, value())
				}
			}
			for range 20 {
				in.Batch(write)
			}
			g := translator.GroupBy("list", in.View(), groupOf, lower)
			if withEqual {
				// Payload case does not matter to the equality, nor to build.
				g.WithInputEqual(strings.EqualFold)
			}
			start(t, g)
			for round := range 50 {
				for range rng.IntN(10) {
					if rng.IntN(3) == 0 {
						in.Batch(func(b *watchable.Batch[string, string]) {
							for range 1 + rng.IntN(5) {
								write(b)
							}
						})
					} else {
						in.Batch(write)
					}
				}
				want := make(map[string]string)
				members := make(map[string]map[string]string)
				for k, v := range in.State().All() {
					if g, ok := groupOf(k, v); ok {
						if members[g] == nil {
							members[g] = make(map[string]string)
						}
						members[g][k] = v
					}
				}
				for g, m := range members {
					want[g], _ = lower(context.Background(), g, func(yield func(string, string) bool) {
						for k, v := range m {
							if !yield(k, v) {
								return
							}
						}
					})
				}
				t.Logf("round %d: %d groups", round, len(want))
				waitContents(t, g.Output(), want)
			}
		})
	}
}

// TestGroupByInputClosedBeforeRun checks that a map closed before Run (filled
// once, say, then closed) is still grouped: its contents stay readable.
func TestGroupByInputClosedBeforeRun(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Replace(map[string]string{"a": "x:1", "b": "x:2", "c": "y:3"})
	in.Close()
	g := translator.GroupBy("list", in.View(), groupOf, list)
	start(t, g)
	waitReady(t, g)
	if diff := cmp.Diff(map[string]string{"x": "a=1 b=2", "y": "c=3"}, g.Output().State().Map()); diff != "" {
		t.Errorf("contents when ready (-want +got):\n%s", diff)
	}
}

// TestGroupByStopsQuietlyWhenDone checks that a build cut short by the end of
// Run, returning the context's error, is neither reported nor published.
func TestGroupByStopsQuietlyWhenDone(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Replace(map[string]string{"a": "x:1", "b": "y:2", "c": "z:3"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errs []error // written by Run's goroutine, read once Run returned
	g := translator.GroupBy("list", in.View(), groupOf,
		func(ctx context.Context, _ string, _ iter.Seq2[string, string]) (string, error) {
			cancel() // the program stops while the first group is built
			return "", ctx.Err()
		}, translator.WithErrorHandler(func(err error) { errs = append(errs, err) }))
	if err := g.Run(ctx); err != nil {
		t.Errorf("Run returned %v, want nil", err)
	}
	if len(errs) != 0 {
		t.Errorf("errors reported after ctx was done: %v", errs)
	}
	if n := g.Output().Revision(); n != 0 {
		t.Errorf("the output was written %d times by a cut-short Run, want 0", n)
	}
	if isReady(g) {
		t.Error("ready after a cut-short first grouping")
	}
}
