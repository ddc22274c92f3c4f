package client_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
	"github.com/switchyard-go/switchyard/runner"
)

// A gateway registers with its controller and follows the services it
// routes to; a backend that cannot hold a socket registers over HTTP.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)

	// The controller, in another process in real life.
	reg, _ := registry.New(registry.WithToken("s3cret"), registry.WithLogger(quiet))
	api := httpserver.New("registry-api", "127.0.0.1:0", reg.Handler(), httpserver.WithLogger(quiet))
	served := make(chan error, 1)
	go func() { served <- runner.Run(ctx, reg, api) }()
	<-api.Ready()
	controller := "http://" + api.Addr()

	backend, _ := client.NewRegistrar(controller,
		registry.Registration{ServiceID: "pets", Protocol: "http", Address: "127.0.0.1", Port: 8081},
		client.WithToken("s3cret"), client.WithLogger(quiet))
	gateway, _ := client.New(controller,
		client.WithToken("s3cret"), client.WithLogger(quiet),
		client.WithRegistration(registry.Registration{ServiceID: "gateway", Protocol: "http", Address: "127.0.0.1", Port: 8080}),
		client.WithServices("pets"))
	done := make(chan error, 2)
	go func() { done <- backend.Run(ctx) }()
	<-backend.Ready()
	go func() { done <- gateway.Run(ctx) }()
	<-gateway.Ready()

	// The mirror is ready: it holds what the controller knew of pets when
	// the gateway subscribed. The controller derives its snapshots an
	// instant after a registration, so wait for the data, not the clock.
	pets := registry.DiscoveryKey{ServiceID: "pets", Protocol: "http"}
	var snap *registry.DiscoverySnapshot
	for s := range gateway.Snapshots().Subscribe(ctx) {
		if snap, _ = s.State.Get(pets); snap != nil {
			break
		}
	}
	fmt.Println("mirrored pets nodes:", len(snap.Nodes), "usable:", snap.Nodes[0].Usable())
	looked, err := gateway.Lookup(ctx, registry.DiscoveryKey{ServiceID: "gateway"})
	fmt.Println("the gateway looks itself up:", len(looked.Nodes), err)

	cancel()
	<-done
	<-done
	<-served
	// Output:
	// mirrored pets nodes: 1 usable: true
	// the gateway looks itself up: 1 <nil>
}
