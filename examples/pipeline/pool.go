package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/message"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/watchable"
)

// Pool keeps one HTTP transport per discovered instance, the way
// module-discovery systems keep one client per discovered module: it is a
// discovery.Pool, which opens a transport when an instance appears,
// replaces it when the instance's address changes, and closes it when the
// instance disappears. The gateway uses it for discovered targets, so
// keep-alive connections to an instance never outlive its registration.
//
// It follows DiscoverySnapshots, so it works the same on the snapshots of
// the registry in this process and on those a client mirrors from a remote
// one. It is a runner (Name "pool"); its Connections are keyed by
// runtimeInstanceId.
type Pool struct {
	*discovery.Pool[*http.Transport]
}

// newPool returns the pool of transports to the instances in snapshots.
func newPool(snapshots watchable.View[registry.DiscoveryKey, *registry.DiscoverySnapshot], logger *slog.Logger, metrics *message.Metrics) *Pool {
	return &Pool{discovery.NewPool("pool", snapshots,
		func(context.Context, *registry.Instance) (*http.Transport, error) { return newUpstreamTransport(), nil },
		(*http.Transport).CloseIdleConnections,
		discovery.WithLogger(logger), discovery.WithMetrics(metrics))}
}

// Transport returns the transport of the instance with runtimeInstanceId
// id, or nil when the pool has none it may use (the instance is unknown,
// disconnected, or the pool stopped).
func (p *Pool) Transport(id string) http.RoundTripper {
	t, err := p.Get(id)
	if err != nil {
		return nil
	}
	return t
}

// newUpstreamTransport is the transport for one upstream instance.
func newUpstreamTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}
