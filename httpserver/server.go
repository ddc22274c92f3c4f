package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchyard-go/switchyard/runner"
)

// ErrAlreadyRun is returned by Run when the server has run before.
var ErrAlreadyRun = errors.New("server already run")

var _ interface {
	runner.Runner
	runner.Readier
	runner.Drainer
} = (*Server)(nil)

// Server is an HTTP server that runs as a runner: a runner.Runner, a
// runner.Readier that is ready once it listens, and a runner.Drainer that
// says how long its shutdown may take. Make one with New.
//
// Its methods are safe for concurrent use. A Server runs once.
type Server struct {
	name    string
	addr    string
	handler http.Handler
	cfg     config

	ready chan struct{}
	bound atomic.Pointer[string]
	ran   atomic.Bool
	ln    atomic.Pointer[limitListener]
}

// New returns a server that, when it runs, listens on the TCP address addr
// (host:port; port 0 picks a free port, see Addr) and serves h. name is its
// runner name, under which a runner group lists its status and its log
// records are made.
func New(name, addr string, h http.Handler, opts ...Option) *Server {
	return &Server{
		name:    name,
		addr:    addr,
		handler: h,
		cfg:     newConfig(opts),
		ready:   make(chan struct{}),
	}
}

// Name returns the name given to New.
func (s *Server) Name() string { return s.name }

// Ready returns a channel that is closed once the server listens, when Addr
// reports its address. It is never closed if Run fails to listen.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// ShutdownGrace returns how long the requests in flight may take to finish
// once the server is stopped (WithShutdownGrace). It makes the Server a
// runner.Drainer, which its runner group waits for that long.
func (s *Server) ShutdownGrace() time.Duration { return s.cfg.shutdownGrace }

// OpenConnections returns the number of connections the server holds open
// (hijacked ones, such as WebSockets, included), or 0 before it listens.
func (s *Server) OpenConnections() int {
	if l := s.ln.Load(); l != nil {
		return int(l.open.Load())
	}
	return 0
}

// Addr returns the address the server is bound to (host:port, with the
// port it got when the one asked for was 0), or "" before it listens. It
// keeps returning that address after Run has returned.
func (s *Server) Addr() string {
	if p := s.bound.Load(); p != nil {
		return *p
	}
	return ""
}

// Run listens on the server's address and serves until ctx is done, then
// shuts down gracefully (see the package documentation) and returns nil.
// It returns the error of listening, or of serving, if either fails, and
// ErrAlreadyRun if the server has run before.
//
// The contexts of requests carry the values of ctx (so a handler may
// report through runner.HealthOf(r.Context())), but are not cancelled with
// it: they end when their client goes away or the shutdown grace is over.
func (s *Server) Run(ctx context.Context) error {
	if !s.ran.CompareAndSwap(false, true) {
		return fmt.Errorf("%s: %w", s.name, ErrAlreadyRun)
	}
	tcp, err := net.Listen("tcp", s.addr)
	if err != nil {
		return err // "listen tcp <addr>: ..."; a runner group adds the name
	}
	bound := tcp.Addr().String()
	s.bound.Store(&bound)
	logger := s.cfg.log().With("runner", s.name)
	ln := newLimitListener(tcp, s.cfg.maxConnections, processBudget(), logger.With("addr", bound))
	s.ln.Store(ln)

	// Requests outlive ctx by up to the grace, so that they can finish;
	// draining tells them when the shutdown begins.
	draining := make(chan struct{})
	requests, cancelRequests := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), drainingKey, draining))
	defer cancelRequests()
	handler := s.handler
	if s.cfg.bodyTimeout > 0 {
		handler = bodyTimeout{h: handler, d: s.cfg.bodyTimeout}
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: orNone(s.cfg.readHeaderTimeout),
		ReadTimeout:       s.cfg.readTimeout,
		WriteTimeout:      s.cfg.writeTimeout,
		IdleTimeout:       orNone(s.cfg.idleTimeout),
		MaxHeaderBytes:    s.cfg.maxHeaderBytes,
		ErrorLog:          log.New(errorLog{logger}, "", 0),
		BaseContext:       func(net.Listener) context.Context { return requests },
	}
	for _, f := range s.cfg.onShutdown {
		srv.RegisterOnShutdown(f)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("listening", "addr", bound)
	close(s.ready)

	select {
	case err := <-served: // Serve fails only if accepting does
		return fmt.Errorf("serve %s: %w", bound, err)
	case <-ctx.Done():
	}
	close(draining)
	if err := s.shutdown(srv, ln); err != nil {
		logger.Warn("shutdown grace over: closing the connections still in use", "grace", s.cfg.shutdownGrace)
	}
	cancelRequests()
	<-served // http.ErrServerClosed, now that Shutdown or Close has been called
	return nil
}

// shutdown stops srv within the grace, and closes what is left after it.
// net/http's Shutdown does not wait for hijacked connections (WebSockets):
// they are told through Draining and WithOnShutdown, and waited for here,
// within the same grace, since they too deserve to end cleanly (with a
// close frame) before their requests' contexts are cancelled.
func (s *Server) shutdown(srv *http.Server, ln *limitListener) error {
	if s.cfg.shutdownGrace == 0 {
		for _, f := range s.cfg.onShutdown { // Close does not run them
			go f()
		}
		_ = srv.Close() // closing at once is what was asked for
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.shutdownGrace)
	defer cancel()
	err := srv.Shutdown(ctx)
	if err == nil {
		select {
		case <-ln.drained():
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		_ = srv.Close()
	}
	return err
}

// orNone turns our "zero means no limit" into net/http's, where zero means
// "use ReadTimeout" for these two.
func orNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// errorLog carries what net/http logs to slog: a panic in a handler at
// error, anything else at warn.
type errorLog struct{ logger *slog.Logger }

func (e errorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSuffix(string(p), "\n")
	level := slog.LevelWarn
	if strings.HasPrefix(msg, "http: panic serving") {
		level = slog.LevelError
	}
	e.logger.Log(context.Background(), level, msg)
	return len(p), nil
}
