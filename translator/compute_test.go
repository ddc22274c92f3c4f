package translator_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// join computes "name: port" for every name in names whose port is known.
func join(names *watchable.Map[string, int], ports *watchable.Map[int, string]) func(context.Context) (map[string]string, error) {
	return func(context.Context) (map[string]string, error) {
		p := ports.State()
		out := make(map[string]string)
		for name, id := range names.State().All() {
			if port, ok := p.Get(id); ok {
				out[name] = port
			}
		}
		return out, nil
	}
}

func TestComputeFollowsInputs(t *testing.T) {
	names, ports, out := new(watchable.Map[string, int]), new(watchable.Map[int, string]), new(watchable.Map[string, string])
	names.Store("web", 1)
	ports.Store(1, "80")
	var calls atomic.Int64
	fn := join(names, ports)
	r := translator.Compute("join", out, func(ctx context.Context) (map[string]string, error) {
		calls.Add(1)
		return fn(ctx)
	}, names, ports)
	start(t, r)
	waitReady(t, r)
	if diff := cmp.Diff(map[string]string{"web": "80"}, out.State().Map()); diff != "" {
		t.Errorf("contents when ready (-want +got):\n%s", diff)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("fn called %d times to become ready, want 1", n)
	}

	names.Store("db", 2)
	ports.Store(2, "5432")
	waitContents(t, out, map[string]string{"web": "80", "db": "5432"})
	names.Delete("db")
	waitContents(t, out, map[string]string{"web": "80"})

	// Subscribers of out see only the keys that changed.
	sub := out.Subscribe(t.Context())
	<-sub // the current contents
	ports.Store(1, "8080")
	for {
		snap := receive(t, sub)
		for _, u := range snap.Updates {
			if u.Key != "web" {
				t.Errorf("update for unchanged key %q", u.Key)
			}
		}
		if v, _ := snap.State.Get("web"); v == "8080" {
			break
		}
	}
}

func TestComputeCoalescesBursts(t *testing.T) {
	names, ports, out := new(watchable.Map[string, int]), new(watchable.Map[int, string]), new(watchable.Map[string, string])
	var calls atomic.Int64
	var gate atomic.Bool
	entered, release := make(chan struct{}), make(chan struct{})
	fn := join(names, ports)
	r := translator.Compute("join", out, func(ctx context.Context) (map[string]string, error) {
		calls.Add(1)
		if gate.Load() {
			entered <- struct{}{}
			<-release
		}
		return fn(ctx)
	}, names, ports)
	start(t, r)
	waitReady(t, r)

	gate.Store(true)
	names.Store("first", 0)
	receive(t, entered) // fn is now busy with the first change
	gate.Store(false)
	want := map[string]string{"first": "8000"}
	for i := range 50 {
		name := fmt.Sprint("svc", i)
		names.Store(name, i)
		ports.Store(i, fmt.Sprint(8000+i))
		want[name] = fmt.Sprint(8000 + i)
	}
	close(release)
	waitContents(t, out, want)
	// The initial computation, the one for "first", and one for the whole
	// burst of 100 changes across both inputs.
	if n := calls.Load(); n != 3 {
		t.Errorf("fn called %d times, want 3", n)
	}
}

func TestComputeFailureKeepsOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func()
	}{
		{"error", func() {}},
		{"panic", func() { panic("compute panicked") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, out := new(watchable.Map[string, int]), new(watchable.Map[string, int])
			names.Store("a", 1)
			failed := make(chan struct{}, 10)
			r := translator.Compute("copy", out, func(context.Context) (map[string]int, error) {
				s := names.State()
				if _, bad := s.Get("bad"); bad {
					failed <- struct{}{}
					tc.fail()
					return nil, errors.New("bad input")
				}
				return s.Map(), nil
			}, names)
			start(t, r)
			waitContents(t, out, map[string]int{"a": 1})

			names.Store("bad", 2)
			receive(t, failed)
			names.Store("b", 3) // retried on the next change, failing again
			receive(t, failed)
			if diff := cmp.Diff(map[string]int{"a": 1}, out.State().Map()); diff != "" {
				t.Errorf("contents after failures (-want +got):\n%s", diff)
			}

			names.Delete("bad")
			waitContents(t, out, map[string]int{"a": 1, "b": 3})
		})
	}
}

func TestComputeNotReadyUntilSuccess(t *testing.T) {
	names, out := new(watchable.Map[string, int]), new(watchable.Map[string, int])
	names.Store("bad", 1)
	tried := make(chan struct{}, 10)
	r := translator.Compute("copy", out, func(context.Context) (map[string]int, error) {
		tried <- struct{}{}
		s := names.State()
		if _, bad := s.Get("bad"); bad {
			return nil, errors.New("bad input")
		}
		return s.Map(), nil
	}, names)
	start(t, r)
	receive(t, tried)
	select {
	case <-r.(interface{ Ready() <-chan struct{} }).Ready():
		t.Fatal("ready although fn failed")
	default:
	}
	names.Delete("bad")
	waitReady(t, r)
}

func TestComputeWithoutInputs(t *testing.T) {
	out := new(watchable.Map[string, int])
	r := translator.Compute("constant", out, func(context.Context) (map[string]int, error) {
		return map[string]int{"answer": 42}, nil
	})
	start(t, r)
	waitReady(t, r)
	if diff := cmp.Diff(map[string]int{"answer": 42}, out.State().Map()); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
}

func TestComputeRejectsNilInputs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input translator.Input
	}{
		{"nil map", (*watchable.Map[string, int])(nil)},
		{"nil", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Compute did not panic")
				}
			}()
			translator.Compute("bad", new(watchable.Map[string, int]), func(context.Context) (map[string]int, error) {
				return nil, nil
			}, tc.input)
		})
	}
}
