package main

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/watchable"
)

// gatewayServiceID is the service the pipeline's gateway registers as
// with a remote controller.
const gatewayServiceID = "gateway"

// newRemote returns the client of the remote controller (-registry-url):
// it registers the gateway, once it listens, and mirrors the snapshots of
// the services the routes name, which follow keeps it told of.
func (p *pipeline) newRemote(metrics prometheus.Registerer) (*client.Client, error) {
	c, err := client.New(p.cfg.RegistryURL,
		client.WithToken(p.cfg.Token),
		client.WithRegistrationFunc(p.gatewayRegistration),
		client.WithStartOnRegistryFailure(p.cfg.StartOnRegistryFailure),
		client.WithInitialWait(p.cfg.registryWait),
		client.WithLogger(p.log),
		client.WithMetrics(metrics))
	if err != nil {
		return nil, fmt.Errorf("-registry-url: %w", err)
	}
	return c, nil
}

// gatewayRegistration waits until the gateway listens and returns its
// registration. An unspecified listen host (0.0.0.0, ::) is registered as
// 127.0.0.1: this is an example, run on one machine.
func (p *pipeline) gatewayRegistration(ctx context.Context) (registry.Registration, error) {
	select {
	case <-p.gateway.Listening():
	case <-ctx.Done():
		return registry.Registration{}, ctx.Err()
	}
	host, port, err := net.SplitHostPort(p.gateway.Addr())
	if err != nil {
		return registry.Registration{}, fmt.Errorf("gateway address %q: %w", p.gateway.Addr(), err)
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	n, _ := strconv.Atoi(port)
	return registry.Registration{ServiceID: gatewayServiceID, Protocol: "http", Address: host, Port: n,
		Version: "pipeline", Tags: map[string]string{"role": "gateway"}}, nil
}

// follow keeps the remote client following the services the routes name,
// from the first complete reading of the routes on: until then the
// client's mirror, an input of the routing, is not initialized.
func (p *pipeline) follow(ctx context.Context) error {
	message.HandleSnapshots(ctx, message.Loop{Message: "routes"}, p.routes.Subscribe(ctx),
		func(_ context.Context, snap watchable.Snapshot[types.NamespacedName, file.Object[Route]]) error {
			if snap.Initialized {
				p.remote.SetServices(routedServices(snap.State)...)
			}
			return nil
		}, message.WithLogger(p.log), message.WithMetrics(p.metrics))
	return nil
}

// routedServices returns the distinct services the routes name, sorted.
func routedServices(routes watchable.State[types.NamespacedName, file.Object[Route]]) []string {
	var ids []string
	for _, doc := range routes.All() {
		if doc.Spec.ServiceID != "" {
			ids = append(ids, doc.Spec.ServiceID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
