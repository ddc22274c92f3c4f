package etcdtest

import (
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// startTimeout bounds how long a server may take to become ready.
const startTimeout = 30 * time.Second

// Embedded is an etcd server running inside the test binary.
type Embedded struct {
	// Endpoints are the server's client URLs.
	Endpoints []string
	etcd      *embed.Etcd
}

// StartEmbedded starts a single-member etcd server inside the test binary and
// stops it when the test ends. Data lives in a temporary directory, without
// fsync. The server listens on 127.0.0.1 ports chosen by the kernel, so
// parallel tests never collide.
func StartEmbedded(tb testing.TB) *Embedded {
	tb.Helper()
	s, err := startEmbedded(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.etcd.Close)
	return s
}

// ForExample starts an embedded server as StartEmbedded does, for a
// runnable example, which has no testing.TB: it panics if the server does
// not start, and stop closes it and removes its data.
func ForExample() (endpoints []string, stop func()) {
	dir, err := os.MkdirTemp("", "etcdtest-example-")
	if err != nil {
		panic(err)
	}
	s, err := startEmbedded(dir)
	if err != nil {
		os.RemoveAll(dir)
		panic(err)
	}
	return s.Endpoints, func() {
		s.etcd.Close()
		os.RemoveAll(dir)
	}
}

func startEmbedded(dir string) (*Embedded, error) {
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	// Not "error": stopping the server logs the listeners it closes as
	// errors, a screenful per test. Failures to start are returned anyway.
	cfg.LogLevel = "fatal"
	cfg.ListenClientUrls = []url.URL{local}
	cfg.AdvertiseClientUrls = []url.URL{local}
	cfg.ListenPeerUrls = []url.URL{local}
	cfg.AdvertisePeerUrls = []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed while starting: %w", err)
	case <-time.After(startTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after %v", startTimeout)
	}
	s := &Embedded{etcd: e}
	for _, l := range e.Clients {
		s.Endpoints = append(s.Endpoints, "http://"+l.Addr().String())
	}
	return s, nil
}

// Server is the running server, for tests that inspect it.
func (s *Embedded) Server() *embed.Etcd { return s.etcd }
