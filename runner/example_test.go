package runner_test

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/switchyard-go/switchyard/runner"
)

// Run stops every runner when one fails, and returns that failure with the
// runner's name.
func ExampleRun() {
	server := runner.Func("server", func(ctx context.Context) error {
		<-ctx.Done() // serve until the group stops
		return nil
	})
	loader := runner.Func("loader", func(ctx context.Context) error {
		return errors.New("config.yaml: no such file")
	})

	err := runner.Run(context.Background(), server, loader)
	fmt.Println(err)
	// Output:
	// runner "loader": config.yaml: no such file
}

// A Group publishes the status of its runners in a watchable map, and tells
// when they are all ready.
func ExampleGroup() {
	ctx, cancel := context.WithCancel(context.Background())
	g := runner.NewGroup()
	done := make(chan error)
	go func() {
		done <- g.Run(ctx,
			runner.Func("api", func(ctx context.Context) error { <-ctx.Done(); return nil }),
			runner.Func("metrics", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }),
		)
	}()

	<-g.Ready()
	printStatus(g)
	cancel() // what a signal handler would do
	fmt.Println("run:", <-done)
	printStatus(g)
	// Output:
	// api: ready
	// metrics: ready
	// run: <nil>
	// api: stopped
	// metrics: stopped
}

func printStatus(g *runner.Group) {
	st := g.Status().State()
	for _, name := range slices.Sorted(st.Keys()) {
		s, _ := st.Get(name)
		fmt.Printf("%s: %s\n", name, s.Phase)
	}
}

// cache is a custom Runner that is ready once it has loaded, and reports the
// problems it survives.
type cache struct {
	loaded chan struct{}
}

func (c *cache) Name() string { return "cache" }

// Ready makes cache a runner.Readier: the group is not ready before it.
func (c *cache) Ready() <-chan struct{} { return c.loaded }

func (c *cache) Run(ctx context.Context) error {
	// A failed refresh is not fatal: the cache keeps its last contents and
	// says so in its status.
	runner.HealthOf(ctx).Report("refresh", errors.New("upstream unavailable"))
	close(c.loaded)
	<-ctx.Done()
	return nil
}

// A custom Runner implements Name and Run, and Ready when it has initial
// work to finish.
func Example_customRunner() {
	ctx, cancel := context.WithCancel(context.Background())
	g := runner.NewGroup()
	done := make(chan error)
	go func() { done <- g.Run(ctx, &cache{loaded: make(chan struct{})}) }()

	<-g.Ready()
	cancel()
	<-done
	st, _ := g.Status().Load("cache")
	fmt.Printf("%s, problems: %v\n", st.Phase, st.Problems)
	// Output:
	// stopped, problems: map[refresh:upstream unavailable]
}
