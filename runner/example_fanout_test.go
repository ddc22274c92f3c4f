package runner_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// One handler per node, each seeing only the pods of its node.
func ExampleFanOut() {
	var pods watchable.Map[string, string] // pod -> node
	pods.Store("web-1", "node-a")
	pods.Store("web-2", "node-b")
	pods.Store("db-1", "node-a")

	seen := make(chan string, 2)
	byNode := func(pod, node string) string { return node }
	perNode := runner.FanOut("pods by node", pods.View(), byNode,
		func(ctx context.Context, node string, updates <-chan watchable.Snapshot[string, string]) error {
			first := <-updates
			seen <- fmt.Sprint(node, " ", slices.Sorted(first.State.Keys()))
			<-ctx.Done()
			return nil
		})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- perNode.Run(ctx) }()
	lines := []string{<-seen, <-seen}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	cancel()
	<-done
	// Output:
	// node-a [db-1 web-1]
	// node-b [web-2]
}
