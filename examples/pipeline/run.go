package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// pipeline is the wired program: its maps and its runners.
type pipeline struct {
	cfg config
	out io.Writer // event lines, serialized
	log *slog.Logger

	// The maps the components talk through.
	routes      *watchable.Map[types.NamespacedName, file.Object[Route]]
	directs     *watchable.Map[types.NamespacedName, file.Object[DirectRegistry]]
	table       *watchable.Map[string, *RouteEntry]
	connections *watchable.Map[string, Connection]
	status      *watchable.Map[string, runner.Status]

	registry *registry.Registry
	gateway  *Gateway
	admin    *Admin
	pool     *Pool
	demos    []*DemoBackend
	metrics  *message.Metrics
	group    *runner.Group
	runners  []runner.Runner
	// announced is closed once the banner is printed, so that event lines
	// follow it.
	announced chan struct{}
}

// run runs the pipeline until ctx is done.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	p, err := newPipeline(cfg, stdout)
	if err != nil {
		return err
	}
	return p.run(ctx)
}

func newPipeline(cfg config, stdout io.Writer) (*pipeline, error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	p := &pipeline{
		cfg:         cfg,
		out:         &lockedWriter{w: stdout},
		log:         logger,
		routes:      new(watchable.Map[types.NamespacedName, file.Object[Route]]),
		directs:     new(watchable.Map[types.NamespacedName, file.Object[DirectRegistry]]),
		table:       new(watchable.Map[string, *RouteEntry]),
		connections: new(watchable.Map[string, Connection]),
		status:      new(watchable.Map[string, runner.Status]),
		announced:   make(chan struct{}),
	}

	reg, err := registry.New(registry.Options{
		Token:          cfg.Token,
		DiscoveryToken: cfg.DiscoveryToken,
		Lease:          cfg.Lease,
		Logger:         logger.With("runner", "registry"),
	})
	if err != nil {
		return nil, fmt.Errorf("create registry: %w", err)
	}
	p.registry = reg

	source, err := p.configSource()
	if err != nil {
		return nil, err
	}

	routing := startAfter(translator.Compute("routing", p.table, func(ctx context.Context) (map[string]*RouteEntry, error) {
		table, problems := computeRouteTable(p.routes.State(), p.directs.State(), reg.Snapshots().State())
		runner.Report(ctx, problems)
		return table, nil
	}, p.routes, p.directs, reg.Snapshots()), source, reg)

	p.pool = &Pool{Instances: reg.Instances(), Connections: p.connections, Logger: logger.With("runner", "pool")}
	p.gateway = &Gateway{
		Addr:   cfg.GatewayAddr,
		Table:  p.table,
		Wait:   cfg.Wait,
		Pool:   p.pool,
		Logger: logger.With("runner", "gateway"),
	}

	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	msgMetrics, err := message.NewMetrics(metrics)
	if err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	p.metrics = msgMetrics
	p.pool.Metrics = msgMetrics
	p.gateway.Metrics = msgMetrics

	p.admin = &Admin{
		Addr:     cfg.ControlAddr,
		Status:   p.status,
		Gatherer: metrics,
		Maps: []observedMap{
			observe("routes", p.routes, routeName),
			observe("directRegistries", p.directs, routeName),
			observe("instances", reg.Instances(), func(k string) string { return k }),
			observe("discovery", reg.Snapshots(), func(k registry.DiscoveryKey) string {
				return k.ServiceID + "|" + k.EnvTag + "|" + k.Protocol
			}),
			observe("routeTable", p.table, func(k string) string { return k }),
			observe("connections", p.connections, func(k string) string { return k }),
			observe("runners", p.status, func(k string) string { return k }),
		},
		Mount: func(mux *http.ServeMux) {
			h := reg.Handler()
			mux.Handle("/v1/", h)
			mux.Handle("/ws/", h)
		},
		Logger: logger.With("runner", "admin"),
	}
	for _, m := range p.admin.Maps {
		if _, err := msgMetrics.ObserveMap(m.name(), m.stats()); err != nil {
			return nil, fmt.Errorf("observe map %s: %w", m.name(), err)
		}
	}

	p.group = runner.NewGroup(runner.Options{Logger: logger, Grace: 4 * time.Second, Status: p.status})
	// The gateway, too, waits for the first route table with routes in it,
	// so that it is not ready while it would still answer 404 to all.
	p.runners = []runner.Runner{source, reg, routing, p.pool, startAfter(p.gateway, routing), p.admin,
		runner.Func("events", p.events), runner.Func("announce", p.announce)}
	if cfg.Demo {
		for i := range 2 {
			d := &DemoBackend{
				RunnerName: fmt.Sprintf("demo-petstore-%d", i+1),
				ServiceID:  "petstore",
				ControlURL: func() string { return "http://" + p.admin.BoundAddr() },
				Token:      cfg.Token,
				Logger:     logger.With("runner", fmt.Sprintf("demo-petstore-%d", i+1)),
			}
			p.demos = append(p.demos, d)
			p.runners = append(p.runners, d)
		}
	}
	return p, nil
}

// configSource returns the file provider that fills the routes and
// directs maps from the -config directory, or once from the embedded
// configuration.
func (p *pipeline) configSource() (configProvider, error) {
	// The provider adds its own "runner" key to what it logs.
	logs := file.WithLogger(p.log)
	var fp *file.Provider
	if dir := p.cfg.ConfigDir; dir == "" {
		fp = file.NewFS(embeddedConfig, "config", logs)
	} else {
		fp = file.New(dir, logs)
	}
	file.Register(fp, "Route", p.routes)
	file.Register(fp, "DirectRegistry", p.directs)
	return configProvider{fp}, nil
}

// configProvider is the file provider under the stable runner name
// "config": /readyz and /debug/runners then read the same whether the
// configuration is embedded or comes from a directory.
type configProvider struct{ *file.Provider }

// Name implements runner.Runner.
func (configProvider) Name() string { return "config" }

// startAfter returns r (which must be a runner.Readier), made to start
// only once every one of deps is ready. The routing translator is ready after its first result; without
// this, that result could be computed from maps the file provider has not
// filled yet, and the gateway, /readyz and the banner would call the
// pipeline ready with an empty route table.
func startAfter(r runner.Runner, deps ...runner.Readier) readyRunner {
	return afterRunner{readyRunner: r.(readyRunner), deps: deps}
}

type readyRunner interface {
	runner.Runner
	runner.Readier
}

type afterRunner struct {
	readyRunner
	deps []runner.Readier
}

func (a afterRunner) Run(ctx context.Context) error {
	for _, d := range a.deps {
		select {
		case <-d.Ready():
		case <-ctx.Done():
			return nil
		}
	}
	return a.readyRunner.Run(ctx)
}

// run runs every runner until ctx is done or one fails.
func (p *pipeline) run(ctx context.Context) error {
	defer func() {
		p.routes.Close()
		p.directs.Close()
		p.table.Close()
		p.connections.Close()
	}()
	return p.group.Run(ctx, p.runners...) // main prefixes "pipeline:"
}

//go:embed config/*.yaml
var embeddedConfig embed.FS
