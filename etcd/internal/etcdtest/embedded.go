package etcdtest

import (
	"net/url"
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
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = tb.TempDir()
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
		tb.Fatalf("start embedded etcd: %v", err)
	}
	tb.Cleanup(e.Close)
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		tb.Fatalf("embedded etcd failed while starting: %v", err)
	case <-time.After(startTimeout):
		tb.Fatalf("embedded etcd not ready after %v", startTimeout)
	}
	s := &Embedded{etcd: e}
	for _, l := range e.Clients {
		s.Endpoints = append(s.Endpoints, "http://"+l.Addr().String())
	}
	return s
}

// Server is the running server, for tests that inspect it.
func (s *Embedded) Server() *embed.Etcd { return s.etcd }
