package registry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// ListenAndServe runs r standalone: it serves r.Handler on addr and runs r
// until ctx is done, then shuts the server down (open watches and sockets
// end with the registry) and returns nil, or returns the first failure.
func ListenAndServe(ctx context.Context, addr string, r *Registry) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("registry: listen on %s: %w", addr, err)
	}
	return Serve(ctx, ln, r)
}

// Serve is ListenAndServe on a listener, which it closes.
func Serve(ctx context.Context, ln net.Listener, r *Registry) error {
	srv := &http.Server{
		Handler:           r.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return r.Run(gctx) })
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("registry: serve on %s: %w", ln.Addr(), err)
		}
		return nil
	})
	g.Go(func() error {
		<-gctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		return srv.Shutdown(sctx)
	})
	return g.Wait()
}
