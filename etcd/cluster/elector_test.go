package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/runner"
)

func campaign(t *testing.T, e *cluster.Elector) runner.Term {
	t.Helper()
	term, err := e.Campaign(timeout(t, patience))
	if err != nil {
		t.Fatalf("campaign of %s: %v", e.ID(), err)
	}
	t.Cleanup(func() { term.Resign(context.Background()) })
	return term
}

func TestElectorLeadsWithTheKeysCreateRevision(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := cluster.NewElector(c, "/e/leader", cluster.WithIdentity("a"), cluster.WithTTL(ttl), cluster.WithLogger(quiet))

	if _, _, err := a.Leader(timeout(t, patience)); !errors.Is(err, cluster.ErrNoLeader) {
		t.Fatalf("Leader() before any campaign: %v, want ErrNoLeader", err)
	}
	term := campaign(t, a)
	resp, err := c.Get(timeout(t, patience), "/e/leader")
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("get the leader key: %v, %v", resp, err)
	}
	kv := resp.Kvs[0]
	if string(kv.Value) != "a" || kv.CreateRevision != term.Token() || kv.Lease == 0 {
		t.Errorf("leader key %q at create revision %d, lease %x; want a, the token %d, a lease", kv.Value, kv.CreateRevision, kv.Lease, term.Token())
	}
	if id, token, err := a.Leader(timeout(t, patience)); id != "a" || token != term.Token() || err != nil {
		t.Errorf("Leader() = %s, %d, %v; want a, %d", id, token, err, term.Token())
	}
}

func TestElectorTermEndsWhenTheKeyGoes(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := cluster.NewElector(c, "/e/leader", cluster.WithIdentity("a"), cluster.WithTTL(ttl), cluster.WithLogger(quiet))

	t.Run("deleted", func(t *testing.T) {
		term := campaign(t, a)
		if _, err := c.Delete(timeout(t, patience), "/e/leader"); err != nil {
			t.Fatal(err)
		}
		within(t, term.Done(), "the term to end when an operator deletes the key")
	})
	t.Run("lease revoked", func(t *testing.T) {
		term := campaign(t, a)
		resp, err := c.Get(timeout(t, patience), "/e/leader")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Revoke(timeout(t, patience), clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
			t.Fatal(err)
		}
		within(t, term.Done(), "the term to end when its lease is revoked")
	})
}

func TestElectorCampaignCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	c := etcdtest.NewClient(t, srv.Endpoints)
	a := cluster.NewElector(c, "/e/leader", cluster.WithIdentity("a"), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
	b := cluster.NewElector(c, "/e/leader", cluster.WithIdentity("b"), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
	campaign(t, a)

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := b.Campaign(ctx)
		errc <- err
	}()
	cancel()
	if err := within(t, errc, "the cancelled campaign to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Campaign = %v, want context.Canceled", err)
	}
	// Only a's lease is left.
	waitLeases(t, c, 1)
}

// waitLeases waits until etcd has n leases.
func waitLeases(t *testing.T, c *clientv3.Client, n int) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		resp, err := c.Leases(timeout(t, patience))
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Leases) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d leases, want %d", len(resp.Leases), n)
		}
		time.Sleep(20 * time.Millisecond) // etcd has no watch on leases
	}
}
