package runner_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// quiet discards the records of the runners under test; failures show in
// the assertions.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// process is a runner group standing for one replica of a program: it runs
// until the test stops it or ends.
type process struct {
	g      *runner.Group
	cancel context.CancelFunc
	errc   chan error
	done   bool
}

// startProcess runs runners in a group until stop or the end of the test.
func startProcess(t *testing.T, runners ...runner.Runner) *process {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{g: runner.NewGroup(runner.WithLogger(quiet)), cancel: cancel, errc: make(chan error, 1)}
	go func() { p.errc <- p.g.Run(ctx, runners...) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop cancels the group and waits for Run, which must return nil.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if p.done {
		return
	}
	p.done = true
	p.cancel()
	if err := wait(t, p.errc); err != nil {
		t.Errorf("group returned %v", err)
	}
}

// problems returns the problems runner name reported in p's group.
func (p *process) problems(name string) map[string]string {
	st, _ := p.g.Status().Load(name)
	return st.Problems
}

// waitFor blocks until cond holds, re-checking whenever one of the views
// changes, and fails the test after patience.
func waitFor(t *testing.T, what string, cond func() bool, views ...interface {
	Notify(context.Context, chan<- struct{})
}) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	ch := make(chan struct{}, 1)
	for _, v := range views {
		v.Notify(ctx, ch)
	}
	for !cond() {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// leaderJob is a leader-only runner body that records what it sees.
type leaderJob struct {
	name    string
	mu      sync.Mutex
	runs    int
	tokens  []int64
	active  watchable.Map[string, int64] // name -> token while running
	fail    func(run int) error          // nil: run until cancelled
	stopped chan struct{}                // receives after each return
}

func newLeaderJob(name string) *leaderJob {
	return &leaderJob{name: name, stopped: make(chan struct{}, 100)}
}

func (j *leaderJob) Name() string { return j.name }
func (j *leaderJob) Run(ctx context.Context) error {
	term, ok := runner.TermOf(ctx)
	if !ok {
		return errors.New("no term in the context")
	}
	j.mu.Lock()
	j.runs++
	run := j.runs
	j.tokens = append(j.tokens, term.Token())
	j.mu.Unlock()
	j.active.Store(j.name, term.Token())
	defer func() {
		j.active.Delete(j.name)
		j.stopped <- struct{}{}
	}()
	if j.fail != nil {
		if err := j.fail(run); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

func (j *leaderJob) running() bool {
	_, ok := j.active.Load(j.name)
	return ok
}

func TestLeaderOnlyRunsOnlyWhileLeading(t *testing.T) {
	e := newMemEngine()
	jobA, jobB := newLeaderJob("job"), newLeaderJob("job")
	a := runner.LeaderOnly(e.replica("a"), jobA)
	startProcess(t, a)
	waitFor(t, "a to lead and run the job", jobA.running, jobA.active.View())
	if got, _ := a.Leading().Load("job"); got.Token == 0 || got.Phase != runner.PhaseRunning {
		t.Fatalf("a.Leading() = %+v, want a term, running", got)
	}

	b := runner.LeaderOnly(e.replica("b"), jobB)
	startProcess(t, b)
	// b campaigns but must not run while a leads: wait until b's campaign
	// is under way by checking the engine, then look.
	if holder, _ := e.leader("leader"); holder != "a" {
		t.Fatalf("leader = %q, want a", holder)
	}
	if jobB.running() || b.Leading().Len() != 0 {
		t.Fatal("b runs the job while a leads")
	}

	_, firstToken := e.leader("leader")
	e.isolate("a") // a is cut off, and its session expires
	waitFor(t, "a's job to be cancelled", func() bool { return !jobA.running() }, jobA.active.View())
	waitFor(t, "b to lead", jobB.running, jobB.active.View())
	holder, token := e.leader("leader")
	if holder != "b" || token <= firstToken {
		t.Fatalf("leader after a's loss: %s with token %d, want b with a token above %d", holder, token, firstToken)
	}
	jobB.mu.Lock()
	seen := jobB.tokens
	jobB.mu.Unlock()
	if len(seen) != 1 || seen[0] != token {
		t.Fatalf("b's job saw tokens %v, want [%d] (TermOf)", seen, token)
	}
	waitFor(t, "a's Leading to empty", func() bool { return a.Leading().Len() == 0 }, a.Leading())
}

func TestLeaderOnlyResignsWhenStopped(t *testing.T) {
	e := newMemEngine()
	jobA, jobB := newLeaderJob("job"), newLeaderJob("job")
	pa := startProcess(t, runner.LeaderOnly(e.replica("a"), jobA))
	waitFor(t, "a to lead", jobA.running, jobA.active.View())
	startProcess(t, runner.LeaderOnly(e.replica("b"), jobB))

	pa.stop(t)
	// Nobody killed a: only its resignation lets b lead.
	waitFor(t, "b to lead after a resigned", jobB.running, jobB.active.View())
	if jobA.running() {
		t.Fatal("a's job still runs after its group stopped")
	}
}

func TestLeaderOnlyRunnerFailureResignsAndWaits(t *testing.T) {
	e := newMemEngine()
	clock := newFakeClock()
	boom := errors.New("boom")
	job := newLeaderJob("job")
	job.fail = func(run int) error {
		switch run {
		case 1:
			return boom
		case 2:
			panic("out of cheese")
		}
		return nil
	}
	l := runner.LeaderOnly(e.replica("a"), job, runner.WithClock(clock), runner.WithBackoff(time.Second, 4*time.Second))
	p := startProcess(t, l)

	waitClosed(t, job.stopped, "the first run to fail")
	// It resigned, and waits for the backoff before campaigning again.
	clock.waitFor(t, time.Second, "the backoff after the failure")
	if holder, _ := e.leader("leader"); holder != "" {
		t.Fatalf("leader = %q after the runner failed, want none (resigned)", holder)
	}
	waitFor(t, "the failure to be reported", func() bool {
		return p.problems("job")[runner.ProblemLeading] == "boom"
	}, p.g.Status())

	clock.Advance(time.Second)
	waitClosed(t, job.stopped, "the second run to panic")
	clock.waitFor(t, 2*time.Second, "the doubled backoff after the panic")
	waitFor(t, "the panic to be reported", func() bool {
		return strings.Contains(p.problems("job")[runner.ProblemLeading], "out of cheese")
	}, p.g.Status())

	clock.Advance(2 * time.Second)
	waitFor(t, "the third run", job.running, job.active.View())
	waitFor(t, "the problem to be cleared", func() bool {
		_, ok := p.problems("job")[runner.ProblemLeading]
		return !ok
	}, p.g.Status())
}

func TestLeaderOnlyReportsCampaignErrors(t *testing.T) {
	e := newMemEngine()
	e.setDown(true)
	clock := newFakeClock()
	job := newLeaderJob("job")
	p := startProcess(t, runner.LeaderOnly(e.replica("a"), job, runner.WithClock(clock)))

	waitFor(t, "the campaign error to be reported", func() bool {
		return strings.Contains(p.problems("job")[runner.ProblemElection], "engine unreachable")
	}, p.g.Status())
	clock.waitFor(t, runner.DefaultBackoffMin, "the backoff")
	e.setDown(false)
	clock.Advance(runner.DefaultBackoffMin)
	waitFor(t, "the job to run once the engine answers", job.running, job.active.View())
	waitFor(t, "the problem to be cleared", func() bool {
		_, ok := p.problems("job")[runner.ProblemElection]
		return !ok
	}, p.g.Status())
}

func TestOptionsRefusedWhereTheyDoNotApply(t *testing.T) {
	e := newMemEngine()
	items := new(watchable.Map[string, int])
	tests := []struct {
		name string
		make func()
		want string
	}{
		{"grace on LeaderOnly", func() {
			runner.LeaderOnly(e.replica("a"), newLeaderJob("j"), runner.WithGrace(time.Second))
		}, "runner.LeaderOnly: runner.WithGrace:"},
		{"balance on LeaderOnly", func() {
			runner.LeaderOnly(e.replica("a"), newLeaderJob("j"), runner.WithLogger(quiet), runner.WithBalance(runner.Balance{}))
		}, "runner.LeaderOnly: runner.WithBalance:"},
		{"clock and backoff on a group", func() {
			runner.NewGroup(runner.WithClock(newFakeClock()), runner.WithBackoff(1, 2))
		}, "runner.NewGroup: runner.WithClock, runner.WithBackoff:"},
		{"grace on Shard", func() {
			runner.Shard("s", items.View(), func(k string) string { return k }, e.replica("a"),
				func(context.Context, string) error { return nil }, runner.WithGrace(time.Second))
		}, "runner.Shard: runner.WithGrace:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, tt.want) {
					t.Errorf("panic %q, want one starting with %q", msg, tt.want)
				}
			}()
			tt.make()
		})
	}
}

// drainer is a runner that says it needs time to stop.
type drainer struct{ runner.Runner }

func (drainer) ShutdownGrace() time.Duration { return 42 * time.Second }

func TestLeaderOnlyForwardsShutdownGrace(t *testing.T) {
	e := newMemEngine()
	var _ runner.Drainer = (*runner.Leader)(nil)
	if got := runner.LeaderOnly(e.replica("a"), drainer{newLeaderJob("j")}).ShutdownGrace(); got != 42*time.Second {
		t.Errorf("ShutdownGrace of a Drainer's Leader = %v, want 42s", got)
	}
	if got := runner.LeaderOnly(e.replica("a"), newLeaderJob("j")).ShutdownGrace(); got != 0 {
		t.Errorf("ShutdownGrace of a plain runner's Leader = %v, want 0", got)
	}
}
