package main

import (
	"context"
	"fmt"
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
	go func() {
		defer wg.Done()
		message.HandleSubscription(ctx, message.Metadata{Runner: "events", Message: "instances"}, p.registry.Instances().Subscribe(ctx),
			func(_ context.Context, u watchable.Update[string, *registry.Instance]) error {
				p.instanceEvent(seenInstances, u)
				return nil
			}, opts...)
	}()
	go func() {
		defer wg.Done()
		message.HandleSubscription(ctx, message.Metadata{Runner: "events", Message: "routeTable"}, p.table.Subscribe(ctx),
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

func (p *pipeline) instanceEvent(seen map[string]*registry.Instance, u watchable.Update[string, *registry.Instance]) {
	prev, had := seen[u.Key]
	if u.Delete {
		delete(seen, u.Key)
		p.printf("instance removed      %s %s:%d (%s)", u.Value.ServiceID, u.Value.Address, u.Value.Port, u.Key)
		return
	}
	i := u.Value
	seen[u.Key] = i
	switch {
	case !had:
		p.printf("instance registered   %s %s://%s:%d (%s)", i.ServiceID, i.Protocol, i.Address, i.Port, u.Key)
	case prev.Connected && !i.Connected:
		p.printf("instance disconnected %s %s:%d (%s): lease expired or socket closed", i.ServiceID, i.Address, i.Port, u.Key)
	case !prev.Connected && i.Connected:
		p.printf("instance reconnected  %s %s:%d (%s)", i.ServiceID, i.Address, i.Port, u.Key)
	}
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
		p.printf("route resolved        %s %s -> %s via %s: %s", e.Name, e.PathPrefix, e.ServiceID, e.Source, strings.Join(e.Targets, ", "))
	}
}
