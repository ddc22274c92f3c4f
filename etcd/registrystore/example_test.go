package registrystore_test

import (
	"context"
	"fmt"
	"log/slog"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/registrystore"
	"github.com/switchyard-go/switchyard/provider/registry"
)

// Two registries on one etcd are one registry: an instance registered
// through one is found, and renewed, through the other.
func Example() {
	endpoints, stop := etcdtest.ForExample()
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	var replicas []*registry.Registry
	var done []chan error
	for range 2 {
		client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zap.NewNop()})
		if err != nil {
			panic(err)
		}
		defer client.Close()
		r, err := registry.New(registry.WithToken("example-token"), registry.WithLogger(slog.New(slog.DiscardHandler)),
			registry.WithStore(registrystore.New(client, "/switchyard")))
		if err != nil {
			panic(err)
		}
		d := make(chan error, 1)
		go func() { d <- r.Run(ctx) }()
		<-r.Ready()
		replicas, done = append(replicas, r), append(done, d)
	}

	id, err := replicas[0].Register(registry.Registration{ServiceID: "api", Protocol: "http", Address: "10.0.0.1", Port: 8080})
	if err != nil {
		panic(err)
	}
	fmt.Println("heartbeat through the other replica:", replicas[1].Heartbeat(id))
	// The other replica's snapshots follow its mirror of etcd.
	for snap := range replicas[1].Snapshots().Subscribe(ctx) {
		if _, ok := snap.State.Get(registry.DiscoveryKey{ServiceID: "api", Protocol: "http"}); ok {
			break
		}
	}
	for _, n := range replicas[1].Lookup(registry.DiscoveryKey{ServiceID: "api"}).Nodes {
		fmt.Println("found through the other replica:", n.Address, n.Port, n.Connected)
	}

	cancel()
	for _, d := range done {
		<-d
	}
	// Output:
	// heartbeat through the other replica: <nil>
	// found through the other replica: 10.0.0.1 8080 true
}
