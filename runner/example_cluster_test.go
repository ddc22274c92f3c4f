package runner_test

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// LeaderOnly runs a runner in one replica at a time. Here two replicas
// share an engine kept in memory; a real program gets its Elector from an
// engine (etcd/cluster.NewElector, or its Kubernetes counterpart), and
// nothing else changes.
func ExampleLeaderOnly() {
	engine := newMemEngine()
	leading := make(chan string)
	job := func(replica string) runner.Runner {
		return runner.Func("status-writer", func(ctx context.Context) error {
			term, _ := runner.TermOf(ctx) // its Token fences the writes
			leading <- fmt.Sprintf("%s leads, token %d", replica, term.Token())
			<-ctx.Done()
			return nil
		})
	}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	doneA, doneB := make(chan error), make(chan error)
	go func() { doneA <- runner.Run(ctxA, runner.LeaderOnly(engine.replica("a"), job("a"))) }()
	fmt.Println(<-leading)
	go func() { doneB <- runner.Run(ctxB, runner.LeaderOnly(engine.replica("b"), job("b"))) }()

	stopA() // a resigns as it stops: b leads at once
	<-doneA
	fmt.Println(<-leading)
	stopB()
	<-doneB
	// Output:
	// a leads, token 1
	// b leads, token 4
}

// Shard spreads the items of a map over the replicas that run it, and runs
// a handler for each item a replica holds. One replica holds them all here.
func ExampleShard() {
	engine := newMemEngine()
	bases := new(watchable.Map[string, string]) // base name -> address
	bases.Store("base-1", "10.0.0.1:1200")
	bases.Store("base-2", "10.0.0.2:1200")
	bases.Store("base-3", "10.0.0.3:1200")

	var mu sync.Mutex
	var handled []string
	all := make(chan struct{})
	manage := func(ctx context.Context, base string) error {
		mu.Lock()
		handled = append(handled, base)
		if len(handled) == 3 {
			close(all)
		}
		mu.Unlock()
		<-ctx.Done() // manage the base until the claim ends
		return nil
	}
	s := runner.Shard("bases", bases.View(), func(name string) string { return name }, engine.replica("a"), manage)

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- runner.Run(ctx, s) }()
	<-all
	fmt.Println("handled:", slices.Sorted(slices.Values(handled)))
	fmt.Println("owned:", s.Owned().Len())
	stop()
	<-done
	// Output:
	// handled: [base-1 base-2 base-3]
	// owned: 3
}
