package registry_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
)

// A registry in the program: register an instance in-process and look it up.
func Example() {
	reg, err := registry.New(registry.WithToken("example-token"))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()
	<-reg.Ready()

	if _, err := reg.Register(registry.Registration{ServiceID: "api", EnvTag: "prod", Protocol: "http", Address: "10.0.0.1", Port: 8080}); err != nil {
		panic(err)
	}
	snap := reg.Lookup(registry.DiscoveryKey{ServiceID: "api"}) // any envTag, any protocol
	for _, n := range snap.Nodes {
		fmt.Println(n.EnvTag, n.Protocol, n.Address, n.Port, n.Usable())
	}

	cancel()
	<-done
	// Output:
	// prod http 10.0.0.1 8080 true
}

// New takes the registration token, which it requires, and options for
// everything else; zero Limits fields keep their defaults.
func ExampleNew() {
	if _, err := registry.New(); errors.Is(err, registry.ErrNoToken) {
		fmt.Println("without WithToken:", err)
	}
	reg, err := registry.New(
		registry.WithToken("example-token"), // in a program: registry.TokenFromEnv
		registry.WithDiscoveryToken("example-discovery-token"),
		registry.WithLease(10*time.Second),
		registry.WithLimits(registry.Limits{MaxInstancesPerService: 100}),
	)
	fmt.Println(reg.Name(), err)
	// Output:
	// without WithToken: registry: no registration token: New needs WithToken, or WithServiceToken, with a non-empty token
	// registry <nil>
}

// A component of the program follows the snapshots of one service: it
// subscribes to the read-only view, whatever the order the components
// start in, and acts only on snapshots of initialized data. Heartbeats do
// not wake it.
func ExampleRegistry_Snapshots() {
	reg, err := registry.New(registry.WithToken("example-token"))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()

	api := registry.DiscoveryKey{ServiceID: "api", EnvTag: "prod", Protocol: "grpc"}
	sub := reg.Snapshots().SubscribeSubset(ctx, func(k registry.DiscoveryKey, _ *registry.DiscoverySnapshot) bool { return k == api })

	<-reg.Ready()
	for _, port := range []int{9000, 9001} {
		if _, err := reg.Register(registry.Registration{ServiceID: "api", EnvTag: "prod", Protocol: "grpc", Address: "10.0.0.1", Port: port}); err != nil {
			panic(err)
		}
	}
	for snap := range sub {
		if !snap.Initialized {
			continue // the registry has not started: nothing to act on yet
		}
		s, _ := snap.State.Get(api)
		if s == nil || len(s.Nodes) < 2 {
			continue
		}
		for _, n := range s.Nodes {
			fmt.Println(n.Address, n.Port, n.Usable())
		}
		break
	}

	cancel()
	<-done
	// Output:
	// 10.0.0.1 9000 true
	// 10.0.0.1 9001 true
}

// Serving the HTTP API: register with the token, look up without one (no
// discovery token is set).
func ExampleRegistry_Handler() {
	reg, err := registry.New(registry.WithToken("example-token"))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- reg.Run(ctx) }()
	<-reg.Ready()
	mux := http.NewServeMux()
	mux.Handle("/v1/", reg.Handler())
	mux.Handle("/ws/", reg.Handler())
	srv := httptest.NewServer(mux)

	req, _ := http.NewRequest("POST", srv.URL+"/v1/services",
		strings.NewReader(`{"serviceId":"api","protocol":"grpc","address":"10.0.0.2","port":9090}`))
	req.Header.Set("Authorization", "Bearer example-token")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println("register:", resp.Status)

	resp, err = http.Get(srv.URL + "/v1/discovery?serviceId=api&protocol=grpc")
	if err != nil {
		panic(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Println("lookup:", resp.Status, strings.Contains(string(body), `"address":"10.0.0.2","port":9090`))

	cancel()
	<-done
	srv.Close()
	// Output:
	// register: 201 Created
	// lookup: 200 OK true
}
