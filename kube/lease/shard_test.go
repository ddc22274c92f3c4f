package lease_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const items = 30

// cap is the bound runner.Shard keeps every replica within: ⌈T/M⌉ + 1.
func capOf(t, m int) int { return (t+m-1)/m + 1 }

// leaseHolders reads the group's item Leases from the API server: who
// holds each item, by the member's identity (its ID without the suffix).
func leaseHolders(t *testing.T, cs kubernetes.Interface, group string) map[string]string {
	t.Helper()
	list, err := cs.CoordinationV1().Leases("default").List(testrun.Context(t, 10*time.Second),
		metav1.ListOptions{LabelSelector: lease.LabelGroup + "=" + group + "," + lease.LabelRole + "=item"})
	if err != nil {
		return nil
	}
	out := map[string]string{}
	for _, l := range list.Items {
		if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" {
			id := *l.Spec.HolderIdentity
			out[l.Annotations[lease.AnnotationItem]] = id[:strings.LastIndex(id, "-")]
		}
	}
	return out
}

func counts(holders map[string]string) map[string]int {
	out := map[string]int{}
	for _, h := range holders {
		out[h]++
	}
	return out
}

// TestShardInProcess shares 30 items among three in-process replicas:
// every item is held by exactly one, within the bound; when one replica
// stops (and leaves), the two others take its items at once, within the
// bound for two.
func TestShardInProcess(t *testing.T) {
	t.Parallel()
	cs := kubetest.Start(t).Clientset(t)
	m := &watchable.Map[string, int]{}
	for i := range items {
		m.Store(fmt.Sprintf("item-%02d", i), i)
	}
	type replica struct {
		s    *runner.Sharder[string, int]
		stop func()
	}
	replicas := map[string]*replica{}
	for _, id := range []string{"r0", "r1", "r2"} {
		engine, err := lease.NewShardEngine(cs.CoordinationV1(), "default", "inproc",
			lease.WithIdentity(id), lease.WithTiming(timing), lease.WithLogger(testrun.Quiet))
		if err != nil {
			t.Fatal(err)
		}
		s := runner.Shard("items "+id, m.View(), func(k string) string { return k }, engine,
			func(ctx context.Context, _ string) error { <-ctx.Done(); return nil },
			runner.WithBalance(runner.Balance{Step: 100 * time.Millisecond}), runner.WithLogger(testrun.Quiet))
		replicas[id] = &replica{s: s, stop: testrun.Run(t, s)}
	}
	// owned reads what each replica says it holds.
	owned := func() (map[string]string, string) {
		holders := map[string]string{}
		for id, r := range replicas {
			for k := range r.s.Owned().State().Keys() {
				if other, ok := holders[k]; ok {
					return nil, fmt.Sprintf("%s held by %s and %s", k, other, id)
				}
				holders[k] = id
			}
		}
		return holders, ""
	}
	settled := func(live []string) func() string {
		return func() string {
			holders, why := owned()
			if why != "" {
				return why
			}
			if len(holders) != items {
				return fmt.Sprintf("%d items held, want %d: %v", len(holders), items, counts(holders))
			}
			for id, n := range counts(holders) {
				if !slices.Contains(live, id) || n > capOf(items, len(live)) {
					return fmt.Sprintf("%s holds %d: %v", id, n, counts(holders))
				}
			}
			// The API server agrees.
			if api := leaseHolders(t, cs, "inproc"); !maps.Equal(api, holders) {
				return fmt.Sprintf("the Leases say %v, the replicas %v", counts(api), counts(holders))
			}
			return ""
		}
	}
	testrun.Until(t, settled([]string{"r0", "r1", "r2"}))
	holders, _ := owned()
	t.Logf("three replicas: %v", counts(holders))

	start := time.Now()
	replicas["r1"].stop()
	delete(replicas, "r1")
	testrun.Until(t, settled([]string{"r0", "r2"}))
	holders, _ = owned()
	t.Logf("after r1 left: %v, %v later", counts(holders), time.Since(start).Round(time.Millisecond))
}

// TestShardReplicaKilled runs three replicas as processes sharing 30 items,
// and kills one with SIGKILL. Before and after, every item is held by
// exactly one replica within the bound (⌈30/3⌉+1, then ⌈30/2⌉+1), as the
// API server's Leases say; and over the whole run, as the replicas'
// handlers say, no item was ever handled by two replicas at once.
func TestShardReplicaKilled(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cs := c.Clientset(t)
	kubeconfig := c.Kubeconfig(t)
	children := map[string]*child{}
	for _, id := range []string{"r0", "r1", "r2"} {
		children[id] = startChild(t, "shard", id, kubeconfig, "joining", "CHILD_GROUP=killed")
	}
	settled := func(live []string) func() string {
		return func() string {
			api := leaseHolders(t, cs, "killed")
			running := map[string]string{}
			for _, id := range live {
				for item := range handling(t, children[id]) {
					if other, ok := running[item]; ok {
						return fmt.Sprintf("%s handled by %s and %s", item, other, id)
					}
					running[item] = id
				}
			}
			if len(api) != items || !maps.Equal(api, running) {
				return fmt.Sprintf("the Leases say %v, the handlers %v", counts(api), counts(running))
			}
			for id, n := range counts(api) {
				if !slices.Contains(live, id) || n > capOf(items, len(live)) {
					return fmt.Sprintf("%s holds %d: %v", id, n, counts(api))
				}
			}
			return ""
		}
	}
	testrun.Until(t, settled([]string{"r0", "r1", "r2"}))
	t.Logf("three replicas: %v", counts(leaseHolders(t, cs, "killed")))

	killed := time.Now()
	children["r1"].p.Kill(t)
	testrun.Until(t, settled([]string{"r0", "r2"}))
	t.Logf("r1 killed; %v later: %v", time.Since(killed).Round(time.Millisecond), counts(leaseHolders(t, cs, "killed")))

	checkExclusive(t, children, map[string]time.Time{"r1": killed})
}

// handling returns the items the child is handling now, by its events.
func handling(t *testing.T, c *child) map[string]bool {
	out := map[string]bool{}
	for _, e := range c.events(t, "") {
		switch e.what {
		case "start":
			out[e.args[0]] = true
		case "stop":
			delete(out, e.args[0])
		}
	}
	return out
}

// checkExclusive checks, from the children's events, that no item was ever
// handled by two children at once. A killed child's handlers end when it
// was killed.
func checkExclusive(t *testing.T, children map[string]*child, killed map[string]time.Time) {
	t.Helper()
	type span struct {
		id       string
		from, to time.Time
	}
	spans := map[string][]span{}
	end := time.Now().Add(time.Hour)
	for id, c := range children {
		open := map[string]time.Time{}
		for _, e := range c.events(t, "") {
			switch e.what {
			case "start":
				open[e.args[0]] = e.at
			case "stop":
				spans[e.args[0]] = append(spans[e.args[0]], span{id, open[e.args[0]], e.at})
				delete(open, e.args[0])
			}
		}
		to := end
		if at, ok := killed[id]; ok {
			to = at
		}
		for item, from := range open {
			spans[item] = append(spans[item], span{id, from, to})
		}
	}
	handovers := 0
	for item, ss := range spans {
		sort.Slice(ss, func(i, j int) bool { return ss[i].from.Before(ss[j].from) })
		for i := 1; i < len(ss); i++ {
			if ss[i].id != ss[i-1].id {
				handovers++
			}
			if ss[i].from.Before(ss[i-1].to) {
				t.Errorf("%s handled by %s from %s and by %s until %s", item,
					ss[i].id, ss[i].from.Format(time.StampMicro), ss[i-1].id, ss[i-1].to.Format(time.StampMicro))
			}
		}
	}
	t.Logf("%d items, %d handovers between replicas, none overlapping", len(spans), handovers)
}

// joinGroup joins the shard group as member id, until the test ends, and
// waits for the member's view of the claims.
func joinGroup(t *testing.T, cs kubernetes.Interface, group, id string) runner.Member {
	t.Helper()
	e, err := lease.NewShardEngine(cs.CoordinationV1(), "default", group,
		lease.WithIdentity(id), lease.WithTiming(timing), lease.WithLogger(testrun.Quiet))
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Join(testrun.Context(t, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Leave(context.Background()) })
	testrun.Closed(t, m.Claims().Initialized(), id+" claims initialized")
	return m
}

// TestMemberContract checks the engine's side of runner.Member: one claim
// wins, the holder gets its claim back, a resigned claim is taken over with
// a greater token, and a member that leaves frees its items at once.
func TestMemberContract(t *testing.T) {
	t.Parallel()
	cs := kubetest.Start(t).Clientset(t)
	a, b := joinGroup(t, cs, "contract", "a"), joinGroup(t, cs, "contract", "b")
	ctx := testrun.Context(t, time.Minute)
	waitClaims := func(m runner.Member, cond func(watchable.State[string, runner.Holder]) string) {
		t.Helper()
		testrun.State(t, m.Claims(), cond)
	}
	testrun.State(t, a.Members(), func(s watchable.State[string, struct{}]) string {
		if _, ok := s.Get(b.ID()); !ok || s.Len() != 2 {
			return fmt.Sprintf("a sees members %v, want a and b", slices.Collect(s.Keys()))
		}
		return ""
	})

	first, err := a.Claim(ctx, "Node/One")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Claim(ctx, "Node/One"); !errors.Is(err, runner.ErrClaimed) {
		t.Fatalf("b claims a's item: %v, want ErrClaimed", err)
	}
	if again, err := a.Claim(ctx, "Node/One"); err != nil || again != first {
		t.Fatalf("a claims its own item again: %v, %v; want the same claim", again, err)
	}
	waitClaims(b, func(s watchable.State[string, runner.Holder]) string {
		if h, _ := s.Get("Node/One"); h != (runner.Holder{Member: a.ID(), Token: first.Token()}) {
			return fmt.Sprintf("b sees Node/One held by %+v", h)
		}
		return ""
	})

	if err := first.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	testrun.Closed(t, first.Done(), "resigned claim done")
	waitClaims(b, func(s watchable.State[string, runner.Holder]) string {
		if h, ok := s.Get("Node/One"); ok {
			return fmt.Sprintf("b sees Node/One held by %+v after a resigned", h)
		}
		return ""
	})
	second, err := b.Claim(ctx, "Node/One")
	if err != nil {
		t.Fatal(err)
	}
	if second.Token() <= first.Token() {
		t.Errorf("token %d after %d", second.Token(), first.Token())
	}

	start := time.Now()
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
	testrun.Closed(t, second.Done(), "claim of a member that left")
	waitClaims(a, func(s watchable.State[string, runner.Holder]) string {
		if h, ok := s.Get("Node/One"); ok {
			return fmt.Sprintf("a sees Node/One held by %+v after b left", h)
		}
		return ""
	})
	if took := time.Since(start); took >= timing.LeaseDuration {
		t.Errorf("b's item was vacant for a only %v after b left: not at once", took)
	}
	third, err := a.Claim(ctx, "Node/One")
	if err != nil {
		t.Fatal(err)
	}
	if third.Token() <= second.Token() {
		t.Errorf("token %d after %d", third.Token(), second.Token())
	}
}

// TestClaimDoesNotTrustAStaleWatch releases a claimed item's Lease through
// the API server, as a resigning member does, and claims it from another
// member at once, before that member's watch can have shown the release:
// the claim must succeed, because the API server says the item is vacant.
// A claim refused on the watch's word alone made the engine's conformance
// test fail now and then in CI.
func TestClaimDoesNotTrustAStaleWatch(t *testing.T) {
	t.Parallel()
	cs := kubetest.Start(t).Clientset(t)
	ctx := testrun.Context(t, time.Minute)
	a, b := joinGroup(t, cs, "stale", "a"), joinGroup(t, cs, "stale", "b")
	leases := cs.CoordinationV1().Leases("default")
	for round := range 5 {
		item := fmt.Sprintf("item-%d", round)
		held, err := a.Claim(ctx, item)
		if err != nil {
			t.Fatal(err)
		}
		want := runner.Holder{Member: a.ID(), Token: held.Token()}
		testrun.State(t, b.Claims(), func(s watchable.State[string, runner.Holder]) string {
			if h, _ := s.Get(item); h != want {
				return fmt.Sprintf("b sees %s held by %+v, want %+v", item, h, want)
			}
			return ""
		})
		// Release it behind b's back: b's watch still shows a's claim.
		released := false
		for !released {
			list, err := leases.List(ctx, metav1.ListOptions{LabelSelector: lease.LabelGroup + "=stale," + lease.LabelRole + "=item"})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range list.Items {
				if l.Annotations[lease.AnnotationItem] != item {
					continue
				}
				l.Spec.HolderIdentity = nil
				if _, err := leases.Update(ctx, &l, metav1.UpdateOptions{}); err == nil {
					released = true
				} else if !apierrors.IsConflict(err) { // a renewed it meanwhile: read again
					t.Fatal(err)
				}
			}
		}
		taken, err := b.Claim(ctx, item)
		if err != nil {
			t.Fatalf("round %d: b claims %s right after its release: %v", round, item, err)
		}
		if taken.Token() <= held.Token() {
			t.Errorf("round %d: b's token %d after a's %d", round, taken.Token(), held.Token())
		}
	}
}
