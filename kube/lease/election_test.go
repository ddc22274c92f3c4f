package lease_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// candidate is an in-process candidate: LeaderOnly over a Lease elector,
// running a runner that only waits.
type candidate struct {
	elector *lease.Elector
	leader  *runner.Leader
	stop    func()
}

func startCandidate(t *testing.T, cs kubernetes.Interface, name, id string) *candidate {
	t.Helper()
	e, err := lease.NewElector(cs.CoordinationV1(), "default", name,
		lease.WithIdentity(id), lease.WithTiming(timing), lease.WithLogger(testrun.Quiet))
	if err != nil {
		t.Fatal(err)
	}
	l := runner.LeaderOnly(e, runner.Func(id, func(ctx context.Context) error {
		<-ctx.Done()
		return nil
	}), runner.WithLogger(testrun.Quiet))
	return &candidate{elector: e, leader: l, stop: testrun.Run(t, l)}
}

// leading waits until c leads and returns its token.
func (c *candidate) leading(t *testing.T) int64 {
	t.Helper()
	s := testrun.State(t, c.leader.Leading(), func(s watchable.State[string, runner.Ownership]) string {
		if s.Len() == 0 {
			return c.elector.Identity() + " does not lead"
		}
		return ""
	})
	o, _ := s.Get(c.leader.Name())
	return o.Token
}

func isLeading(c *candidate) bool { return c.leader.Leading().Len() > 0 }

func TestElectionResignHandsOver(t *testing.T) {
	t.Parallel()
	cs := kubetest.Start(t).Clientset(t)
	a := startCandidate(t, cs, "resign", "a")
	first := a.leading(t)
	b := startCandidate(t, cs, "resign", "b")
	l, err := cs.CoordinationV1().Leases("default").Get(testrun.Context(t, time.Minute), "resign", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := *l.Spec.HolderIdentity; h != "a" || int64(*l.Spec.LeaseTransitions) != first {
		t.Fatalf("the Lease says holder %s, transitions %d; want a, %d", h, *l.Spec.LeaseTransitions, first)
	}
	if isLeading(b) {
		t.Fatal("b leads while a does")
	}

	start := time.Now()
	a.stop() // resigns
	second := b.leading(t)
	took := time.Since(start)
	t.Logf("b leads %v after a resigned (lease duration %v), token %d after %d", took.Round(time.Millisecond), timing.LeaseDuration, second, first)
	if second <= first {
		t.Errorf("token %d after %d: want it to grow", second, first)
	}
	if took >= timing.LeaseDuration {
		t.Errorf("b took over after %v: the resignation did not free the Lease before it expired", took)
	}
}

// A leader whose renewals cannot reach the API server stops leading
// within RenewDeadline, before the Lease could expire for the others; once
// the API server is back, one candidate leads again.
func TestElectionTermEndsBeforeExpiry(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cs := c.Clientset(t)
	a := startCandidate(t, cs, "expiry", "a")
	a.leading(t)
	b := startCandidate(t, cs, "expiry", "b")

	c.APIServer.Kill(t)
	killed := time.Now()
	testrun.State(t, a.leader.Leading(), func(s watchable.State[string, runner.Ownership]) string {
		if s.Len() > 0 {
			return "a still leads with the API server down"
		}
		return ""
	})
	took := time.Since(killed)
	t.Logf("a stopped leading %v after the API server died (renew deadline %v)", took.Round(time.Millisecond), timing.RenewDeadline)
	if took >= timing.LeaseDuration {
		t.Errorf("a led %v after its last renewal could succeed: the Lease may have expired for b by then", took)
	}
	if isLeading(b) {
		t.Fatal("b leads while the API server is down")
	}

	c.APIServer.Restart(t)
	testrun.Until(t, func() string {
		l, err := cs.CoordinationV1().Leases("default").Get(testrun.Context(t, 10*time.Second), "expiry", metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		for _, c := range []*candidate{a, b} {
			if c.elector.Identity() == holder && isLeading(c) {
				return ""
			}
		}
		return fmt.Sprintf("the Lease says %q; a leads %v, b leads %v", holder, isLeading(a), isLeading(b))
	})
	if isLeading(a) && isLeading(b) {
		t.Error("a and b lead at once")
	}
}

// holderOf reads who holds the Lease name, and its token.
func leaseHolder(t *testing.T, cs kubernetes.Interface, name string) (string, int64) {
	t.Helper()
	l, err := cs.CoordinationV1().Leases("default").Get(testrun.Context(t, 10*time.Second), name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || l.Spec.LeaseTransitions == nil {
		return "", 0
	}
	return *l.Spec.HolderIdentity, int64(*l.Spec.LeaseTransitions)
}

// TestElectionLeaderKilled runs three candidates as processes and kills
// the leader with SIGKILL: another leads (its runner runs) within the lease
// duration plus a margin, with a greater token.
func TestElectionLeaderKilled(t *testing.T) {
	t.Parallel()
	c := kubetest.Start(t)
	cs := c.Clientset(t)
	kubeconfig := c.Kubeconfig(t)
	children := map[string]*child{}
	for _, id := range []string{"p0", "p1", "p2"} {
		children[id] = startChild(t, "elect", id, kubeconfig, "campaigning", "CHILD_LEASE=killed")
	}
	var holder string
	var token int64
	testrun.Until(t, func() string {
		if holder, token = leaseHolder(t, cs, "killed"); children[holder] == nil {
			return fmt.Sprintf("the Lease is held by %q", holder)
		}
		return ""
	})
	children[holder].waitEvent(t, "leading", fmt.Sprint(token))

	killed := time.Now()
	children[holder].p.Kill(t)
	var next string
	var nextToken int64
	testrun.Until(t, func() string {
		if next, nextToken = leaseHolder(t, cs, "killed"); next == holder || children[next] == nil {
			return fmt.Sprintf("the Lease is held by %q", next)
		}
		return ""
	})
	leads := children[next].waitEvent(t, "leading", fmt.Sprint(nextToken))
	took := leads.Sub(killed)
	margin := 2 * time.Second
	t.Logf("%s killed; %s leads %v later (lease duration %v, margin %v), token %d after %d",
		holder, next, took.Round(time.Millisecond), timing.LeaseDuration, margin, nextToken, token)
	if took > timing.LeaseDuration+margin {
		t.Errorf("%s led %v after the leader was killed, want within %v", next, took, timing.LeaseDuration+margin)
	}
	if nextToken <= token {
		t.Errorf("token %d after %d: want it to grow", nextToken, token)
	}
	for id, ch := range children {
		if id != holder && id != next && len(ch.events(t, "leading")) > 0 {
			t.Errorf("%s led too", id)
		}
	}
}
