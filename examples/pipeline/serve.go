package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// boundAddr records the address a server listens on, which is only known
// once it does when the configured port is 0. The zero value is ready to
// use; it is safe for concurrent use.
type boundAddr struct{ p atomic.Pointer[string] }

// BoundAddr returns the address the server listens on (host:port), or ""
// before it listens.
func (b *boundAddr) BoundAddr() string {
	if p := b.p.Load(); p != nil {
		return *p
	}
	return ""
}

// listen listens on addr and records the address it got. Its error reads
// "listen tcp <addr>: ..." already, and the runner group adds the runner's
// name, so it is returned as is.
func (b *boundAddr) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	bound := ln.Addr().String()
	b.p.Store(&bound)
	return ln, nil
}

// serve runs srv on ln, and work beside it, until ctx is done or work
// fails; then it shuts srv down gracefully, giving requests in flight at
// most 3 s: the runner group's grace, and the 5 s a signal allows, are
// longer. Long-lived streams end with ctx when srv's BaseContext is ctx.
func serve(ctx context.Context, srv *http.Server, ln net.Listener, work func(context.Context) error) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	werr := work(ctx)
	if werr == nil {
		<-ctx.Done()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return werr
}
