// Package client is the other side of provider/registry: a Go client of a
// registry controller that a gateway, a sidecar or any service uses to
// register itself and to discover others from another process.
//
// A Client holds one WebSocket to the controller (/ws/microservice when it
// registers, /ws/discovery when it only discovers). On each connection it
// registers its instance (service/register), subscribes to the services it
// follows (discovery/subscribe) and mirrors their DiscoverySnapshots into a
// local watchable map, keyed and shaped like the controller's own
// Snapshots, so that code written against a Registry in the same process
// (the discovery package's Resolve and Pool, a routing translator) runs
// unchanged against a remote one. Lookup asks the controller on the same
// socket.
//
//	token, err := registry.TokenFromEnv("SWITCHYARD_TOKEN")
//	...
//	c, err := client.New("https://controller.internal:9090",
//		client.WithToken(token),
//		client.WithRegistration(registry.Registration{ServiceID: "gateway", Protocol: "http", Address: "10.0.0.5", Port: 8080}),
//		client.WithServices("billing", "inventory"))
//	...
//	err = runner.Run(ctx, c, myGateway) // myGateway reads c.Snapshots()
//
// When the connection fails or ends, the client reconnects with capped,
// jittered backoff (WithBackoff) and registers again, proposing the
// runtimeInstanceId it had, which a controller that restarted keeps. The
// local map keeps its contents while the client is disconnected (a gateway
// keeps routing to what it knew) and, once the client is back, changes only
// where the controller's snapshots differ. Lookups while disconnected fail
// at once with ErrDisconnected.
//
// At start, WithStartOnRegistryFailure(true) (the default) makes the client
// ready after a bounded wait (WithInitialWait) even when the controller
// cannot be reached, retrying in the background; false makes Run fail
// with an error naming the controller instead.
//
// A Registrar is the HTTP-only form, for programs that cannot hold a
// socket: it registers over POST /v1/services, heartbeats, registers again
// when a heartbeat is answered 404 (with the registry's "not_registered"
// code or without a body), and deregisters when it stops.
//
// Both are runners (Run blocks until its context is done) and readiers,
// report their link in Status, in runner health (key "controller") and,
// with WithMetrics, in Prometheus metrics. TLS (https://, wss://) verifies
// the controller's host name; WithTLSConfig adds a CA or a client
// certificate. The token (WithToken, a registry.Secret) travels only in
// the Authorization header: no log record, error, status or metric holds
// it.
package client
