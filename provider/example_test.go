package provider_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/provider"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// EnvProvider writes the environment variables whose names start with Prefix
// into Out (without the prefix), and looks again every Interval.
type EnvProvider struct {
	Prefix   string
	Interval time.Duration
	Out      *watchable.Map[string, string]

	readyOnce sync.Once
	ready     chan struct{}
}

// The provider is a runner, and says when its first contents are published.
var (
	_ provider.Provider = (*EnvProvider)(nil)
	_ runner.Readier    = (*EnvProvider)(nil)
)

func NewEnvProvider(prefix string, interval time.Duration, out *watchable.Map[string, string]) *EnvProvider {
	return &EnvProvider{Prefix: prefix, Interval: interval, Out: out, ready: make(chan struct{})}
}

func (p *EnvProvider) Name() string { return "env:" + p.Prefix }

func (p *EnvProvider) Ready() <-chan struct{} { return p.ready }

func (p *EnvProvider) Run(ctx context.Context) error {
	tick := time.NewTicker(p.Interval)
	defer tick.Stop()
	for {
		vars := make(map[string]string)
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			if name, ok := strings.CutPrefix(k, p.Prefix); ok {
				vars[name] = v
			}
		}
		// Replace makes the map exactly vars: variables that disappeared are
		// deleted, and subscribers hear only about those that changed, all
		// in one snapshot.
		p.Out.Replace(vars)
		p.readyOnce.Do(func() { close(p.ready) })

		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// A provider is a runner that writes the outside world into a map; here, the
// environment variables with a prefix.
func Example() {
	os.Setenv("EXAMPLE_GREETING", "hello")
	defer os.Unsetenv("EXAMPLE_GREETING")

	vars := new(watchable.Map[string, string])
	p := NewEnvProvider("EXAMPLE_", 10*time.Millisecond, vars)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	<-p.Ready()
	fmt.Println(vars.State().Map())

	// Consumers subscribe to the map, never to the environment.
	sub := vars.Subscribe(ctx)
	<-sub
	os.Setenv("EXAMPLE_GREETING", "bonjour")
	for _, u := range (<-sub).Updates {
		fmt.Println(u.Key, "is now", u.Value)
	}

	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// map[GREETING:hello]
	// GREETING is now bonjour
	// Run returned <nil>
}
