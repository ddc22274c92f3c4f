package registry

import (
	"context"

	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/runner"
)

// ListenAndServe runs r standalone until ctx is done: r, and an
// httpserver.Server named "registry-api" that serves r.Handler on addr
// with the server's production defaults (header, body and idle timeouts, a
// connection cap, a graceful shutdown that closes sockets with 1001), as
// one runner group. opts configure the server. It returns nil after a
// clean stop, or the first failure, such as that of listening on addr.
//
// A program with more to run builds the same itself:
//
//	api := httpserver.New("registry-api", addr, r.Handler())
//	err := runner.Run(ctx, r, api, ...)
func ListenAndServe(ctx context.Context, addr string, r *Registry, opts ...httpserver.Option) error {
	opts = append([]httpserver.Option{httpserver.WithLogger(r.cfg.logger)}, opts...)
	return runner.NewGroup(runner.WithLogger(r.cfg.logger)).Run(ctx, r, httpserver.New("registry-api", addr, r.Handler(), opts...))
}
