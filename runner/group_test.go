package runner_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// patience bounds every wait on a condition: generous, because CI runs the
// tests with -race on a loaded 2-core machine. Nothing waits this long
// unless a test is about to fail.
const patience = 30 * time.Second

var errBoom = errors.New("boom")

// waitStatus blocks until cond holds for the statuses in m, and fails the
// test after patience.
func waitStatus(t *testing.T, m watchable.View[string, runner.Status], what string, cond func(map[string]runner.Status) bool) map[string]runner.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var last map[string]runner.Status
	for snap := range m.Subscribe(ctx) {
		last = snap.State.Map()
		if cond(last) {
			return last
		}
	}
	t.Fatalf("timed out waiting for %s; statuses: %v", what, states(last))
	return nil
}

// waitState blocks until the runner name is in state s.
func waitState(t *testing.T, m watchable.View[string, runner.Status], name string, s runner.Phase) runner.Status {
	t.Helper()
	return waitStatus(t, m, fmt.Sprintf("%s to be %s", name, s), func(st map[string]runner.Status) bool {
		return st[name].Phase == s
	})[name]
}

// states keeps only the State of each status, for comparisons.
func states(st map[string]runner.Status) map[string]runner.Phase {
	out := make(map[string]runner.Phase, len(st))
	for k, v := range st {
		out[k] = v.Phase
	}
	return out
}

// waitClosed fails the test if ch is not closed within patience.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(patience):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// start runs the group in a goroutine and returns a channel with Run's
// error.
func start(ctx context.Context, g *runner.Group, runners ...runner.Runner) <-chan error {
	errc := make(chan error, 1)
	go func() { errc <- g.Run(ctx, runners...) }()
	return errc
}

func wait(t *testing.T, errc <-chan error) error {
	t.Helper()
	select {
	case err := <-errc:
		return err
	case <-time.After(patience):
		t.Fatal("timed out waiting for Run to return")
		return nil
	}
}

// untilDone is a runner body that returns ret(ctx) once ctx is done.
func untilDone(ret func(ctx context.Context) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		return ret(ctx)
	}
}

func returnNil(context.Context) error        { return nil }
func returnCtxErr(ctx context.Context) error { return ctx.Err() }

func TestRunOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		runners []runner.Runner
		// cancel cancels the parent context once every runner is ready.
		cancel     bool
		wantErr    error  // errors.Is target; nil: Run must return nil
		wantInErr  string // text the error must contain
		wantStates map[string]runner.Phase
	}{
		{
			name: "all return nil when ctx is done",
			runners: []runner.Runner{
				runner.Func("a", untilDone(returnNil)),
				runner.Func("b", untilDone(returnNil)),
			},
			cancel:     true,
			wantStates: map[string]runner.Phase{"a": runner.PhaseStopped, "b": runner.PhaseStopped},
		},
		{
			name: "context errors after cancellation are clean stops",
			runners: []runner.Runner{
				runner.Func("a", untilDone(returnCtxErr)),
				runner.Func("b", untilDone(func(ctx context.Context) error {
					return fmt.Errorf("serving: %w", ctx.Err())
				})),
			},
			cancel:     true,
			wantStates: map[string]runner.Phase{"a": runner.PhaseStopped, "b": runner.PhaseStopped},
		},
		{
			name: "first error cancels the others and names its runner",
			runners: []runner.Runner{
				runner.Func("a", untilDone(returnNil)),
				runner.Func("bad", func(context.Context) error { return errBoom }),
				runner.Func("c", untilDone(returnCtxErr)),
			},
			wantErr:    errBoom,
			wantInErr:  `runner "bad": boom`,
			wantStates: map[string]runner.Phase{"a": runner.PhaseStopped, "bad": runner.PhaseFailed, "c": runner.PhaseStopped},
		},
		{
			name: "an error returned after cancellation is still a failure",
			runners: []runner.Runner{
				runner.Func("a", untilDone(func(context.Context) error { return errBoom })),
			},
			cancel:     true,
			wantErr:    errBoom,
			wantInErr:  `runner "a": boom`,
			wantStates: map[string]runner.Phase{"a": runner.PhaseFailed},
		},
		{
			name: "panic is recovered and cancels the others",
			runners: []runner.Runner{
				runner.Func("a", untilDone(returnNil)),
				runner.Func("crasher", func(context.Context) error { panic("out of cheese") }),
			},
			wantErr:    nil, // checked below as a *PanicError
			wantInErr:  `runner "crasher" panicked: out of cheese`,
			wantStates: map[string]runner.Phase{"a": runner.PhaseStopped, "crasher": runner.PhaseFailed},
		},
		{
			name: "panic with an error value unwraps to it",
			runners: []runner.Runner{
				runner.Func("crasher", func(context.Context) error { panic(errBoom) }),
			},
			wantErr:    errBoom,
			wantInErr:  `runner "crasher" panicked: boom`,
			wantStates: map[string]runner.Phase{"crasher": runner.PhaseFailed},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			g := runner.NewGroup()
			errc := start(ctx, g, tt.runners...)
			if tt.cancel {
				waitClosed(t, g.Ready(), "the group to be ready")
				cancel()
			}
			err := wait(t, errc)

			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Run() = %v, want an error wrapping %v", err, tt.wantErr)
			}
			if tt.wantInErr == "" && err != nil {
				t.Errorf("Run() = %v, want nil", err)
			}
			if tt.wantInErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantInErr)) {
				t.Errorf("Run() = %v, want an error containing %q", err, tt.wantInErr)
			}
			if strings.Contains(tt.wantInErr, "panicked") {
				var perr *runner.PanicError
				if !errors.As(err, &perr) {
					t.Fatalf("Run() = %v, want a *PanicError", err)
				}
				if perr.Runner != "crasher" {
					t.Errorf("PanicError.Runner = %q, want %q", perr.Runner, "crasher")
				}
				// The stack is the panicking goroutine's: it shows the
				// function that panicked.
				if !strings.Contains(string(perr.Stack), "TestRunOutcomes") {
					t.Errorf("PanicError.Stack does not show the panicking function:\n%s", perr.Stack)
				}
			}
			// Run has returned, so the final statuses are published.
			got := g.Status().LoadAll()
			if diff := cmp.Diff(tt.wantStates, states(got)); diff != "" {
				t.Errorf("final states (-want +got):\n%s", diff)
			}
			for name, st := range got {
				if (st.Phase == runner.PhaseFailed) != (st.Err != "") {
					t.Errorf("status of %s = %+v: Err must be set exactly when failed", name, st)
				}
			}
		})
	}
}

// stuckRunner ignores cancellation until released.
type stuckRunner struct {
	name     string
	started  chan struct{}
	release  chan struct{}
	returned chan struct{}
}

func newStuck(name string) *stuckRunner {
	return &stuckRunner{name: name, started: make(chan struct{}), release: make(chan struct{}), returned: make(chan struct{})}
}

func (s *stuckRunner) Name() string { return s.name }

func (s *stuckRunner) Run(context.Context) error {
	defer close(s.returned)
	close(s.started)
	<-s.release
	return nil
}

// unstick releases the runner and waits for its goroutine to finish, so
// that goleak sees none left behind.
func (s *stuckRunner) unstick(t *testing.T) {
	t.Helper()
	close(s.release)
	waitClosed(t, s.returned, s.name+" to return")
}

func TestRunGraceNamesStuckRunners(t *testing.T) {
	tests := []struct {
		name string
		// fail makes a runner fail, which cancels the group; otherwise the
		// parent context is cancelled.
		fail    bool
		wantErr []error
	}{
		{name: "after a failure", fail: true, wantErr: []error{runner.ErrStuck, errBoom}},
		{name: "after the parent context is done", wantErr: []error{runner.ErrStuck}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stuck := newStuck("stuck")
			defer stuck.unstick(t)
			failNow := make(chan struct{})
			runners := []runner.Runner{
				stuck,
				runner.Func("polite", untilDone(returnNil)),
				runner.Func("failing", func(ctx context.Context) error {
					select {
					case <-failNow:
						return errBoom
					case <-ctx.Done():
						return nil
					}
				}),
			}
			g := runner.NewGroup(runner.WithGrace(250 * time.Millisecond))
			errc := start(ctx, g, runners...)
			<-stuck.started
			if tt.fail {
				close(failNow)
			} else {
				cancel()
			}
			err := wait(t, errc)

			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("Run() = %v, want an error wrapping %v", err, want)
				}
			}
			if err == nil || !strings.Contains(err.Error(), `"stuck"`) {
				t.Fatalf("Run() = %v, want it to name the stuck runner", err)
			}
			// The others return promptly, but a loaded machine may delay
			// them past the grace period; what must hold is that a runner
			// that did return is not named.
			for name, st := range g.Status().LoadAll() {
				if name != "stuck" && st.Phase == runner.PhaseStopped && strings.Contains(err.Error(), fmt.Sprintf("%q", name)) {
					t.Errorf("Run() = %v, naming %q which returned", err, name)
				}
			}
			st, _ := g.Status().Load("stuck")
			if st.Phase != runner.PhaseFailed || !strings.Contains(st.Err, "did not return") {
				t.Errorf("status of the stuck runner = %+v, want failed because it did not return", st)
			}
			select {
			case <-stuck.returned:
				t.Error("the stuck runner returned before it was released: the test proves nothing")
			default:
			}
		})
	}
}

func TestRunInvalidRunners(t *testing.T) {
	mustNotRun := func(t *testing.T) func(context.Context) error {
		return func(context.Context) error {
			t.Error("a runner started although the group was invalid")
			return nil
		}
	}
	tests := []struct {
		name    string
		runners func(t *testing.T) []runner.Runner
		wantIn  string
	}{
		{
			name: "empty name",
			runners: func(t *testing.T) []runner.Runner {
				return []runner.Runner{runner.Func("a", mustNotRun(t)), runner.Func("", mustNotRun(t))}
			},
			wantIn: "runner #1",
		},
		{
			name: "duplicate name",
			runners: func(t *testing.T) []runner.Runner {
				return []runner.Runner{runner.Func("a", mustNotRun(t)), runner.Func("b", mustNotRun(t)), runner.Func("a", mustNotRun(t))}
			},
			wantIn: `"a" is used twice`,
		},
		{
			name:    "nil runner",
			runners: func(t *testing.T) []runner.Runner { return []runner.Runner{runner.Func("a", mustNotRun(t)), nil} },
			wantIn:  "runner #1 is nil",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := runner.NewGroup()
			err := g.Run(context.Background(), tt.runners(t)...)
			if !errors.Is(err, runner.ErrInvalidName) || !strings.Contains(err.Error(), tt.wantIn) {
				t.Errorf("Run() = %v, want ErrInvalidName mentioning %q", err, tt.wantIn)
			}
			if n := g.Status().Len(); n != 0 {
				t.Errorf("%d statuses published for an invalid group, want none", n)
			}
		})
	}
}

func TestRunTwice(t *testing.T) {
	g := runner.NewGroup()
	if err := g.Run(context.Background(), runner.Func("a", returnNil)); err != nil {
		t.Fatalf("first Run() = %v", err)
	}
	if err := g.Run(context.Background(), runner.Func("a", returnNil)); !errors.Is(err, runner.ErrAlreadyRun) {
		t.Errorf("second Run() = %v, want ErrAlreadyRun", err)
	}
}

func TestRunNoRunners(t *testing.T) {
	g := runner.NewGroup()
	if err := g.Run(context.Background()); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	select {
	case <-g.Ready():
	default:
		t.Error("a group without runners is not ready")
	}
}

func TestEarlyNilReturnDoesNotStopTheOthers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled bool
	g := runner.NewGroup()
	errc := start(ctx, g,
		runner.Func("oneshot", returnNil),
		runner.Func("server", func(ctx context.Context) error {
			<-ctx.Done()
			cancelled = true // read after Run returns
			return nil
		}),
	)
	waitStatus(t, g.Status(), "oneshot stopped and server ready", func(st map[string]runner.Status) bool {
		return st["oneshot"].Phase == runner.PhaseStopped && st["server"].Phase == runner.PhaseReady
	})
	select {
	case err := <-errc:
		t.Fatalf("Run returned %v after one runner returned nil", err)
	default:
	}
	cancel()
	if err := wait(t, errc); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	if !cancelled {
		t.Error("the server did not see its context cancelled")
	}
}

// gated is a Readier whose readiness and return the test controls, and
// that reports what the group published about it when Ready was called.
type gated struct {
	name     string
	ready    chan struct{}
	fail     chan error
	statuses watchable.View[string, runner.Status]
	atReady  runner.Status // the status when the group asked for Ready
}

func newGated(name string, statuses watchable.View[string, runner.Status]) *gated {
	return &gated{name: name, ready: make(chan struct{}), fail: make(chan error, 1), statuses: statuses}
}

func (g *gated) Name() string { return g.name }

func (g *gated) Ready() <-chan struct{} {
	g.atReady, _ = g.statuses.Load(g.name)
	return g.ready
}

func (g *gated) Run(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-g.fail:
		return err
	}
}

func TestReadinessIsAggregated(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := runner.NewGroup()
	statuses := g.Status() // available before Run, for a health check
	a, b := newGated("a", statuses), newGated("b", statuses)
	errc := start(ctx, g, a, b, runner.Func("plain", untilDone(returnNil)))

	waitStatus(t, statuses, "a and b running, plain ready", func(st map[string]runner.Status) bool {
		return st["a"].Phase == runner.PhaseRunning && st["b"].Phase == runner.PhaseRunning && st["plain"].Phase == runner.PhaseReady
	})
	close(a.ready)
	waitState(t, statuses, "a", runner.PhaseReady)
	select {
	case <-g.Ready():
		t.Fatal("the group is ready while b is not")
	default:
	}
	close(b.ready)
	waitClosed(t, g.Ready(), "the group to be ready")
	if diff := cmp.Diff(map[string]runner.Phase{"a": runner.PhaseReady, "b": runner.PhaseReady, "plain": runner.PhaseReady}, states(statuses.LoadAll())); diff != "" {
		t.Errorf("states once ready (-want +got):\n%s", diff)
	}
	cancel()
	if err := wait(t, errc); err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
}

func TestNotReadyWhenARunnerFailsFirst(t *testing.T) {
	g := runner.NewGroup()
	statuses := g.Status()
	a := newGated("a", statuses)
	errc := start(context.Background(), g, a, runner.Func("plain", untilDone(returnNil)))
	waitState(t, statuses, "a", runner.PhaseRunning)
	a.fail <- errBoom
	if err := wait(t, errc); !errors.Is(err, errBoom) {
		t.Errorf("Run() = %v, want %v", err, errBoom)
	}
	select {
	case <-g.Ready():
		t.Error("the group reports ready although a failed before being ready")
	default:
	}
}

func TestStatusTransitions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := runner.NewGroup()
	statuses := g.Status()
	if isClosed(statuses.Initialized()) {
		t.Fatal("the status map is initialized before the group lists its runners")
	}
	a, b := newGated("a", statuses), newGated("b", statuses)
	errc := start(ctx, g, a, b)

	first := waitState(t, statuses, "a", runner.PhaseRunning)
	close(a.ready)
	second := waitState(t, statuses, "a", runner.PhaseReady)
	if second.Since.Before(first.Since) {
		t.Errorf("Since went back: running since %v, ready since %v", first.Since, second.Since)
	}
	waitState(t, statuses, "b", runner.PhaseRunning)
	b.fail <- errBoom
	final := waitStatus(t, statuses, "a stopped and b failed", func(st map[string]runner.Status) bool {
		return st["a"].Phase == runner.PhaseStopped && st["b"].Phase == runner.PhaseFailed
	})
	if err := wait(t, errc); !errors.Is(err, errBoom) {
		t.Errorf("Run() = %v, want %v", err, errBoom)
	}

	for _, r := range []*gated{a, b} {
		if r.atReady.Phase != runner.PhaseStarting {
			t.Errorf("status of %s before its Run = %+v, want starting", r.name, r.atReady)
		}
	}
	if final["b"].Err != "boom" {
		t.Errorf("Err of the failed runner = %q, want %q", final["b"].Err, "boom")
	}
	if !isClosed(statuses.Initialized()) {
		t.Error("the status map is not initialized once the group ran")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// problem is one step of TestHealth: report err under key.
type problem struct {
	key string
	err error
}

func TestHealth(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	steps := make(chan problem)
	var runCtx context.Context
	g := runner.NewGroup()
	errc := start(ctx, g, runner.Func("watcher", func(ctx context.Context) error {
		runCtx = ctx // read after Run returns
		if got := runner.NameOf(ctx); got != "watcher" {
			t.Errorf("NameOf(ctx) = %q; want watcher", got)
		}
		for {
			select {
			case <-ctx.Done():
				return nil
			case p := <-steps:
				// Derived contexts carry the runner too.
				sub, stop := context.WithCancel(ctx)
				runner.HealthOf(sub).Report(p.key, p.err)
				stop()
			}
		}
	}))
	problems := func(want map[string]string) func(map[string]runner.Status) bool {
		return func(st map[string]runner.Status) bool {
			return cmp.Equal(st["watcher"].Problems, want, cmp.Comparer(func(a, b map[string]string) bool {
				return len(a) == len(b) && (len(a) == 0 || cmp.Equal(a, b))
			})) && st["watcher"].Phase == runner.PhaseReady
		}
	}

	steps <- problem{"routes.yaml", errors.New("bad input file")}
	waitStatus(t, g.Status(), "the problem to be reported", problems(map[string]string{"routes.yaml": "bad input file"}))
	// A second source does not erase the first: the Compute bug of old,
	// where a library's success cleared the user's problem.
	steps <- problem{"translate", errors.New("key a failed")}
	waitStatus(t, g.Status(), "both problems", problems(map[string]string{"routes.yaml": "bad input file", "translate": "key a failed"}))
	steps <- problem{"translate", nil}
	waitStatus(t, g.Status(), "one problem cleared", problems(map[string]string{"routes.yaml": "bad input file"}))
	steps <- problem{"routes.yaml", nil}
	waitStatus(t, g.Status(), "no problem left", problems(nil))
	steps <- problem{"refresh", errors.New("refresh failed")}
	waitStatus(t, g.Status(), "the last problem", problems(map[string]string{"refresh": "refresh failed"}))
	cancel()
	if err := wait(t, errc); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	final, _ := g.Status().Load("watcher")
	if final.Phase != runner.PhaseStopped || final.Problems["refresh"] != "refresh failed" {
		t.Errorf("final status = %+v, want stopped with the problem kept", final)
	}

	// Once Run has returned, and outside any group, reports do nothing.
	runner.HealthOf(runCtx).Report("late", errors.New("too late"))
	runner.HealthOf(context.Background()).Report("x", errors.New("nobody listens"))
	var zero runner.Health
	zero.Report("x", errors.New("nobody listens"))
	if after, _ := g.Status().Load("watcher"); !cmp.Equal(after, final) {
		t.Errorf("status changed after Run returned: %+v, want %+v", after, final)
	}
	if got := runner.NameOf(context.Background()); got != "" {
		t.Errorf("NameOf outside a group = %q; want empty", got)
	}
}

// TestHealthListsAtMostMaxProblems reports a problem per entry of an input
// larger than MaxProblems: the status lists MaxProblems of them and counts
// the rest, an unlisted problem takes the place of a listed one that is
// cleared, and clearing every problem empties both.
func TestHealthListsAtMostMaxProblems(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	steps := make(chan []problem)
	g := runner.NewGroup(runner.WithLogger(slog.New(slog.DiscardHandler)))
	errc := start(ctx, g, runner.Func("scanner", func(ctx context.Context) error {
		for {
			select {
			case <-ctx.Done():
				return nil
			case batch := <-steps:
				for _, p := range batch {
					runner.HealthOf(ctx).Report(p.key, p.err)
				}
			}
		}
	}))
	const total = runner.MaxProblems + 50
	key := func(i int) string { return fmt.Sprintf("entry-%03d", i) }
	var batch []problem
	for i := range total {
		batch = append(batch, problem{key(i), fmt.Errorf("entry %d is bad", i)})
	}
	steps <- batch
	counts := func(listed, more int) func(map[string]runner.Status) bool {
		return func(st map[string]runner.Status) bool {
			s := st["scanner"]
			return len(s.Problems) == listed && s.MoreProblems == more
		}
	}
	st := waitStatus(t, g.Status(), "100 problems listed, 50 counted", counts(runner.MaxProblems, 50))
	for k, v := range st["scanner"].Problems {
		var i int
		if _, err := fmt.Sscanf(k, "entry-%d", &i); err != nil || v != fmt.Sprintf("entry %d is bad", i) {
			t.Fatalf("listed problem %q: %q", k, v)
		}
	}

	// Clearing listed problems lets unlisted ones take their places;
	// changing or clearing unlisted ones changes only the count.
	var listed []string
	for k := range st["scanner"].Problems {
		listed = append(listed, k)
	}
	slices.Sort(listed)
	var unlisted []string
	for i := range total {
		if _, ok := st["scanner"].Problems[key(i)]; !ok {
			unlisted = append(unlisted, key(i))
		}
	}
	steps <- []problem{{unlisted[1], errors.New("worse")}, {listed[0], nil}, {listed[1], nil}, {unlisted[0], nil}}
	st = waitStatus(t, g.Status(), "two listed cleared, one unlisted cleared", counts(runner.MaxProblems, 47))
	for _, k := range listed[:2] {
		if _, ok := st["scanner"].Problems[k]; ok {
			t.Errorf("cleared problem %q is still listed", k)
		}
	}
	if _, ok := st["scanner"].Problems[unlisted[0]]; ok {
		t.Errorf("cleared problem %q is listed", unlisted[0])
	}
	if v, ok := st["scanner"].Problems[unlisted[1]]; ok && v != "worse" {
		t.Errorf("problem %q listed as %q, want its latest report", unlisted[1], v)
	}

	// Clear everything, in an order that clears listed ones first.
	batch = nil
	for i := range total {
		batch = append(batch, problem{key(i), nil})
	}
	steps <- batch
	waitStatus(t, g.Status(), "no problem left", counts(0, 0))
	cancel()
	if err := wait(t, errc); err != nil {
		t.Fatalf("Run() = %v", err)
	}
}

// TestGraceDoesNotBlameRunnersThatReturned races the grace period against
// runners that return as soon as they are cancelled: Run may find some of
// them stuck, but must never report ErrStuck without a runner to name.
func TestGraceDoesNotBlameRunnersThatReturned(t *testing.T) {
	for i := range 500 {
		ctx, cancel := context.WithCancel(context.Background())
		g := runner.NewGroup(runner.WithGrace(time.Nanosecond))
		errc := start(ctx, g, runner.Func("a", untilDone(returnNil)), runner.Func("b", untilDone(returnCtxErr)))
		waitClosed(t, g.Ready(), "the group to be ready")
		cancel()
		err := wait(t, errc)
		if errors.Is(err, runner.ErrStuck) && !strings.Contains(err.Error(), `"a"`) && !strings.Contains(err.Error(), `"b"`) {
			t.Fatalf("run %d: Run() = %v, naming no stuck runner", i, err)
		}
	}
}

// draining is a runner that takes a while to stop, and says how long it
// may take.
type draining struct {
	grace time.Duration
	takes time.Duration // how long it takes to return once stopped
}

func (d draining) Name() string                 { return "draining" }
func (d draining) ShutdownGrace() time.Duration { return d.grace }
func (d draining) Run(ctx context.Context) error {
	<-ctx.Done()
	t := time.NewTimer(d.takes) // the drain under test: it takes time
	defer t.Stop()
	<-t.C
	return nil
}

// TestDrainerGetsItsGrace stops a group whose grace is far shorter than
// what a Drainer among its runners needs: the group waits for it.
func TestDrainerGetsItsGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	g := runner.NewGroup(runner.WithGrace(time.Millisecond))
	errc := start(ctx, g, draining{grace: patience / 2, takes: 200 * time.Millisecond}, runner.Func("quick", untilDone(returnNil)))
	waitClosed(t, g.Ready(), "the group ready")
	cancel()
	if err := wait(t, errc); err != nil {
		t.Fatalf("Run() = %v, want nil: the group must wait for the draining runner", err)
	}
	if st, _ := g.Status().Load("draining"); st.Phase != runner.PhaseStopped {
		t.Errorf("status of the draining runner = %+v, want stopped", st)
	}
}
