package main

import (
	"fmt"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/switchyard-go/switchyard/etcd/registrystore"
	"github.com/switchyard-go/switchyard/provider/registry"
)

// newEtcdStore connects to etcd (lazily: the client dials in the
// background, and the store retries until etcd answers) and returns the
// registry's store on it, with the client, which the caller closes once
// the registry has stopped.
func newEtcdStore(endpoints []string, prefix string) (registry.Store, *clientv3.Client, error) {
	client, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		// Keepalive pings find a connection that went silent (a partition
		// rather than a reset) in seconds, not at the next TCP timeout.
		DialKeepAliveTime:    5 * time.Second,
		DialKeepAliveTimeout: 5 * time.Second,
		// The store reports what matters (lost sessions, failed watches)
		// through its runner; the client's own retries are noise.
		Logger: zap.NewNop(),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("-etcd %v: %w", endpoints, err)
	}
	return registrystore.New(client, prefix), client, nil
}
