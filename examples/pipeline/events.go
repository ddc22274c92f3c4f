package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// events prints a line for each change a person would want to see:
// instances registered, disconnected and removed, routes resolved, and
// targets lost. It starts once the banner is printed, with the state then.
func (p *pipeline) events(ctx context.Context) error {
	defer close(p.eventsDone)
	select {
	case <-p.announced:
	case <-ctx.Done():
		return nil
	}
	opts := []message.Option{message.WithLogger(p.log), message.WithMetrics(p.metrics)}
	seenInstances := map[string]*registry.Instance{}
	seenRoutes := map[string]*RouteEntry{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // say how many instance lines were left out, once a second
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				p.reportSuppressed(now)
			}
		}
	}()
	if p.registry != nil { // a remote controller prints its own instance lines
		wg.Add(1)
		go func() {
			defer wg.Done()
			message.HandleSubscription(ctx, message.Loop{Message: "instances"}, p.registry.Instances().Subscribe(ctx),
				func(_ context.Context, u watchable.Update[string, *registry.Instance]) error {
					p.instanceEvent(seenInstances, u)
					return nil
				}, opts...)
		}()
	}
	go func() {
		defer wg.Done()
		message.HandleSubscription(ctx, message.Loop{Message: "routeTable"}, p.table.Subscribe(ctx),
			func(_ context.Context, u watchable.Update[string, *RouteEntry]) error {
				p.routeEvent(seenRoutes, u)
				return nil
			}, opts...)
	}()
	wg.Wait()
	return nil
}

func (p *pipeline) printf(format string, args ...any) {
	fmt.Fprintf(p.out, time.Now().Format("15:04:05.000")+" "+format+"\n", args...)
}

// maxInstanceLines bounds the instance lines printed per second: under
// churn (thousands of instances coming and going) a line for each would
// bury everything else, and cost more than the churn itself.
const maxInstanceLines = 10

func (p *pipeline) instanceEvent(seen map[string]*registry.Instance, u watchable.Update[string, *registry.Instance]) {
	prev, had := seen[u.Key]
	if u.Delete {
		delete(seen, u.Key)
		p.instanceLine("instance removed      %s %s:%d (%s)", u.Value.ServiceID, u.Value.Address, u.Value.Port, u.Key)
		return
	}
	i := u.Value
	seen[u.Key] = i
	switch {
	case !had:
		p.instanceLine("instance registered   %s %s://%s:%d (%s)", i.ServiceID, i.Protocol, i.Address, i.Port, u.Key)
	case prev.Connected && !i.Connected:
		p.instanceLine("instance disconnected %s %s:%d (%s): lease expired or socket closed", i.ServiceID, i.Address, i.Port, u.Key)
	case !prev.Connected && i.Connected:
		p.instanceLine("instance reconnected  %s %s:%d (%s)", i.ServiceID, i.Address, i.Port, u.Key)
	}
}

// instanceLine prints an instance line, unless maxInstanceLines were
// printed in the current second already; those left out are counted.
func (p *pipeline) instanceLine(format string, args ...any) {
	p.lines.mu.Lock()
	now := time.Now()
	if now.Sub(p.lines.window) >= time.Second {
		p.lines.window, p.lines.printed = now, 0
	}
	if p.lines.printed >= maxInstanceLines {
		p.lines.suppressed++
		p.lines.mu.Unlock()
		return
	}
	p.lines.printed++
	p.lines.mu.Unlock()
	p.printf(format, args...)
}

// reportSuppressed prints how many instance lines were left out since the
// last report, if any.
func (p *pipeline) reportSuppressed(time.Time) {
	p.lines.mu.Lock()
	n := p.lines.suppressed
	p.lines.suppressed = 0
	p.lines.mu.Unlock()
	if n > 0 {
		p.printf("instance events       %d more not shown (at most %d lines a second); the admin address's /debug/maps?map=instances lists the instances", n, maxInstanceLines)
	}
}

// instanceLines is the state of the instance lines' rate limit.
type instanceLines struct {
	mu         sync.Mutex
	window     time.Time // the start of the current second
	printed    int       // in the current second
	suppressed int       // since the last report
}

func (p *pipeline) routeEvent(seen map[string]*RouteEntry, u watchable.Update[string, *RouteEntry]) {
	prev, had := seen[u.Key]
	if u.Delete {
		delete(seen, u.Key)
		p.printf("route removed         %s (%s)", u.Key, u.Value.PathPrefix)
		return
	}
	e := u.Value
	seen[u.Key] = e
	switch {
	case e.Error != "":
		p.printf("route invalid         %s: %s", e.Name, e.Error)
	case len(e.Targets) == 0 && had && len(prev.Targets) > 0:
		p.printf("route target lost     %s %s -> %s: no usable target, requests answer 503", e.Name, e.PathPrefix, e.ServiceID)
	case len(e.Targets) == 0:
		p.printf("route unresolved      %s %s -> %s: no usable target yet", e.Name, e.PathPrefix, e.ServiceID)
	default:
		urls := make([]string, len(e.Targets))
		for i, t := range e.Targets {
			urls[i] = t.URL
		}
		p.printf("route resolved        %s %s -> %s via %s: %s", e.Name, e.PathPrefix, e.ServiceID, e.Source, strings.Join(urls, ", "))
	}
}

// announce prints where to find everything once every runner is ready, and
// a line when the pipeline starts shutting down: the last line, printed
// once the events runner has printed its own.
func (p *pipeline) announce(ctx context.Context) error {
	select {
	case <-p.group.Ready():
	case <-ctx.Done():
		return nil
	}
	_, _ = io.WriteString(p.out, p.banner())
	close(p.announced)
	<-ctx.Done()
	<-p.eventsDone
	p.printf("shutting down")
	return nil
}

// banner is the text printed once the pipeline is ready: the addresses,
// the token, and commands that work when pasted into a shell.
func (p *pipeline) banner() string {
	gw, ctl, adm := p.gateway.Addr(), p.control.Addr(), p.admin.Addr()
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("switchyard pipeline ready")
	line("  gateway        http://%s", gw)
	api, lease := ctl, p.cfg.Lease.String()+" lease" // where the registry's API is
	if p.remote == nil {
		line("  control plane  http://%s  (the registry's API /v1/ and /ws/, /healthz, /readyz)", ctl)
	} else {
		api, lease = strings.TrimSuffix(p.cfg.RegistryURL, "/"), "lease of the controller"
		line("  control plane  http://%s  (/healthz, /readyz)", ctl)
	}
	line("  admin          http://%s  (operators only: /debug/maps, /debug/runners, /metrics, /debug/pprof/)", adm)
	if p.remote != nil {
		registered := "not yet: the controller cannot be reached; retrying in the background"
		if id := p.remote.RuntimeInstanceID(); id != "" {
			registered = "instance " + id
		}
		line("  registry       remote controller %s; this gateway registers there as %q (%s)", api, gatewayServiceID, registered)
	}
	if p.cfg.ConfigDir == "" {
		line("  config         embedded (run with -config DIR to use files you can edit)")
	} else {
		line("  config         %s (watched: edits apply at once)", p.cfg.ConfigDir)
	}
	if p.cfg.TokenGenerated {
		line("  token          generated, as SWITCHYARD_TOKEN is not set; shown only here:")
		line("                 export SWITCHYARD_TOKEN=%s", string(p.cfg.Token))
	} else {
		line("  token          from SWITCHYARD_TOKEN")
	}
	discoveryAuth := ""
	if p.cfg.DiscoveryToken != "" {
		discoveryAuth = ` -H "Authorization: Bearer $SWITCHYARD_DISCOVERY_TOKEN"`
	}

	line("try:")
	table := p.table.State()
	if demo, ok := routeFor(table, "petstore"); ok && p.cfg.Demo {
		line("  curl -i %s%s/pets    # again and again: the demo backends take turns", gw, demo.PathPrefix)
	}
	serviceID, prefix := "inventory", ""
	if r, ok := exampleRoute(table); ok {
		serviceID, prefix = r.ServiceID, r.PathPrefix
	}
	line("  curl -N%s '%s/v1/discovery/watch?serviceId=%s'    # in another terminal: discovery as it changes", discoveryAuth, api, serviceID)
	line("  curl -i -X POST %s/v1/services -H \"Authorization: Bearer $SWITCHYARD_TOKEN\" -H 'Content-Type: application/json' \\", api)
	line("       -d '{\"serviceId\":\"%s\",\"protocol\":\"http\",\"address\":\"127.0.0.1\",\"port\":7001}'    # your server on 127.0.0.1:7001", serviceID)
	if prefix != "" {
		line("  curl -i %s%s/    # routed to it once registered", gw, strings.TrimSuffix(prefix, "/"))
	}
	line("  curl -X PUT %s/v1/services/RUNTIME_INSTANCE_ID/heartbeat -H \"Authorization: Bearer $SWITCHYARD_TOKEN\"    # within each %s", api, lease)
	line("  curl %s/debug/maps", adm)
	return b.String()
}

// routeFor returns the valid route, first by name, that sends requests to
// serviceID.
func routeFor(table watchable.State[string, *RouteEntry], serviceID string) (*RouteEntry, bool) {
	for _, name := range slices.Sorted(table.Keys()) {
		if r, _ := table.Get(name); r.ServiceID == serviceID && r.Error == "" {
			return r, true
		}
	}
	return nil, false
}

// exampleRoute picks the route the banner's registration example uses: the
// first by name that has no target yet, or else the first valid one.
func exampleRoute(table watchable.State[string, *RouteEntry]) (*RouteEntry, bool) {
	var valid *RouteEntry
	for _, name := range slices.Sorted(table.Keys()) {
		r, _ := table.Get(name)
		switch {
		case r.Error != "":
		case len(r.Targets) == 0:
			return r, true
		case valid == nil:
			valid = r
		}
	}
	return valid, valid != nil
}

// lockedWriter serializes the lines of several runners.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}
