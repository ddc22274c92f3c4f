package admin_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// gated is a runner that is ready once its gate is closed, and reports a
// problem until then.
type gated struct {
	name string
	gate chan struct{}
}

func (g *gated) Name() string                  { return g.name }
func (g *gated) Ready() <-chan struct{}        { return g.gate }
func (g *gated) Run(ctx context.Context) error { <-ctx.Done(); return nil }

type readiness struct {
	Ready               bool                     `json:"ready"`
	NotReady            map[string]runner.Status `json:"notReady"`
	PendingInitializers []string                 `json:"pendingInitializers"`
}

// phases returns the phase of each runner in statuses.
func phases(statuses map[string]runner.Status) map[string]runner.Phase {
	p := make(map[string]runner.Phase, len(statuses))
	for name, s := range statuses {
		p[name] = s.Phase
	}
	return p
}

func TestReadinessAndRunners(t *testing.T) {
	g := runner.NewGroup(runner.WithLogger(discard))
	mux := http.NewServeMux()
	mux.Handle("GET /readyz", admin.Readiness(g.Status()))
	mux.Handle("GET /debug/runners", admin.Runners(g.Status()))
	url := serve(t, mux)

	// Before the group runs, the status map waits for it.
	got := getJSON[readiness](t, url+"/readyz", http.StatusServiceUnavailable)
	if diff := cmp.Diff(readiness{PendingInitializers: []string{"runner group"}}, got); diff != "" {
		t.Errorf("/readyz before the group runs (-want +got):\n%s", diff)
	}

	slow := &gated{name: "slow", gate: make(chan struct{})}
	reporter := runner.Func("reporter", func(ctx context.Context) error {
		runner.HealthOf(ctx).Report("disk", errors.New("disk full"))
		<-ctx.Done()
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx, slow, reporter) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Error("group did not stop")
		}
	})
	waitStatus(t, g.Status(), func(s map[string]runner.Status) bool {
		return s["reporter"].Phase == runner.PhaseReady && s["reporter"].Problems != nil && s["slow"].Phase == runner.PhaseRunning
	})

	got = getJSON[readiness](t, url+"/readyz", http.StatusServiceUnavailable)
	if got.Ready || got.PendingInitializers != nil || !cmp.Equal(phases(got.NotReady), map[string]runner.Phase{"slow": runner.PhaseRunning}) {
		t.Errorf("/readyz while slow is not ready: %+v, want 503 naming slow only", got)
	}
	runners := getJSON[map[string]runner.Status](t, url+"/debug/runners", http.StatusOK)
	if diff := cmp.Diff(map[string]runner.Phase{"slow": runner.PhaseRunning, "reporter": runner.PhaseReady}, phases(runners)); diff != "" {
		t.Errorf("/debug/runners phases (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"disk": "disk full"}, runners["reporter"].Problems); diff != "" {
		t.Errorf("/debug/runners problems of reporter (-want +got):\n%s", diff)
	}

	close(slow.gate)
	waitStatus(t, g.Status(), func(s map[string]runner.Status) bool { return s["slow"].Phase == runner.PhaseReady })
	if got := getJSON[readiness](t, url+"/readyz", http.StatusOK); !cmp.Equal(got, readiness{Ready: true}) {
		t.Errorf("/readyz with every runner ready: %+v", got)
	}

	// A stopped group is not ready.
	cancel()
	waitStatus(t, g.Status(), func(s map[string]runner.Status) bool { return s["slow"].Phase == runner.PhaseStopped })
	got = getJSON[readiness](t, url+"/readyz", http.StatusServiceUnavailable)
	if got.Ready || got.NotReady["slow"].Phase != runner.PhaseStopped {
		t.Errorf("/readyz once stopped: %+v, want 503 naming slow as stopped", got)
	}
}

func TestReadinessOfAnEmptyGroup(t *testing.T) {
	g := runner.NewGroup(runner.WithLogger(discard))
	if err := g.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	url := serve(t, admin.Readiness(g.Status()))
	if got := getJSON[readiness](t, url, http.StatusOK); !got.Ready {
		t.Errorf("/readyz of a group without runners: %+v, want ready as Group.Ready is", got)
	}
}

// waitStatus waits, through a subscription, until the statuses satisfy
// cond.
func waitStatus(t *testing.T, status watchable.View[string, runner.Status], cond func(map[string]runner.Status) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var last map[string]runner.Status
	for snap := range status.Subscribe(ctx) {
		if last = snap.State.Map(); cond(last) {
			return
		}
	}
	t.Fatalf("statuses not as awaited after %v: %v", waitTimeout, last)
}
