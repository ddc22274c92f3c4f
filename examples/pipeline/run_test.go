package main

import (
	"context"
	"testing"
	"time"
)

// readyChan is a runner.Readier that is ready once closed.
type readyChan chan struct{}

func (c readyChan) Ready() <-chan struct{} { return c }

// blockingRunner records that it started and runs until ctx is done.
type blockingRunner struct {
	readyChan
	started chan struct{}
}

func (b *blockingRunner) Name() string { return "blocking" }

func (b *blockingRunner) Run(ctx context.Context) error {
	close(b.started)
	<-ctx.Done()
	return nil
}

func TestStartAfter(t *testing.T) {
	inner := &blockingRunner{readyChan: make(readyChan), started: make(chan struct{})}
	dep1, dep2 := make(readyChan), make(readyChan)
	r := startAfter(inner, dep1, dep2)
	if r.Ready() != inner.Ready() {
		t.Error("startAfter changed the runner's readiness")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	close(dep1)
	select {
	case <-inner.started:
		t.Fatal("started with a dependency not ready")
	case <-time.After(50 * time.Millisecond): // cannot fail spuriously: nothing may start it
	}
	close(dep2)
	select {
	case <-inner.started:
	case <-time.After(30 * time.Second):
		t.Fatal("not started 30s after every dependency was ready")
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}

	// Stopped before its dependencies are ready, it never starts.
	inner = &blockingRunner{readyChan: make(readyChan), started: make(chan struct{})}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := startAfter(inner, make(readyChan)).Run(ctx); err != nil {
		t.Errorf("Run with ctx done: %v", err)
	}
	select {
	case <-inner.started:
		t.Error("started although ctx was done before its dependency was ready")
	default:
	}
}
