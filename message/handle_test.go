package message_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// patience bounds every wait: generous, because CI runs the tests with -race
// on a loaded 2-core machine.
const patience = 30 * time.Second

var meta = message.Loop{Runner: "test-runner", Message: "test-map"}

// goHandle runs fn in a goroutine and returns a channel closed when it
// returns.
func goHandle(fn func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	return done
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(patience):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// recorder is a handler that records what it was called with, and fails or
// panics for the keys it is told to.
type recorder struct {
	mu     sync.Mutex
	seen   []string
	calls  chan string // receives each key handled, if not nil
	errs   map[string]bool
	panics map[string]bool
	busy   atomic.Int32 // calls in progress, to catch concurrent calls
	t      *testing.T
}

func (r *recorder) update(_ context.Context, u watchable.Update[string, int]) error {
	return r.handle(fmtUpdate(u))
}

func (r *recorder) snapshot(_ context.Context, s watchable.Snapshot[string, int]) error {
	var keys []string
	for _, u := range s.Updates {
		keys = append(keys, fmtUpdate(u))
	}
	slices.Sort(keys)
	return r.handle(strings.Join(keys, " "))
}

func (r *recorder) handle(what string) error {
	if r.busy.Add(1) != 1 {
		r.t.Error("handler called concurrently")
	}
	defer r.busy.Add(-1)
	r.mu.Lock()
	r.seen = append(r.seen, what)
	r.mu.Unlock()
	if r.calls != nil {
		r.calls <- what
	}
	if r.panics[what] {
		panic("cannot handle " + what)
	}
	if r.errs[what] {
		return fmt.Errorf("cannot handle %s", what)
	}
	return nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func fmtUpdate(u watchable.Update[string, int]) string {
	if u.Delete {
		return fmt.Sprintf("-%s", u.Key)
	}
	return fmt.Sprintf("%s=%d", u.Key, u.Value)
}

// metric returns the value of the named metric with the given labels (the
// sample count for a histogram) and whether it exists.
func metric(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metrics
				}
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				return m.GetCounter().GetValue(), true
			case dto.MetricType_GAUGE:
				return m.GetGauge().GetValue(), true
			case dto.MetricType_HISTOGRAM:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func handlerMetrics(t *testing.T, reg prometheus.Gatherer) map[string]float64 {
	t.Helper()
	labels := map[string]string{"runner": meta.Runner, "message": meta.Message}
	out := make(map[string]float64)
	for _, name := range []string{
		"switchyard_message_updates_total",
		"switchyard_message_handler_errors_total",
		"switchyard_message_handler_panics_total",
		"switchyard_message_handler_duration_seconds",
		"switchyard_message_snapshot_updates",
	} {
		v, _ := metric(t, reg, name, labels)
		out[name] = v
	}
	return out
}

// TestFailuresDoNotStopHandling checks, for both kinds of handler, that
// errors and panics are logged and counted and the next update is handled.
func TestFailuresDoNotStopHandling(t *testing.T) {
	tests := []struct {
		name      string
		snapshots bool
		errs      []string
		panics    []string
		// want is what the handler is called with after the initial
		// contents {a=1 b=2 c=3}, sorted, have been handled: d=4.
		wantFirst  []string
		wantLater  string
		wantErrors float64
		wantPanics float64
	}{
		{
			name:       "updates, one panics and one fails",
			panics:     []string{"a=1"},
			errs:       []string{"b=2"},
			wantFirst:  []string{"a=1", "b=2", "c=3"},
			wantLater:  "d=4",
			wantErrors: 1,
			wantPanics: 1,
		},
		{
			name:      "updates, all fine",
			wantFirst: []string{"a=1", "b=2", "c=3"},
			wantLater: "d=4",
		},
		{
			name:       "snapshots, the first panics",
			snapshots:  true,
			panics:     []string{"a=1 b=2 c=3"},
			wantFirst:  []string{"a=1 b=2 c=3"},
			wantLater:  "d=4",
			wantPanics: 1,
		},
		{
			name:       "snapshots, the first fails",
			snapshots:  true,
			errs:       []string{"a=1 b=2 c=3"},
			wantFirst:  []string{"a=1 b=2 c=3"},
			wantLater:  "d=4",
			wantErrors: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var m watchable.Map[string, int]
			m.Batch(func(b *watchable.Batch[string, int]) {
				b.Store("a", 1)
				b.Store("b", 2)
				b.Store("c", 3)
			})
			reg := prometheus.NewRegistry()
			metrics, err := message.NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer // written by the loop, read once it has returned
			opts := []message.Option{message.WithMetrics(metrics), message.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}
			r := &recorder{t: t, calls: make(chan string, 10), errs: set(tt.errs), panics: set(tt.panics)}

			sub := m.Subscribe(ctx)
			done := goHandle(func() {
				if tt.snapshots {
					message.HandleSnapshots(ctx, meta, sub, r.snapshot, opts...)
				} else {
					message.HandleSubscription(ctx, meta, sub, r.update, opts...)
				}
			})
			var first []string
			for range tt.wantFirst {
				first = append(first, receive(t, r.calls))
			}
			slices.Sort(first) // one snapshot's updates come in no particular order
			if diff := cmp.Diff(tt.wantFirst, first); diff != "" {
				t.Errorf("initial contents handled (-want +got):\n%s", diff)
			}
			m.Store("d", 4)
			if got := receive(t, r.calls); got != tt.wantLater {
				t.Errorf("after the failures, handled %q, want %q", got, tt.wantLater)
			}
			m.Close()
			waitDone(t, done, "the loop to return after Close")

			wantUpdates := float64(len(tt.wantFirst) + 1)
			calls := float64(len(tt.wantFirst) + 1)
			snapshots := 2.0
			if tt.snapshots {
				wantUpdates = 4
			}
			want := map[string]float64{
				"switchyard_message_updates_total":            wantUpdates,
				"switchyard_message_handler_errors_total":     tt.wantErrors,
				"switchyard_message_handler_panics_total":     tt.wantPanics,
				"switchyard_message_handler_duration_seconds": calls,
				"switchyard_message_snapshot_updates":         snapshots,
			}
			if diff := cmp.Diff(want, handlerMetrics(t, reg)); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}

			log := logs.String()
			for _, what := range tt.panics {
				if !strings.Contains(log, "message handler panicked") || !strings.Contains(log, "cannot handle "+what) || !strings.Contains(log, "goroutine ") {
					t.Errorf("log does not report the panic on %q with its stack:\n%s", what, log)
				}
			}
			for _, what := range tt.errs {
				if !strings.Contains(log, "message handler failed") || !strings.Contains(log, "cannot handle "+what) {
					t.Errorf("log does not report the error on %q:\n%s", what, log)
				}
			}
			if !strings.Contains(log, "runner=test-runner message=test-map") && log != "" {
				t.Errorf("log records do not carry the metadata:\n%s", log)
			}
			if len(tt.errs)+len(tt.panics) == 0 && log != "" {
				t.Errorf("logged without failures:\n%s", log)
			}
		})
	}
}

func set(keys []string) map[string]bool {
	out := make(map[string]bool)
	for _, k := range keys {
		out[k] = true
	}
	return out
}

func receive(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(patience):
		t.Fatal("timed out waiting for the handler to be called")
		return ""
	}
}

// TestOrder checks that a handler sees the changes of a key in the order
// they were made (some coalesced away, but never out of order), one call at a
// time, ending with the last.
func TestOrder(t *testing.T) {
	const writes = 2000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	sub := m.Subscribe(ctx)
	var got []int
	var busy atomic.Int32
	done := goHandle(func() {
		message.HandleSubscription(ctx, meta, sub, func(_ context.Context, u watchable.Update[string, int]) error {
			if busy.Add(1) != 1 {
				t.Error("handler called concurrently")
			}
			defer busy.Add(-1)
			got = append(got, u.Value)
			return nil
		})
	})
	for i := 1; i <= writes; i++ {
		m.Store("k", i)
	}
	m.Close()
	waitDone(t, done, "the loop to return after Close")
	if len(got) == 0 || got[len(got)-1] != writes {
		t.Fatalf("handled %v, want the last value to be %d", got, writes)
	}
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("values handled out of order: %v", got)
	}
}

func TestHandleSubscriptionSeesEveryKindOfChange(t *testing.T) {
	seesEveryKindOfChange(t, func(ctx context.Context, m *watchable.Map[string, int], r *recorder) {
		message.HandleSubscription(ctx, meta, m.Subscribe(ctx), r.update)
	})
}

// seesEveryKindOfChange runs loop on a map holding a=1, makes a write of
// each kind, and checks that the loop hands each to its handler once.
func seesEveryKindOfChange(t *testing.T, loop func(ctx context.Context, m *watchable.Map[string, int], r *recorder)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Store("a", 1)
	r := &recorder{t: t, calls: make(chan string, 10)}
	done := goHandle(func() { loop(ctx, &m, r) })

	steps := []struct {
		write func()
		want  string
	}{
		{func() {}, "a=1"},
		{func() { m.Store("b", 2) }, "b=2"},
		{func() { m.Store("a", 10) }, "a=10"},
		{func() { m.Delete("a") }, "-a"},
	}
	for _, s := range steps {
		s.write()
		if got := receive(t, r.calls); got != s.want {
			t.Errorf("handled %q, want %q", got, s.want)
		}
	}
	cancel()
	waitDone(t, done, "the loop to return after cancel")
	if extra := len(r.got()) - len(steps); extra != 0 {
		t.Errorf("handled %d updates more than written: %v", extra, r.got())
	}
}

func TestHandleSnapshotsSeesState(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Store("a", 1)
	type seen struct {
		State    map[string]int
		Revision uint64
	}
	calls := make(chan seen, 1)
	sub := m.Subscribe(ctx)
	done := goHandle(func() {
		message.HandleSnapshots(ctx, meta, sub, func(_ context.Context, s watchable.Snapshot[string, int]) error {
			calls <- seen{s.State.Map(), s.Revision}
			return nil
		})
	})
	first := <-calls
	m.Store("b", 2)
	second := <-calls
	want := []seen{{map[string]int{"a": 1}, 1}, {map[string]int{"a": 1, "b": 2}, 2}}
	if diff := cmp.Diff(want, []seen{first, second}); diff != "" {
		t.Errorf("snapshots handled (-want +got):\n%s", diff)
	}
	cancel()
	waitDone(t, done, "the loop to return after cancel")
}

func TestReturns(t *testing.T) {
	tests := []struct {
		name string
		// end ends the loop: it cancels the loop's context or closes the map.
		end func(cancelLoop context.CancelFunc, m *watchable.Map[string, int])
	}{
		{"when ctx is done", func(cancelLoop context.CancelFunc, _ *watchable.Map[string, int]) { cancelLoop() }},
		{"when the map is closed", func(_ context.CancelFunc, m *watchable.Map[string, int]) { m.Close() }},
	}
	for _, tt := range tests {
		for _, snapshots := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/snapshots=%v", tt.name, snapshots), func(t *testing.T) {
				subCtx, cancelSub := context.WithCancel(context.Background())
				defer cancelSub()
				loopCtx, cancelLoop := context.WithCancel(context.Background())
				defer cancelLoop()
				var m watchable.Map[string, int]
				m.Store("a", 1)
				r := &recorder{t: t, calls: make(chan string, 1)}
				sub := m.Subscribe(subCtx) // closed only by the map
				done := goHandle(func() {
					if snapshots {
						message.HandleSnapshots(loopCtx, meta, sub, r.snapshot)
					} else {
						message.HandleSubscription(loopCtx, meta, sub, r.update)
					}
				})
				receive(t, r.calls)
				tt.end(cancelLoop, &m)
				waitDone(t, done, "the loop to return")
			})
		}
	}
}

func TestStopsMidSnapshotWhenCtxIsDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2, "c": 3})
	calls := 0
	message.HandleSubscription(ctx, meta, m.Subscribe(context.Background()), func(context.Context, watchable.Update[string, int]) error {
		calls++
		cancel()
		return nil
	})
	if calls != 1 {
		t.Errorf("handler called %d times, want 1: the loop must stop once ctx is done", calls)
	}
	m.Close() // ends the subscription
}

// TestMetricsCountWhatWasHandled checks that updates left unhandled when ctx
// is done mid-snapshot are not counted as handled.
func TestMetricsCountWhatWasHandled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := prometheus.NewRegistry()
	metrics, err := message.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2, "c": 3})
	sub := m.Subscribe(context.Background())
	m.Close()
	message.HandleSubscription(ctx, meta, sub, func(context.Context, watchable.Update[string, int]) error {
		cancel()
		return nil
	}, message.WithMetrics(metrics))
	want := map[string]float64{
		"switchyard_message_updates_total":            1,
		"switchyard_message_handler_errors_total":     0,
		"switchyard_message_handler_panics_total":     0,
		"switchyard_message_handler_duration_seconds": 1,
		"switchyard_message_snapshot_updates":         1, // one snapshot of 3 updates delivered
	}
	if diff := cmp.Diff(want, handlerMetrics(t, reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
}

func TestPendingChangesAreHandledBeforeClose(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	sub := m.Subscribe(context.Background())
	m.Store("b", 2)
	m.Close()
	r := &recorder{t: t}
	message.HandleSubscription(context.Background(), meta, sub, r.update)
	got := r.got()
	slices.Sort(got)
	if diff := cmp.Diff([]string{"a=1", "b=2"}, got); diff != "" {
		t.Errorf("handled (-want +got):\n%s", diff)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	sub := m.Subscribe(context.Background())
	m.Close()
	calls := 0
	message.HandleSubscription(context.Background(), meta, sub, func(context.Context, watchable.Update[string, int]) error {
		calls++
		return errors.New("ignored")
	}, message.WithMetrics(nil), message.WithLogger(nil))
	if calls != 1 {
		t.Errorf("handler called %d times, want 1", calls)
	}
}

// With no options at all, a failing or panicking handler is logged through
// slog.Default(): failures are never silent.
func TestFailuresAreLoggedByDefault(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	defer slog.SetDefault(old)

	var m watchable.Map[string, int]
	m.Store("bad", 1)
	m.Store("panics", 2)
	sub := m.Subscribe(context.Background())
	m.Close()
	message.HandleSubscription(context.Background(), message.Loop{Message: "jobs"}, sub,
		func(_ context.Context, u watchable.Update[string, int]) error {
			if u.Key == "panics" {
				panic("handler exploded")
			}
			return errors.New("handler failed")
		})
	out := logs.String()
	for _, want := range []string{`msg="message handler failed"`, `error="handler failed"`, `key=bad`,
		`msg="message handler panicked"`, `panic="handler exploded"`, `message=jobs`} {
		if !strings.Contains(out, want) {
			t.Errorf("default log lacks %s:\n%s", want, out)
		}
	}
}

// A Loop without a Runner takes the name of the runner whose context the
// loop runs with.
func TestLoopRunnerDefaultsToTheRunnersName(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	var m watchable.Map[string, int]
	m.Store("a", 1)
	err := runner.Run(context.Background(), runner.Func("importer", func(ctx context.Context) error {
		sub := m.Subscribe(ctx)
		go m.Close()
		message.HandleSubscription(ctx, message.Loop{Message: "items"}, sub,
			func(context.Context, watchable.Update[string, int]) error { return errors.New("nope") },
			message.WithLogger(logger))
		return nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "runner=importer") {
		t.Errorf("log does not name the runner:\n%s", logs.String())
	}
}
