package provider_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/provider"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// EnvPorts is a provider: it writes the environment variables named with a
// prefix followed by a service name into a map of service to port, and
// reads them again every interval.
type EnvPorts struct {
	prefix   string
	interval time.Duration
	ports    watchable.Map[string, int]
	loaded   func() // the initializer registered on ports
}

// EnvPorts is a runner, and says when its map is initialized.
var (
	_ provider.Provider = (*EnvPorts)(nil)
	_ runner.Readier    = (*EnvPorts)(nil)
)

// EnvPortsOption configures an EnvPorts.
type EnvPortsOption func(*EnvPorts)

// WithInterval sets how often the environment is read again (default 1s).
func WithInterval(d time.Duration) EnvPortsOption {
	return func(p *EnvPorts) { p.interval = d }
}

// NewEnvPorts returns a provider of the variables whose names start with
// prefix. What it cannot work without is an argument; the rest, options.
func NewEnvPorts(prefix string, opts ...EnvPortsOption) *EnvPorts {
	p := &EnvPorts{prefix: prefix, interval: time.Second}
	for _, o := range opts {
		o(p)
	}
	// The map is not initialized until Run has published the first reading:
	// consumers wait for it rather than act on an empty map.
	p.loaded = p.ports.RegisterInitializer(p.Name())
	return p
}

// Name says what is watched.
func (p *EnvPorts) Name() string { return "env:" + p.prefix }

// Ports returns the map of service to port. p is its only writer, so
// everyone else gets a read-only view.
func (p *EnvPorts) Ports() watchable.View[string, int] { return p.ports.View() }

// Ready is derived from the data: it is the map's initialization.
func (p *EnvPorts) Ready() <-chan struct{} { return p.ports.Initialized() }

// Run reads the environment until ctx is done. A bad value keeps the last
// good port and is reported under the variable's name, so that fixing one
// variable clears only its own problem.
func (p *EnvPorts) Run(ctx context.Context) error {
	health := runner.HealthOf(ctx)
	reported := make(map[string]bool) // variables with a problem reported
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		last := p.ports.State()
		ports := make(map[string]int)
		problems := make(map[string]error)
		for _, kv := range os.Environ() {
			name, value, _ := strings.Cut(kv, "=")
			service, ok := strings.CutPrefix(name, p.prefix)
			if !ok {
				continue
			}
			port, err := strconv.Atoi(value)
			if err != nil || port < 1 || port > 65535 {
				problems[name] = fmt.Errorf("%s=%q is not a port", name, value)
				if old, ok := last.Get(service); ok {
					ports[service] = old
				}
				continue
			}
			ports[service] = port
		}
		// Replace makes the map exactly ports: services that disappeared
		// are deleted, and subscribers hear only about what changed, all in
		// one snapshot.
		p.ports.Replace(ports)
		p.loaded() // only the first call counts

		for name := range reported {
			if problems[name] == nil {
				health.Report(name, nil)
				delete(reported, name)
			}
		}
		for name, err := range problems {
			health.Report(name, err)
			reported[name] = true
		}

		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// A provider is a runner that writes the outside world into a map it owns;
// here, ports from the environment.
func Example() {
	os.Setenv("EXAMPLE_PORT_web", "8080")
	os.Setenv("EXAMPLE_PORT_api", "9090")
	defer os.Unsetenv("EXAMPLE_PORT_web")
	defer os.Unsetenv("EXAMPLE_PORT_api")

	p := NewEnvPorts("EXAMPLE_PORT_", WithInterval(10*time.Millisecond))
	ports := p.Ports()

	// The group would log each problem reported; this example prints them.
	g := runner.NewGroup(runner.WithLogger(slog.New(slog.DiscardHandler)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx, p) }()

	// Consumers wait for the data, not for the provider.
	<-ports.Initialized()
	fmt.Println(ports.State().Map())

	// A bad value is a problem in the provider's status; the map keeps the
	// last good port.
	os.Setenv("EXAMPLE_PORT_api", "ninety")
	st := waitStatus(ctx, g, p.Name(), func(st runner.Status) bool { return len(st.Problems) > 0 })
	fmt.Println(st.Problems["EXAMPLE_PORT_api"])
	fmt.Println(ports.State().Map())

	// Fixing it clears the problem.
	os.Setenv("EXAMPLE_PORT_api", "9091")
	waitStatus(ctx, g, p.Name(), func(st runner.Status) bool { return len(st.Problems) == 0 })
	fmt.Println(ports.State().Map())

	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// map[api:9090 web:8080]
	// EXAMPLE_PORT_api="ninety" is not a port
	// map[api:9090 web:8080]
	// map[api:9091 web:8080]
	// Run returned <nil>
}

// waitStatus waits until the status of runner name in g satisfies cond.
func waitStatus(ctx context.Context, g *runner.Group, name string, cond func(runner.Status) bool) runner.Status {
	for snap := range g.Status().Subscribe(ctx) {
		if st, _ := snap.State.Get(name); cond(st) {
			return st
		}
	}
	return runner.Status{}
}
