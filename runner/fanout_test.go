package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// byNode partitions pods, keyed by name, by the node they run on.
func byNode(_ string, node string) string { return node }

// seenBy records, per node, the pods its handler's latest snapshot held.
type seenBy struct {
	m watchable.Map[string, []string]
}

func (s *seenBy) handler(ctx context.Context, node string, updates <-chan watchable.Snapshot[string, string]) error {
	for snap := range updates {
		pods := slices.Sorted(snap.State.Keys())
		s.m.Store(node, pods)
	}
	return nil // the subscription closes when ctx ends
}

func (s *seenBy) wait(t *testing.T, want map[string][]string) {
	t.Helper()
	testrun.State(t, s.m.View(), func(st watchable.State[string, []string]) string {
		if diff := cmp.Diff(want, st.Map()); diff != "" {
			return "what each node's handler sees (-want +got):\n" + diff
		}
		return ""
	})
}

func waitHandlers[P comparable](t *testing.T, f *runner.Fanout[string, string, P], want ...P) {
	t.Helper()
	testrun.State(t, f.Handlers(), func(st watchable.State[P, runner.Status]) string {
		got := slices.Collect(st.Keys())
		if len(got) != len(want) {
			return fmt.Sprintf("handlers for %v, want %v", got, want)
		}
		for _, p := range want {
			if _, ok := st.Get(p); !ok {
				return fmt.Sprintf("handlers for %v, want %v", got, want)
			}
		}
		return ""
	})
}

func TestFanOutFollowsPartitions(t *testing.T) {
	pods := &watchable.Map[string, string]{}
	pods.Store("p1", "a")
	pods.Store("p2", "a")
	pods.Store("p3", "b")
	var seen seenBy
	f := runner.FanOut("pods by node", pods.View(), byNode, seen.handler)
	testrun.Run(t, f)
	testrun.Closed(t, f.Ready(), "fan-out ready")
	seen.wait(t, map[string][]string{"a": {"p1", "p2"}, "b": {"p3"}})

	pods.Store("p2", "b") // moves: leaves a, arrives in b
	seen.wait(t, map[string][]string{"a": {"p1"}, "b": {"p2", "p3"}})

	pods.Delete("p1") // a empties: its handler is stopped
	waitHandlers(t, f, "b")
	starts := f.Starts()

	pods.Store("p4", "a") // and a comes back with a new handler
	seen.wait(t, map[string][]string{"a": {"p4"}, "b": {"p2", "p3"}})
	waitHandlers(t, f, "a", "b")
	if got := f.Starts(); got != starts+1 {
		t.Errorf("%d handler starts after a came back, want %d", got, starts+1)
	}
}

// A handler that fails, or panics, is reported and started again, and
// the other partitions' handlers never notice.
func TestFanOutIsolatesFailures(t *testing.T) {
	pods := &watchable.Map[string, string]{}
	pods.Store("good-1", "good")
	pods.Store("bad-1", "bad")
	var runs atomic.Int32
	var seen seenBy
	handle := func(ctx context.Context, node string, updates <-chan watchable.Snapshot[string, string]) error {
		if node == "bad" {
			switch runs.Add(1) {
			case 1:
				panic("bad node handler")
			case 2:
				return errors.New("bad node handler failed")
			}
		}
		return seen.handler(ctx, node, updates)
	}
	f := runner.FanOut("pods by node", pods.View(), byNode, handle,
		runner.WithBackoff(20*time.Millisecond, 100*time.Millisecond), runner.WithLogger(testrun.Quiet))
	g := testrun.Group(t, f)
	seen.wait(t, map[string][]string{"good": {"good-1"}, "bad": {"bad-1"}})
	if got := runs.Load(); got != 3 {
		t.Errorf("the bad handler ran %d times, want 3", got)
	}
	if got := f.Failures(); got != 2 {
		t.Errorf("%d failures, want 2", got)
	}
	// The good handler ran once, and still follows its partition.
	pods.Store("good-2", "good")
	seen.wait(t, map[string][]string{"good": {"good-1", "good-2"}, "bad": {"bad-1"}})
	if got := f.Starts(); got != 4 {
		t.Errorf("%d handler starts, want 4 (good once, bad three times)", got)
	}
	// Reported while it waited, cleared once it ran again.
	testrun.State(t, g.Status(), func(s watchable.State[string, runner.Status]) string {
		st, _ := s.Get(f.Name())
		if len(st.Problems) > 0 || st.Phase != runner.PhaseReady {
			return fmt.Sprintf("status %+v, want ready without problems", st)
		}
		return ""
	})
}

func TestFanOutReportsFailure(t *testing.T) {
	pods := &watchable.Map[string, string]{}
	pods.Store("bad-1", "bad")
	f := runner.FanOut("pods by node", pods.View(), byNode,
		func(ctx context.Context, node string, _ <-chan watchable.Snapshot[string, string]) error {
			panic("always")
		}, runner.WithBackoff(time.Hour, time.Hour), runner.WithLogger(testrun.Quiet))
	g := testrun.Group(t, f)
	testrun.State(t, g.Status(), func(s watchable.State[string, runner.Status]) string {
		st, _ := s.Get(f.Name())
		if p := st.Problems["partition bad"]; !strings.Contains(p, "always") {
			return fmt.Sprintf("status %+v, want the panic reported under \"partition bad\"", st)
		}
		return ""
	})
	testrun.State(t, f.Handlers(), func(s watchable.State[string, runner.Status]) string {
		if st, _ := s.Get("bad"); st.Phase != runner.PhaseFailed {
			return fmt.Sprintf("handler of bad: %+v, want failed", st)
		}
		return ""
	})
	// Its partition empties: the problem goes with it.
	pods.Delete("bad-1")
	waitHandlers[string](t, f)
	testrun.State(t, g.Status(), func(s watchable.State[string, runner.Status]) string {
		if st, _ := s.Get(f.Name()); len(st.Problems) > 0 {
			return fmt.Sprintf("status %+v, want no problem", st)
		}
		return ""
	})
}

// A handler that returns nil keeps its partition: it is not started again.
func TestFanOutHandlerDone(t *testing.T) {
	pods := &watchable.Map[string, string]{}
	pods.Store("p1", "a")
	f := runner.FanOut("pods by node", pods.View(), byNode,
		func(context.Context, string, <-chan watchable.Snapshot[string, string]) error { return nil })
	testrun.Run(t, f)
	testrun.State(t, f.Handlers(), func(s watchable.State[string, runner.Status]) string {
		if st, _ := s.Get("a"); st.Phase != runner.PhaseStopped {
			return fmt.Sprintf("handler of a: %+v, want stopped", st)
		}
		return ""
	})
	pods.Store("p2", "a")
	pods.Store("p3", "b")
	waitHandlers(t, f, "a", "b")
	testrun.State(t, f.Handlers(), func(s watchable.State[string, runner.Status]) string {
		if st, _ := s.Get("b"); st.Phase != runner.PhaseStopped {
			return fmt.Sprintf("handler of b: %+v, want stopped", st)
		}
		return ""
	})
	if got := f.Starts(); got != 2 {
		t.Errorf("%d starts, want 2", got)
	}
}

func TestFanOutWaitsForInitializedItems(t *testing.T) {
	pods := &watchable.Map[string, string]{}
	loaded := pods.RegisterInitializer("test")
	pods.Store("p1", "a")
	first := make(chan []string, 1)
	f := runner.FanOut("pods by node", pods.View(), byNode,
		func(ctx context.Context, _ string, updates <-chan watchable.Snapshot[string, string]) error {
			snap := <-updates
			first <- slices.Sorted(snap.State.Keys())
			<-ctx.Done()
			return nil
		})
	testrun.Run(t, f)
	pods.Store("p2", "a")
	select {
	case <-f.Ready():
		t.Fatal("ready before its input is initialized")
	default:
	}
	loaded()
	testrun.Closed(t, f.Ready(), "fan-out ready")
	// The handler's first snapshot held the whole partition.
	if got := <-first; !slices.Equal(got, []string{"p1", "p2"}) {
		t.Errorf("first snapshot %v, want [p1 p2]", got)
	}
}

// BenchmarkFanOutWrite measures a write to a map of 10,000 pods fanned out
// to 1 and to 1,000 per-node handlers (each reading its partition): the
// write costs the same, since only the written pod's partition hears of it.
// "none" is the map without a fan-out, for reference.
func BenchmarkFanOutWrite(b *testing.B) {
	const pods = 10000
	for _, nodes := range []int{0, 1, 1000} {
		name := fmt.Sprintf("partitions=%d", nodes)
		if nodes == 0 {
			name = "partitions=none"
		}
		b.Run(name, func(b *testing.B) {
			m := &watchable.Map[int, [2]int]{} // pod -> {node, generation}
			for i := range pods {
				m.Store(i, [2]int{i % max(nodes, 1), 0})
			}
			if nodes > 0 {
				f := runner.FanOut("bench", m.View(), func(_ int, v [2]int) int { return v[0] },
					func(ctx context.Context, _ int, updates <-chan watchable.Snapshot[int, [2]int]) error {
						for range updates {
						}
						return nil
					})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error)
				go func() { done <- f.Run(ctx) }()
				defer func() { cancel(); <-done }()
				<-f.Ready()
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				pod := i % pods
				m.Store(pod, [2]int{pod % max(nodes, 1), i})
				i++
			}
		})
	}
}
