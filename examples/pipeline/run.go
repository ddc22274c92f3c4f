package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/admin"
	"github.com/switchyard-go/switchyard/gateway"
	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// Shares of the process's connection budget (httpserver.
// ProcessMaxConnections) per listener: a flood of clients on the gateway
// leaves room on the control plane, and neither can take the admin
// listener's few.
const (
	gatewayShare   = 0.7
	controlShare   = 0.2
	adminMaxConns  = 64
	demoMaxConns   = 256
	minListenConns = 16
)

// connectionShare returns a listener's share of the process's budget.
func connectionShare(share float64) int {
	return max(int(float64(httpserver.ProcessMaxConnections())*share), minListenConns)
}

// pipeline is the wired program: its components and the maps they talk
// through. Each component creates the maps it writes and hands out
// read-only views of them.
type pipeline struct {
	cfg config
	out io.Writer // event lines, serialized
	log *slog.Logger

	routes  watchable.View[types.NamespacedName, file.Object[Route]]          // written by the file provider
	directs watchable.View[types.NamespacedName, file.Object[DirectRegistry]] // written by the file provider
	table   watchable.View[string, *RouteEntry]                               // written by the routing translator

	config *file.Provider
	// Exactly one of registry and remote is set: the registry this
	// pipeline runs, or the client of the remote controller it uses
	// (-registry-url).
	registry *registry.Registry
	remote   *client.Client
	// discovery is the registry's Snapshots or the remote client's mirror
	// of them: what the routing and the pool follow.
	discovery watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot]
	routing   *translator.Computation[string, *RouteEntry]
	pool      *Pool
	gateway   *Gateway
	control   *httpserver.Server // the control plane: the registry's API (unless remote), health
	admin     *httpserver.Server // operators only: maps, runners, metrics, profiles
	demos     []*DemoBackend
	metrics   *message.Metrics
	group     *runner.Group
	etcd      *clientv3.Client // with -etcd: closed once the runners return
	runners   []runner.Runner
	// announced is closed once the banner is printed, so that event lines
	// follow it.
	announced chan struct{}
	// eventsDone is closed once the events runner has returned, so that
	// the shutdown line follows every event line.
	eventsDone chan struct{}
	lines      instanceLines
}

// run runs the pipeline until ctx is done.
func run(ctx context.Context, cfg config, stdout io.Writer) error {
	p, err := newPipeline(cfg, stdout)
	if err != nil {
		return err
	}
	return p.run(ctx)
}

func newPipeline(cfg config, stdout io.Writer) (_ *pipeline, err error) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	p := &pipeline{
		cfg: cfg,
		out: &lockedWriter{w: stdout},
		log: logger,
		// The servers are runner.Drainers: the group waits for their
		// shutdown grace, longer than its own.
		group:      runner.NewGroup(runner.WithLogger(logger)),
		announced:  make(chan struct{}),
		eventsDone: make(chan struct{}),
	}

	defer func() {
		if err != nil {
			p.close()
		}
	}()

	p.config = p.newConfigProvider()
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if p.metrics, err = message.NewMetrics(metrics); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	requestMetrics, err := gateway.NewMetrics(metrics)
	if err != nil {
		return nil, err
	}
	var registryAPI http.Handler // served on the control address, unless remote
	if cfg.RegistryURL == "" {
		regOpts := []registry.Option{
			registry.WithToken(cfg.Token),
			registry.WithDiscoveryToken(cfg.DiscoveryToken),
			registry.WithLease(cfg.Lease),
			registry.WithLogger(logger.With("runner", "registry")),
			registry.WithLimits(cfg.registryLimits),
			// Beyond the control plane's own address, which the registry knows,
			// no instance may be the gateway (its requests would go round in a
			// loop) nor the admin listener.
			registry.WithAddressPolicy(registry.AddressPolicy{DenyEndpoints: endpoints(cfg.GatewayAddr, cfg.AdminAddr)}),
		}
		if len(cfg.Etcd) > 0 {
			store, etcdClient, err := newEtcdStore(cfg.Etcd, cfg.EtcdPrefix)
			if err != nil {
				return nil, err
			}
			p.etcd = etcdClient
			regOpts = append(regOpts, registry.WithStore(store))
		}
		reg, err := registry.New(regOpts...)
		if err != nil {
			return nil, fmt.Errorf("create registry: %w", err)
		}
		if err := registerRegistryCounters(metrics, reg); err != nil {
			return nil, err
		}
		p.registry, p.discovery, registryAPI = reg, reg.Snapshots(), reg.Handler()
	} else {
		if p.remote, err = p.newRemote(metrics); err != nil {
			return nil, err
		}
		p.discovery = p.remote.Snapshots()
	}
	p.routing = newRouting(p.routes, p.directs, p.discovery, logger)
	p.table = p.routing.Output()

	serverOpts := func(maxConns int) []httpserver.Option {
		return append([]httpserver.Option{
			httpserver.WithLogger(logger),
			httpserver.WithShutdownGrace(cfg.ShutdownGrace),
			httpserver.WithMaxConnections(maxConns),
		}, cfg.serverOptions...)
	}
	p.pool = newPool(p.discovery, logger, p.metrics)
	p.gateway = &Gateway{
		ListenAddr:     cfg.GatewayAddr,
		Table:          p.table,
		Wait:           cfg.Wait,
		Pool:           p.pool,
		Logger:         logger,
		Metrics:        p.metrics,
		RequestMetrics: requestMetrics,
		ServerOptions:  serverOpts(connectionShare(gatewayShare)),
		Own:            func() []string { return []string{p.control.Addr(), p.admin.Addr(), p.gateway.Addr()} },
	}

	maps := admin.NewMaps()
	err = errors.Join(
		show(maps, p.metrics, "routes", p.routes, routeName),
		show(maps, p.metrics, "directRegistries", p.directs, routeName),
		show(maps, p.metrics, "discovery", p.discovery, func(k registry.DiscoveryKey) string {
			return k.ServiceID + "|" + k.EnvTag + "|" + k.Protocol
		}),
		show(maps, p.metrics, "routeTable", p.table, identity),
		show(maps, p.metrics, "connections", p.pool.Connections(), identity),
		show(maps, p.metrics, "runners", p.group.Status(), identity),
	)
	if p.registry != nil {
		err = errors.Join(err, show(maps, p.metrics, "instances", p.registry.Instances(), identity))
	}
	if err != nil {
		return nil, err
	}
	p.control = httpserver.New("control", cfg.ControlAddr,
		controlHandler(p.group.Status(), registryAPI), serverOpts(connectionShare(controlShare))...)
	p.admin = httpserver.New("admin", cfg.AdminAddr,
		adminHandler(p.group.Status(), maps, metrics), serverOpts(adminMaxConns)...)

	// No runner is started after another: each waits for the data it
	// needs (the routing translator for its inputs to be initialized, the
	// gateway for the route table, a demo backend for the address of the
	// registry's API, the remote client for the gateway's address and the
	// routes' services), so the order below is only that of the status
	// pages.
	p.runners = []runner.Runner{p.config}
	if p.registry != nil {
		p.runners = append(p.runners, p.registry)
	} else {
		p.runners = append(p.runners, p.remote, runner.Func("follow", p.follow))
	}
	p.runners = append(p.runners, p.routing, p.pool, p.gateway, p.control, p.admin,
		runner.Func("events", p.events), runner.Func("announce", p.announce))
	if cfg.Demo {
		for i := range 2 {
			d := &DemoBackend{
				RunnerName:             fmt.Sprintf("demo-petstore-%d", i+1),
				ServiceID:              "petstore",
				ControllerURL:          cfg.RegistryURL,
				Control:                p.control,
				Token:                  cfg.Token,
				StartOnRegistryFailure: cfg.StartOnRegistryFailure,
				Logger:                 logger,
			}
			p.demos = append(p.demos, d)
			p.runners = append(p.runners, d)
		}
	}
	return p, nil
}

// newConfigProvider returns the file provider that reads the Route and
// DirectRegistry documents, from the -config directory (watched), or once
// from the embedded configuration, and sets p.routes and p.directs to its
// maps. Its runner name is "config" wherever the files come from, so that
// /readyz and /debug/runners read the same.
func (p *pipeline) newConfigProvider() *file.Provider {
	opts := []file.Option{file.WithName("config"), file.WithLogger(p.log)} // it adds its "runner" key
	var fp *file.Provider
	switch {
	case p.cfg.configFS != nil:
		fp = file.NewFS(p.cfg.configFS, ".", opts...)
	case p.cfg.ConfigDir == "":
		fp = file.NewFS(embeddedConfig, "config", opts...)
	default:
		fp = file.New(p.cfg.ConfigDir, opts...)
	}
	p.routes = file.Register[file.Object[Route]](fp, "Route")
	p.directs = file.Register[file.Object[DirectRegistry]](fp, "DirectRegistry")
	return fp
}

// newRouting returns the translator that keeps the route table resolved
// from the routes, the direct registries and the discovery snapshots.
//
// All three are its inputs, so Compute runs the resolution only once each
// is initialized (the file provider has read the configuration, the
// registry runs): the first table it publishes is complete, and the
// gateway, /readyz and the banner, which wait for the table to be
// initialized, never take an empty or half-resolved table for the real one.
func newRouting(
	routes watchable.View[types.NamespacedName, file.Object[Route]],
	directs watchable.View[types.NamespacedName, file.Object[DirectRegistry]],
	discovery watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot],
	logger *slog.Logger,
) *translator.Computation[string, *RouteEntry] {
	return translator.Compute("routing", []translator.Input{routes, directs, discovery},
		func(ctx context.Context) (map[string]*RouteEntry, error) {
			table, problems := computeRouteTable(routes.State(), directs.State(), discovery.State())
			// What the table works around (invalid routes, conflicting
			// direct URLs) is a problem of the configuration, reported
			// under a key of its own until it is fixed.
			runner.HealthOf(ctx).Report("routes", problems)
			return table, nil
		}, translator.WithLogger(logger))
}

// show makes m visible on /debug/maps and in the metrics, under name.
func show[K comparable, V any](maps *admin.Maps, metrics *message.Metrics, name string, m watchable.View[K, V], key func(K) string) error {
	admin.AddMap(maps, name, m, key)
	if _, err := metrics.ObserveMap(name, m); err != nil {
		return fmt.Errorf("observe map %s: %w", name, err)
	}
	return nil
}

// endpoints returns the addresses among addrs that name a port, as the
// registry's AddressPolicy takes them; those with port 0 are left out,
// since the port is not known before the server listens.
func endpoints(addrs ...string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || port == "0" {
			continue
		}
		if host == "" || host == "localhost" {
			host = "0.0.0.0" // every address of the host
		}
		if ap, err := netip.ParseAddrPort(net.JoinHostPort(host, port)); err == nil {
			out = append(out, ap)
		}
	}
	return out
}

// registerRegistryCounters makes the registry's refusal counters visible
// in the metrics.
func registerRegistryCounters(metrics prometheus.Registerer, reg *registry.Registry) error {
	counters := []struct {
		reason string
		read   func(registry.Counters) uint64
	}{
		{"auth_failure", func(c registry.Counters) uint64 { return c.AuthFailures }},
		{"forbidden", func(c registry.Counters) uint64 { return c.Forbidden }},
		{"auth_timeout", func(c registry.Counters) uint64 { return c.AuthTimeouts }},
		{"limit", func(c registry.Counters) uint64 { return c.LimitRefusals }},
		{"invalid_input", func(c registry.Counters) uint64 { return c.InvalidInput }},
	}
	var errs []error
	for _, c := range counters {
		read := c.read
		errs = append(errs, metrics.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "switchyard_registry_refusals_total",
			Help:        "Requests and calls the registry refused, by reason (auth_timeout ones are auth_failure ones too).",
			ConstLabels: prometheus.Labels{"reason": c.reason},
		}, func() float64 { return float64(read(reg.Counters())) })))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("register the registry's counters: %w", err)
	}
	return nil
}

// identity is the text form of a string key.
func identity(k string) string { return k }

// run runs every runner until ctx is done or one fails.
func (p *pipeline) run(ctx context.Context) error {
	defer p.close()
	return p.group.Run(ctx, p.runners...) // main prefixes "pipeline:"
}

// close releases what outlives the runners: the etcd client, once every
// runner using it has returned.
func (p *pipeline) close() {
	if p.etcd != nil {
		p.etcd.Close()
	}
}

//go:embed config/*.yaml
var embeddedConfig embed.FS
