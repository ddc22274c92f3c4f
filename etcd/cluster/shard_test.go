package cluster_test

import (
	"context"
	"errors"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/runner"
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

// The contracts are checked by clustertest (conformance_test.go); these
// tests check how the etcd engine keeps them.

func TestShardEngineClaimIsAKeyUnderTheMembersLease(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := join(t, c, "/s", "a")
	term, err := a.Claim(timeout(t, patience), "base-1")
	if err != nil {
		t.Fatal(err)
	}
	member, err := c.Get(timeout(t, patience), "/s/members/a")
	if err != nil || len(member.Kvs) != 1 {
		t.Fatalf("member key: %v, %v", member, err)
	}
	claim, err := c.Get(timeout(t, patience), "/s/claims/base-1")
	if err != nil || len(claim.Kvs) != 1 {
		t.Fatalf("claim key: %v, %v", claim, err)
	}
	kv := claim.Kvs[0]
	if string(kv.Value) != "a" || kv.CreateRevision != term.Token() || kv.Lease != member.Kvs[0].Lease {
		t.Errorf("claim key %q created at %d under lease %x; want a, the token %d, the member's lease %x",
			kv.Value, kv.CreateRevision, kv.Lease, term.Token(), member.Kvs[0].Lease)
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
// member key and every claim in one revision.
func TestShardEngineLeaveIsOneChange(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := join(t, c, "/s", "a")
	for _, item := range []string{"x", "y", "z"} {
		if _, err := a.Claim(timeout(t, patience), item); err != nil {
			t.Fatal(err)
		}
	}
	watch := c.Watch(timeout(t, patience), "/s/", clientv3.WithPrefix(), clientv3.WithFilterPut())
	if err := a.Leave(timeout(t, patience)); err != nil {
		t.Fatal(err)
	}
	resp := within(t, watch, "the deletes")
	revs := map[int64]int{}
	for _, ev := range resp.Events {
		revs[ev.Kv.ModRevision]++
	}
	if len(resp.Events) != 4 || len(revs) != 1 {
		t.Errorf("deletes on Leave: %d events over revisions %v, want 4 in one revision", len(resp.Events), revs)
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
