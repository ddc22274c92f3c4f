// Package clustertest checks that an engine keeps the cluster contracts of
// package runner (Elector, Term, ShardEngine, Member), whatever it runs on:
// an engine's tests call Elector and ShardEngine with constructors for
// fresh candidates and members, and every engine is held to the same
// checks.
//
// The checks cover what an engine promises through the API alone: who
// wins, tokens, ErrClaimed, adopting one's own claim, Resign and Leave,
// and the order of the Members and Claims views. How terms end when a
// process is cut off (the timing) needs a real fault and stays in the
// engine's own tests.
package clustertest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Patience bounds every wait of the checks: generous, for -race on a
// loaded machine.
const Patience = 30 * time.Second

// Elector checks an engine's elections. newElection is called once per
// check and returns a constructor of candidates, by identity, in one
// fresh election.
func Elector(t *testing.T, newElection func(t *testing.T) func(id string) runner.Elector) {
	t.Run("one leader, the others wait until it resigns", func(t *testing.T) {
		candidate := newElection(t)
		a, b := candidate("a"), candidate("b")
		ta := campaign(t, a)

		won := make(chan runner.Term, 1)
		failed := make(chan error, 1)
		ctx := timeout(t)
		go func() {
			tb, err := b.Campaign(ctx)
			if err != nil {
				failed <- err
				return
			}
			won <- tb
		}()
		select {
		case <-won:
			t.Fatal("b leads while a does")
		case err := <-failed:
			t.Fatalf("b's campaign: %v", err)
		case <-time.After(100 * time.Millisecond):
		}

		if err := ta.Resign(ctx); err != nil {
			t.Fatalf("resign: %v", err)
		}
		closed(t, ta.Done(), "a's Done after Resign returned")
		var tb runner.Term
		select {
		case tb = <-won:
		case err := <-failed:
			t.Fatalf("b's campaign: %v", err)
		case <-time.After(Patience):
			t.Fatal("b does not lead after a resigned")
		}
		t.Cleanup(func() { tb.Resign(context.Background()) })
		if tb.Token() <= ta.Token() {
			t.Errorf("b's token %d after a's %d: tokens must grow", tb.Token(), ta.Token())
		}
		if err := ta.Resign(ctx); err != nil {
			t.Errorf("resigning an ended term: %v, want nil", err)
		}
	})

	t.Run("a cancelled campaign returns the context's error", func(t *testing.T) {
		candidate := newElection(t)
		campaign(t, candidate("a"))
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := candidate("b").Campaign(ctx)
			errc <- err
		}()
		cancel()
		select {
		case err := <-errc:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Campaign = %v, want context.Canceled", err)
			}
		case <-time.After(Patience):
			t.Fatal("a cancelled campaign does not return")
		}
	})
}

// ShardEngine checks an engine's sharding. newShards is called once per
// check and returns a constructor of engines, by identity, that share one
// fresh set of items. A member's ID may be more than the identity it was
// made with (an engine may add a suffix), but must be unique.
func ShardEngine(t *testing.T, newShards func(t *testing.T) func(id string) runner.ShardEngine) {
	t.Run("members see each other", func(t *testing.T) {
		engine := newShards(t)
		a := join(t, engine("a"))
		if _, ok := a.Members().Load(a.ID()); !ok {
			t.Errorf("a's members %v do not include a (%s) once initialized", a.Members().LoadAll(), a.ID())
		}
		b := join(t, engine("b"))
		if a.ID() == b.ID() {
			t.Fatalf("two members with the ID %q", a.ID())
		}
		wait(t, a.Members(), "a to count b", func(m map[string]struct{}) bool {
			_, ok := m[b.ID()]
			return len(m) == 2 && ok
		})
	})

	t.Run("one claim wins", func(t *testing.T) {
		engine := newShards(t)
		a, b := join(t, engine("a")), join(t, engine("b"))
		ta, err := a.Claim(timeout(t), "item-1")
		if err != nil {
			t.Fatalf("a claims item-1: %v", err)
		}
		if _, err := b.Claim(timeout(t), "item-1"); !errors.Is(err, runner.ErrClaimed) {
			t.Fatalf("b claims item-1, held by a: %v, want ErrClaimed", err)
		}
		want := runner.Holder{Member: a.ID(), Token: ta.Token()}
		for _, m := range []runner.Member{a, b} {
			wait(t, m.Claims(), m.ID()+" to see a's claim", func(c map[string]runner.Holder) bool {
				return len(c) == 1 && c["item-1"] == want
			})
		}
		again, err := a.Claim(timeout(t), "item-1")
		if err != nil || again.Token() != ta.Token() {
			t.Fatalf("a claims item-1 again: %v, %v; want its own claim, token %d", again, err, ta.Token())
		}
	})

	t.Run("a resigned claim is vacant, and the next one has a greater token", func(t *testing.T) {
		engine := newShards(t)
		a, b := join(t, engine("a")), join(t, engine("b"))
		ta, err := a.Claim(timeout(t), "item-1")
		if err != nil {
			t.Fatal(err)
		}
		// b sees the claim first, so that seeing the item vacant below
		// means seeing the resignation.
		want := runner.Holder{Member: a.ID(), Token: ta.Token()}
		wait(t, b.Claims(), "b to see a's claim", func(c map[string]runner.Holder) bool { return c["item-1"] == want })
		if err := ta.Resign(timeout(t)); err != nil {
			t.Fatalf("resign: %v", err)
		}
		closed(t, ta.Done(), "the claim's Done after Resign returned")
		wait(t, b.Claims(), "b to see item-1 vacant", func(c map[string]runner.Holder) bool { return len(c) == 0 })
		tb, err := b.Claim(timeout(t), "item-1")
		if err != nil {
			t.Fatalf("b claims the vacant item-1: %v", err)
		}
		if tb.Token() <= ta.Token() {
			t.Errorf("b's token %d after a's %d: tokens must grow", tb.Token(), ta.Token())
		}
		select {
		case <-tb.Done():
			t.Error("b's claim ended")
		default:
		}
	})

	t.Run("leaving ends the membership and its claims, members first", func(t *testing.T) {
		engine := newShards(t)
		a, b := join(t, engine("a")), join(t, engine("b"))
		var terms []runner.Term
		for i := range 3 {
			term, err := a.Claim(timeout(t), fmt.Sprintf("item-%d", i))
			if err != nil {
				t.Fatal(err)
			}
			terms = append(terms, term)
		}
		wait(t, b.Claims(), "b to see a's claims", func(c map[string]runner.Holder) bool { return len(c) == 3 })

		ctx := timeout(t)
		stillMember := make(chan bool, 1)
		go func() {
			for snap := range b.Claims().Subscribe(ctx) {
				if snap.State.Len() == 0 {
					_, ok := b.Members().Load(a.ID())
					stillMember <- ok
					return
				}
			}
		}()
		if err := a.Leave(ctx); err != nil {
			t.Fatalf("leave: %v", err)
		}
		closed(t, a.Done(), "a's Done after Leave returned")
		for _, term := range terms {
			closed(t, term.Done(), "a's claims' Done after Leave returned")
		}
		select {
		case ok := <-stillMember:
			if ok {
				t.Error("b saw a's claims vacant while it still counted a among the members")
			}
		case <-time.After(Patience):
			t.Fatal("b does not see a's claims go")
		}
		if _, err := a.Claim(timeout(t), "item-9"); err == nil {
			t.Error("a claimed after it left")
		}
	})
}

func campaign(t *testing.T, e runner.Elector) runner.Term {
	t.Helper()
	term, err := e.Campaign(timeout(t))
	if err != nil {
		t.Fatalf("campaign: %v", err)
	}
	t.Cleanup(func() { term.Resign(context.Background()) })
	return term
}

func join(t *testing.T, e runner.ShardEngine) runner.Member {
	t.Helper()
	m, err := e.Join(timeout(t))
	if err != nil {
		t.Fatalf("join: %v", err)
	}
	t.Cleanup(func() { m.Leave(context.Background()) })
	for _, ch := range []<-chan struct{}{m.Members().Initialized(), m.Claims().Initialized()} {
		closed(t, ch, "the member's views to be initialized")
	}
	return m
}

func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	t.Cleanup(cancel)
	return ctx
}

func closed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(Patience):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// wait waits, on a subscription, until cond holds for v's contents.
func wait[K comparable, V any](t *testing.T, v watchable.View[K, V], what string, cond func(map[K]V) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Patience)
	defer cancel()
	var last map[K]V
	for snap := range v.Subscribe(ctx) {
		if last = snap.State.Map(); cond(last) {
			return
		}
	}
	t.Fatalf("timed out waiting for %s; last seen %v", what, last)
}
