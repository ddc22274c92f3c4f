package translator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// TestFailuresReachStatus runs translators in a runner group and checks that
// their failures appear in, and disappear from, the group's status.
func TestFailuresReachStatus(t *testing.T) {
	in := new(watchable.Map[string, string])
	in.Store("a", "x")
	derived, computed := new(watchable.Map[string, string]), new(watchable.Map[string, int])
	derive := translator.Derive("split", in, derived, split)
	compute := translator.Compute("count", computed, func(context.Context) (map[string]int, error) {
		s := in.State()
		if v, _ := s.Get("a"); v == "fail" {
			return nil, errors.New("a is fail")
		}
		return map[string]int{"entries": s.Len()}, nil
	}, in)

	g := runner.NewGroup(runner.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, derive, compute) }()
	defer func() {
		cancel()
		if err := receive(t, done); err != nil {
			t.Errorf("group returned %v", err)
		}
	}()
	receive(t, g.Ready())

	problem := func(name, text string) {
		t.Helper()
		deadline := time.Now().Add(waitTimeout)
		for {
			st, _ := g.Status().Load(name)
			if (text == "") == (st.Problem == "") && strings.Contains(st.Problem, text) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("status of %s = %+v, want a problem with %q", name, st, text)
			}
			time.Sleep(time.Millisecond)
		}
	}

	in.Store("a", "fail")
	problem("split", "translator split: key a: cannot split fail")
	problem("count", "translator count: compute: a is fail")
	in.Store("b", "fail")
	problem("split", "key b: cannot split fail")
	in.Delete("b")
	in.Store("a", "y")
	problem("split", "")
	problem("count", "")

	// Many failing keys: the status lists a few and counts the rest.
	for i := range 20 {
		in.Store(fmt.Sprint("k", i), "fail")
	}
	problem("split", "and 10 more errors")
}
