package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func join(t *testing.T, c *clientv3.Client, prefix, id string) runner.Member {
	t.Helper()
	e := cluster.NewShardEngine(c, prefix, cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
	m, err := e.Join(timeout(t, patience))
	if err != nil {
		t.Fatalf("join as %s: %v", id, err)
	}
	t.Cleanup(func() { m.Leave(context.Background()) })
	within(t, m.Members().Initialized(), "members initialized")
	within(t, m.Claims().Initialized(), "claims initialized")
	return m
}

// waitView waits until cond holds for v's contents.
func waitView[K comparable, V any](t *testing.T, v watchable.View[K, V], what string, cond func(map[K]V) bool) {
	t.Helper()
	etcdtest.WaitFor(t, v, func(s watchable.State[K, V]) string {
		if cond(s.Map()) {
			return ""
		}
		return fmt.Sprintf("waiting for %s; now %v", what, s.Map())
	})
}

func TestShardEngineMembersAndClaims(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	ca, cb := etcdtest.NewClient(t, srv.Endpoints), etcdtest.NewClient(t, srv.Endpoints)
	a := join(t, ca, "/s", "a")
	if _, ok := a.Members().Load("a"); !ok {
		t.Fatalf("a's members %v do not include a once initialized", a.Members().LoadAll())
	}
	b := join(t, cb, "/s", "b")
	waitView(t, a.Members(), "a to see b", func(m map[string]struct{}) bool { return len(m) == 2 })

	ta, err := a.Claim(timeout(t, patience), "base-1")
	if err != nil {
		t.Fatalf("a claims base-1: %v", err)
	}
	if _, err := b.Claim(timeout(t, patience), "base-1"); !errors.Is(err, runner.ErrClaimed) {
		t.Fatalf("b claims base-1 held by a: %v, want ErrClaimed", err)
	}
	want := map[string]runner.Holder{"base-1": {Member: "a", Token: ta.Token()}}
	waitView(t, b.Claims(), "b to see a's claim", func(m map[string]runner.Holder) bool { return cmp.Equal(m, want) })
	resp, err := ca.Get(timeout(t, patience), "/s/claims/base-1")
	if err != nil || len(resp.Kvs) != 1 || resp.Kvs[0].CreateRevision != ta.Token() {
		t.Fatalf("claim key: %v, %v; want created at the token %d", resp, err, ta.Token())
	}

	// A claim of ours claimed again is the same claim (an answer was lost).
	again, err := a.Claim(timeout(t, patience), "base-1")
	if err != nil || again.Token() != ta.Token() {
		t.Fatalf("a claims base-1 again: %v, %v; want its claim, token %d", again, err, ta.Token())
	}

	if err := ta.Resign(timeout(t, patience)); err != nil {
		t.Fatal(err)
	}
	within(t, ta.Done(), "the claim to end on Resign")
	waitView(t, b.Claims(), "b to see base-1 vacant", func(m map[string]runner.Holder) bool { return len(m) == 0 })
	tb, err := b.Claim(timeout(t, patience), "base-1")
	if err != nil || tb.Token() <= ta.Token() {
		t.Fatalf("b claims the vacant base-1: %v, %v; want a token above %d", tb, err, ta.Token())
	}
}

func TestShardEngineIdentityInUse(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	join(t, c, "/s", "a")
	e := cluster.NewShardEngine(c, "/s", cluster.WithIdentity("a"), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
	if _, err := e.Join(timeout(t, patience)); !errors.Is(err, cluster.ErrIdentityInUse) {
		t.Fatalf("second join as a: %v, want ErrIdentityInUse", err)
	}
	waitLeases(t, c, 1) // the second join's session was revoked
}

// TestShardEngineLeaveIsOneChange checks that a member leaving takes its
// member key and every claim in one revision, and that the others see it
// leave Members no later than its claims leave Claims.
func TestShardEngineLeaveIsOneChange(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	ca, cb := etcdtest.NewClient(t, srv.Endpoints), etcdtest.NewClient(t, srv.Endpoints)
	a, b := join(t, ca, "/s", "a"), join(t, cb, "/s", "b")
	var terms []runner.Term
	for _, item := range []string{"x", "y", "z"} {
		term, err := a.Claim(timeout(t, patience), item)
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, term)
	}
	waitView(t, b.Claims(), "b to see a's claims", func(m map[string]runner.Holder) bool { return len(m) == 3 })

	// Record, on every change of b's claims, whether b still counts a.
	ctx := timeout(t, patience)
	sawClaimsBeforeMember := make(chan bool, 1)
	go func() {
		for snap := range b.Claims().Subscribe(ctx) {
			if snap.State.Len() == 0 {
				_, stillMember := b.Members().Load("a")
				sawClaimsBeforeMember <- stillMember
				return
			}
		}
	}()
	watch := cb.Watch(ctx, "/s/", clientv3.WithPrefix(), clientv3.WithFilterPut())

	if err := a.Leave(timeout(t, patience)); err != nil {
		t.Fatal(err)
	}
	for _, term := range terms {
		within(t, term.Done(), "the claims to end on Leave")
	}
	within(t, a.Done(), "a's Done on Leave")
	if within(t, sawClaimsBeforeMember, "b to see the claims go") {
		t.Error("b saw a's claims go while a was still among its members")
	}
	resp := within(t, watch, "the deletes")
	revs := map[int64]int{}
	for _, ev := range resp.Events {
		revs[ev.Kv.ModRevision]++
	}
	if len(resp.Events) != 4 || len(revs) != 1 {
		t.Errorf("deletes on Leave: %d events over revisions %v, want 4 in one revision", len(resp.Events), revs)
	}
	if _, err := a.Claim(timeout(t, patience), "w"); err == nil {
		t.Error("a claim after Leave succeeded")
	}
}

func TestShardEngineClaimEndsWhenItsKeyGoes(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := join(t, c, "/s", "a")
	term, err := a.Claim(timeout(t, patience), "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Delete(timeout(t, patience), "/s/claims/x"); err != nil {
		t.Fatal(err)
	}
	within(t, term.Done(), "the claim to end when an operator deletes its key")
	select {
	case <-a.Done():
		t.Fatal("the membership ended with one claim")
	default:
	}
}

func TestShardEngineMembershipEndsWithItsLease(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := join(t, c, "/s", "a")
	term, err := a.Claim(timeout(t, patience), "x")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(timeout(t, patience), "/s/members/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Revoke(timeout(t, patience), clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	within(t, term.Done(), "the claim to end")
	within(t, a.Done(), "the membership to end when its lease is revoked")
}
