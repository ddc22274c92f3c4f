package translator_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// followers are the translators that follow one input entry by entry,
// made over in, with the output they write.
var followers = []struct {
	name string
	make func(in watchable.View[string, string]) (readyRunner, watchable.View[string, string])
	// want is the output for an input of "a": "x:1" and "b": "y:2".
	want map[string]string
}{
	{"Derive", func(in watchable.View[string, string]) (readyRunner, watchable.View[string, string]) {
		d := translator.Derive("t", in, split)
		return d, d.Output()
	}, map[string]string{"a/x:1": "x:1 from a", "b/y:2": "y:2 from b"}},
	{"GroupBy", func(in watchable.View[string, string]) (readyRunner, watchable.View[string, string]) {
		g := translator.GroupBy("t", in, groupOf, list)
		return g, g.Output()
	}, map[string]string{"x": "a=1", "y": "b=2"}},
}

// TestFollowerWaitsForInitializedInput checks that Derive and GroupBy
// publish the translation of an uninitialized input as it comes, but are
// ready, and mark their output initialized, only once they have published
// the translation of the initialized input.
func TestFollowerWaitsForInitializedInput(t *testing.T) {
	for _, f := range followers {
		t.Run(f.name, func(t *testing.T) {
			in := new(watchable.Map[string, string])
			loaded := in.RegisterInitializer("loader")
			in.Store("a", "x:1")
			r, out := f.make(in.View())
			start(t, r)
			partial := filter(f.want, func(k string) bool { return strings.HasPrefix(k, "a") || k == "x" })
			waitContents(t, out, partial) // published early
			if isReady(r) {
				t.Fatal("ready while the input is not initialized")
			}
			if snap := <-out.Subscribe(t.Context()); snap.Initialized {
				t.Error("a snapshot of the output says Initialized while the input is not")
			}

			in.Store("b", "y:2")
			loaded()
			waitReady(t, r)
			if diff := cmp.Diff(f.want, out.State().Map()); diff != "" {
				t.Errorf("contents when ready (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{}, out.PendingInitializers()); diff != "" {
				t.Errorf("pending initializers of the ready output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFollowerOfAClosedUninitializedInput checks that an input closed
// before its initialization completes still initializes the output once it
// does: its contents were final.
func TestFollowerOfAClosedUninitializedInput(t *testing.T) {
	for _, f := range followers {
		t.Run(f.name, func(t *testing.T) {
			in := new(watchable.Map[string, string])
			loaded := in.RegisterInitializer("loader")
			in.Replace(map[string]string{"a": "x:1", "b": "y:2"})
			in.Close()
			r, out := f.make(in.View())
			start(t, r)
			waitContents(t, out, f.want)
			if isReady(r) {
				t.Fatal("ready while the input is not initialized")
			}
			loaded()
			waitReady(t, r)
		})
	}
}

// filter returns the entries of m whose keys keep selects.
func filter[V any](m map[string]V, keep func(string) bool) map[string]V {
	out := make(map[string]V)
	for k, v := range m {
		if keep(k) {
			out[k] = v
		}
	}
	return out
}

// probe is an Input that says when its Initialized method is called.
type probe struct {
	translator.Input
	asked chan struct{}
}

func (p probe) Initialized() <-chan struct{} {
	select {
	case p.asked <- struct{}{}:
	default:
	}
	return p.Input.Initialized()
}

// TestComputeWaitsForInitializedInputs checks that fn does not run while
// an input has a pending initializer, however it changes, and then runs
// once, from the initialized inputs.
func TestComputeWaitsForInitializedInputs(t *testing.T) {
	ready, loading := new(watchable.Map[string, int]), new(watchable.Map[string, int])
	ready.Store("r", 1)
	loaded := loading.RegisterInitializer("loader")
	var calls atomic.Int64
	p := probe{Input: loading.View(), asked: make(chan struct{}, 1)}
	c := translator.Compute("sum", []translator.Input{ready, p}, func(context.Context) (map[string]int, error) {
		calls.Add(1)
		select {
		case <-loading.Initialized():
		default:
			t.Error("fn called before every input is initialized")
		}
		sum := 0
		for _, v := range loading.State().All() {
			sum += v
		}
		return map[string]int{"sum": sum}, nil
	})
	<-p.asked // Compute checked its inputs
	start(t, c)
	receive(t, p.asked) // Run is waiting for loading, or past it
	loading.Store("a", 1)
	loading.Store("b", 2)
	ready.Store("r", 2)
	if n := calls.Load(); n != 0 {
		t.Fatalf("fn called %d times before its inputs were initialized", n)
	}
	if isReady(c) {
		t.Fatal("ready before its inputs were initialized")
	}

	loaded()
	waitReady(t, c)
	if diff := cmp.Diff(map[string]int{"sum": 3}, c.Output().State().Map()); diff != "" {
		t.Errorf("contents when ready (-want +got):\n%s", diff)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("fn called %d times to become ready, want 1", n)
	}
	// The initialization itself causes no second computation: the next
	// one is for the next change.
	loading.Store("c", 3)
	waitContents(t, c.Output(), map[string]int{"sum": 6})
	if n := calls.Load(); n != 2 {
		t.Errorf("fn called %d times after one change, want 2", n)
	}
}

// TestChainIsReadyOnData checks that a chain of translators over an input
// being loaded becomes ready only once the load is complete, without any
// ordering of its own, and that the computation at its end never sees a
// partial load.
func TestChainIsReadyOnData(t *testing.T) {
	pods := new(watchable.Map[string, string]) // pod -> "service:ip"
	loaded := pods.RegisterInitializer("loader")
	endpoints := translator.GroupBy("endpoints", pods.View(), groupOf, list)
	urls := translator.Derive("urls", endpoints.Output(), func(_ context.Context, service, ips string) (map[string]string, error) {
		return map[string]string{service: "http://" + service + " " + ips}, nil
	})
	var seen []int // urls seen by each computation; written by Run's goroutine
	count := translator.Compute("count", []translator.Input{urls.Output()}, func(context.Context) (map[string]int, error) {
		seen = append(seen, urls.Output().Len())
		return map[string]int{"services": urls.Output().Len()}, nil
	})
	g := runner.NewGroup()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, count, urls, endpoints) }()
	for i := range 10 {
		pods.Store(fmt.Sprint("p", i), fmt.Sprintf("s%d:10.0.0.%d", i%5, i))
	}
	if isReady(g) {
		t.Fatal("the group is ready while the load is not complete")
	}
	loaded()
	receive(t, g.Ready())
	if diff := cmp.Diff(map[string]int{"services": 5}, count.Output().State().Map()); diff != "" {
		t.Errorf("count when the group is ready (-want +got):\n%s", diff)
	}
	cancel()
	if err := receive(t, done); err != nil {
		t.Fatalf("group returned %v", err)
	}
	if diff := cmp.Diff([]int{5}, seen); diff != "" {
		t.Errorf("urls seen by each computation (-want +got):\n%s", diff)
	}
}
