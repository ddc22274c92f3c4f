package message_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/watchable"
)

func TestHandleLazilySeesEveryKindOfChange(t *testing.T) {
	seesEveryKindOfChange(t, func(ctx context.Context, m *watchable.Map[string, int], r *recorder) {
		message.HandleLazily(ctx, meta, m.View(), r.update)
	})
}

// TestHandleLazilyClaimsTheNetChange holds the handler while the map
// changes many times, and checks that the loop then handles the net change
// of each key once, and nothing for a key changed back or added and
// removed again.
func TestHandleLazilyClaimsTheNetChange(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2, "c": 3})
	r := &recorder{t: t, calls: make(chan string)} // unbuffered: the handler waits for us
	done := goHandle(func() { message.HandleLazily(ctx, meta, m.View(), r.update) })

	var first []string
	first = append(first, receive(t, r.calls)) // the loop is now inside the handler
	for i := range 1000 {
		m.Store("a", 100+i)
		m.Store("b", i) // ends at 999
		m.Store("x", i)
		m.Delete("x")
	}
	m.Store("b", 2) // changed back
	m.Delete("c")
	first = append(first, receive(t, r.calls), receive(t, r.calls))
	slices.Sort(first)
	if diff := cmp.Diff([]string{"a=1", "b=2", "c=3"}, first); diff != "" {
		t.Errorf("initial contents handled (-want +got):\n%s", diff)
	}
	later := []string{receive(t, r.calls), receive(t, r.calls)}
	slices.Sort(later)
	if diff := cmp.Diff([]string{"-c", "a=1099"}, later); diff != "" {
		t.Errorf("net change handled (-want +got):\n%s", diff)
	}
	m.Store("d", 4)
	if got := receive(t, r.calls); got != "d=4" {
		t.Errorf("handled %q, want d=4", got)
	}
	cancel()
	waitDone(t, done, "the loop to return after cancel")
}

func TestHandleLazilySurvivesFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2, "c": 3})
	reg := prometheus.NewRegistry()
	metrics, err := message.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer // written by the loop, read once it has returned
	r := &recorder{t: t, calls: make(chan string, 10), errs: set([]string{"b=2"}), panics: set([]string{"a=1"})}
	done := goHandle(func() {
		message.HandleLazily(ctx, meta, m.View(), r.update,
			message.WithMetrics(metrics), message.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	})
	for range 3 {
		receive(t, r.calls)
	}
	m.Store("d", 4)
	if got := receive(t, r.calls); got != "d=4" {
		t.Errorf("after the failures, handled %q, want d=4", got)
	}
	cancel()
	waitDone(t, done, "the loop to return after cancel")

	want := map[string]float64{
		"switchyard_message_updates_total":            4,
		"switchyard_message_handler_errors_total":     1,
		"switchyard_message_handler_panics_total":     1,
		"switchyard_message_handler_duration_seconds": 4,
		"switchyard_message_snapshot_updates":         2,
	}
	if diff := cmp.Diff(want, handlerMetrics(t, reg)); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	log := logs.String()
	if !strings.Contains(log, "message handler panicked") || !strings.Contains(log, "cannot handle a=1") || !strings.Contains(log, "goroutine ") {
		t.Errorf("log does not report the panic with its stack:\n%s", log)
	}
	if !strings.Contains(log, "message handler failed") || !strings.Contains(log, "cannot handle b=2") {
		t.Errorf("log does not report the error:\n%s", log)
	}
}

func TestHandleLazilyReturnsWhenCtxIsDone(t *testing.T) {
	var m watchable.Map[string, int]
	m.Store("a", 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &recorder{t: t}
	message.HandleLazily(ctx, meta, m.View(), r.update) // returns at once
	if got := r.got(); len(got) != 0 {
		t.Errorf("handled %v with a done ctx", got)
	}
	if n := m.Notifiers(); n != 0 {
		t.Errorf("%d notifiers left registered", n)
	}
}

func TestHandleKeysLazilySeesEveryKindOfChange(t *testing.T) {
	seesEveryKindOfChange(t, func(ctx context.Context, m *watchable.Map[string, int], r *recorder) {
		message.HandleKeysLazily(ctx, meta, m.View(), []string{"a", "b"}, r.update)
	})
}

// TestHandleKeysLazilySeesOnlyItsKeys holds the handler while the map
// changes its keys and others, and checks that the loop then handles the net
// change of its own keys only, in the order of the keys.
func TestHandleKeysLazilySeesOnlyItsKeys(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 1, "b": 2, "c": 3, "x": 0})
	r := &recorder{t: t, calls: make(chan string)} // unbuffered: the handler waits for us
	keys := []string{"c", "a", "z"}
	done := goHandle(func() { message.HandleKeysLazily(ctx, meta, m.View(), keys, r.update) })

	first := []string{receive(t, r.calls)} // the loop is now inside the handler
	keys[0] = "b"                          // the loop keeps its own copy of keys
	for i := range 100 {
		m.Store("a", 100+i)
		m.Store("b", i)
		m.Store("x", i)
		m.Store("z", i)
		m.Delete("z")
	}
	m.Delete("c")
	first = append(first, receive(t, r.calls))
	if diff := cmp.Diff([]string{"c=3", "a=1"}, first); diff != "" {
		t.Errorf("initial contents handled (-want +got):\n%s", diff)
	}
	later := []string{receive(t, r.calls), receive(t, r.calls)}
	if diff := cmp.Diff([]string{"-c", "a=199"}, later); diff != "" {
		t.Errorf("net change handled (-want +got):\n%s", diff)
	}
	m.Store("b", 7)
	m.Store("z", 26)
	if got := receive(t, r.calls); got != "z=26" {
		t.Errorf("handled %q, want z=26", got)
	}
	cancel()
	waitDone(t, done, "the loop to return after cancel")
	if n := m.Notifiers(); n != 0 {
		// Removed by a goroutine context.AfterFunc starts: give it a moment.
		deadline := time.Now().Add(time.Minute)
		for m.Notifiers() != 0 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if n := m.Notifiers(); n != 0 {
			t.Errorf("%d notifiers left registered a minute after cancel", n)
		}
	}
}

func TestHandlePartitionLazilySeesEveryKindOfChange(t *testing.T) {
	seesEveryKindOfChange(t, func(ctx context.Context, m *watchable.Map[string, int], r *recorder) {
		parts := watchable.PartitionBy(ctx, m.View(), func(string, int) string { return "all" })
		message.HandlePartitionLazily(ctx, meta, parts, "all", r.update)
	})
}

// TestHandlePartitionLazilySeesOnlyItsPartition holds the handler while
// entries change, enter and leave its partition and others, and checks that
// the loop then handles the partition's net change only: an entry that
// left as a delete with the value handled last, one that entered as a
// store.
func TestHandlePartitionLazilySeesOnlyItsPartition(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var m watchable.Map[string, int]
	m.Replace(map[string]int{"a": 101, "b": 102, "c": 203, "x": 0})
	hundreds := func(_ string, v int) int { return v / 100 }
	parts := watchable.PartitionBy(ctx, m.View(), hundreds)
	r := &recorder{t: t, calls: make(chan string)} // unbuffered: the handler waits for us
	// Deletes are told with their value: it must be the one handled last.
	withDeleted := func(_ context.Context, u watchable.Update[string, int]) error {
		if u.Delete {
			return r.handle(fmt.Sprintf("-%s(%d)", u.Key, u.Value))
		}
		return r.handle(fmtUpdate(u))
	}
	done := goHandle(func() { message.HandlePartitionLazily(ctx, meta, parts, 1, withDeleted) })

	first := []string{receive(t, r.calls)} // the loop is now inside the handler
	for i := range 50 {
		m.Store("a", 110+i) // stays in 1, ends at 159
		m.Store("x", i)     // partition 0
		m.Store("c", 204+i) // partition 2
		m.Store("z", 150)   // enters 1 and leaves again
		m.Delete("z")
	}
	m.Store("b", 300) // leaves 1
	m.Store("c", 199) // enters 1
	first = append(first, receive(t, r.calls))
	slices.Sort(first)
	if diff := cmp.Diff([]string{"a=101", "b=102"}, first); diff != "" {
		t.Errorf("initial contents handled (-want +got):\n%s", diff)
	}
	later := []string{receive(t, r.calls), receive(t, r.calls), receive(t, r.calls)}
	slices.Sort(later)
	if diff := cmp.Diff([]string{"-b(102)", "a=159", "c=199"}, later); diff != "" {
		t.Errorf("net change handled (-want +got):\n%s", diff)
	}
	m.Store("x", 5) // elsewhere: nothing to handle
	m.Store("d", 104)
	if got := receive(t, r.calls); got != "d=104" {
		t.Errorf("handled %q, want d=104", got)
	}
	cancel()
	waitDone(t, done, "the loop to return after cancel")
}
