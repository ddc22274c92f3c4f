package translator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// join computes "name: port" for every name in names whose port is known.
func join(names watchable.View[string, int], ports watchable.View[int, string]) func(context.Context) (map[string]string, error) {
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
	names, ports := new(watchable.Map[string, int]), new(watchable.Map[int, string])
	names.Store("web", 1)
	ports.Store(1, "80")
	var calls atomic.Int64
	fn := join(names.View(), ports.View())
	c := translator.Compute("join", []translator.Input{names, ports.View()}, func(ctx context.Context) (map[string]string, error) {
		calls.Add(1)
		return fn(ctx)
	})
	start(t, c)
	waitReady(t, c)
	out := c.Output()
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

	// Subscribers of the output see only the keys that changed.
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
	names, ports := new(watchable.Map[string, int]), new(watchable.Map[int, string])
	var calls atomic.Int64
	var gate atomic.Bool
	called := make(chan int64, 100) // the number of each call, as it starts
	entered, release := make(chan struct{}), make(chan struct{})
	fn := join(names.View(), ports.View())
	c := translator.Compute("join", []translator.Input{names, ports}, func(ctx context.Context) (map[string]string, error) {
		called <- calls.Add(1)
		if gate.Load() {
			entered <- struct{}{}
			<-release
		}
		return fn(ctx)
	})
	start(t, c)
	if n := receive(t, called); n != 1 {
		t.Fatalf("first call is call %d", n)
	}
	waitReady(t, c) // the first call has returned

	gate.Store(true)
	names.Store("first", 0)
	receive(t, called)
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
	// The burst of 100 changes across both inputs, made while fn was
	// busy, causes one more call.
	if n := receive(t, called); n != 3 {
		t.Errorf("the call after the burst is call %d, want 3", n)
	}
	waitContents(t, c.Output(), want)
	// And no other: the next change causes the fourth.
	names.Store("last", 0)
	if n := receive(t, called); n != 4 {
		t.Errorf("the call after the next change is call %d, want 4", n)
	}
}

func TestComputeFailureKeepsOutput(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func()
		is   error // the error reported wraps it, if a sentinel
	}{
		{"error", func() {}, nil},
		{"panic", func() { panic("compute panicked") }, translator.ErrPanicked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := new(watchable.Map[string, int])
			names.Store("a", 1)
			failed := make(chan struct{}, 10)
			errs := make(chan error, 10)
			c := translator.Compute("copy", []translator.Input{names}, func(context.Context) (map[string]int, error) {
				s := names.State()
				if _, bad := s.Get("bad"); bad {
					failed <- struct{}{}
					tc.fail()
					return nil, errors.New("bad input")
				}
				return s.Map(), nil
			}, translator.WithErrorHandler(func(err error) { errs <- err }), translator.WithLogger(discard))
			start(t, c)
			out := c.Output()
			waitContents(t, out, map[string]int{"a": 1})

			names.Store("bad", 2)
			receive(t, failed)
			err := receive(t, errs)
			if !strings.HasPrefix(err.Error(), "translator copy: compute: ") || tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q, want it to name the translator (and wrap %v)", err, tc.is)
			}
			names.Store("b", 3) // retried on the next change, failing again
			receive(t, failed)
			receive(t, errs)
			if diff := cmp.Diff(map[string]int{"a": 1}, out.State().Map()); diff != "" {
				t.Errorf("contents after failures (-want +got):\n%s", diff)
			}

			names.Delete("bad")
			waitContents(t, out, map[string]int{"a": 1, "b": 3})
		})
	}
}

func TestComputeNotReadyUntilSuccess(t *testing.T) {
	names := new(watchable.Map[string, int])
	names.Store("bad", 1)
	tried := make(chan struct{}, 10)
	c := translator.Compute("copy", []translator.Input{names}, func(context.Context) (map[string]int, error) {
		tried <- struct{}{}
		s := names.State()
		if _, bad := s.Get("bad"); bad {
			return nil, errors.New("bad input")
		}
		return s.Map(), nil
	}, translator.WithLogger(discard))
	start(t, c)
	receive(t, tried)
	if isReady(c) {
		t.Fatal("ready although fn failed")
	}
	names.Delete("bad")
	waitReady(t, c)
}

func TestComputeWithoutInputs(t *testing.T) {
	c := translator.Compute("constant", nil, func(context.Context) (map[string]int, error) {
		return map[string]int{"answer": 42}, nil
	})
	start(t, c)
	waitReady(t, c)
	if diff := cmp.Diff(map[string]int{"answer": 42}, c.Output().State().Map()); diff != "" {
		t.Errorf("contents (-want +got):\n%s", diff)
	}
}

func TestComputeRejectsNilInputs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input translator.Input
		want  string
	}{
		{"nil map", (*watchable.Map[string, int])(nil), "translator.Compute bad: input 1 is a nil *watchable.Map[string,int]"},
		{"nil", nil, "translator.Compute bad: input 1 is nil"},
		{"zero view", watchable.View[string, int]{}, "translator.Compute bad: input 1 cannot be watched: watchable: use of a zero View"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), tc.want) {
					t.Errorf("Compute panicked with %v, want %q", p, tc.want)
				}
			}()
			translator.Compute("bad", []translator.Input{new(watchable.Map[string, int]), tc.input}, func(context.Context) (map[string]int, error) {
				return nil, nil
			})
		})
	}
}
