// Command pipeline runs the whole switchyard library at work: a file
// provider reads routes, a service registry accepts instances over HTTP and
// WebSocket, a translator resolves a route table from both, a reverse proxy
// serves it, and a connection pool keeps one transport per discovered
// instance. Every component is a runner in one runner group, and they talk
// only through watchable maps, which the admin address shows on /debug/maps.
//
//	go run ./examples/pipeline
//	curl 127.0.0.1:8080/petstore/pets
//
// Without -config, the configuration embedded from config/ is used and two
// demo backends register themselves for serviceId petstore. Run it with -h
// for the flags.
//
// Two pipelines form a controller and a gateway: the second, run with
// -registry-url set to the first's control address, runs no registry of its
// own; it registers its gateway with the controller and discovers the
// services its routes name through it (provider/registry/client), keeping
// what it knew while the controller is away:
//
//	go run ./examples/pipeline                                  # the controller
//	go run ./examples/pipeline -registry-url http://127.0.0.1:9090 -demo=false \
//	    -gateway-addr 127.0.0.1:8081 -control-addr 127.0.0.1:9092 -admin-addr 127.0.0.1:9093
//
// Files: config.go (Route and DirectRegistry), routing.go (the route table
// resolved with the discovery package), run.go (the wiring, and the
// routing translator), remote.go (the client of a remote controller),
// gateway.go (route matching in front of a gateway.Proxy), pool.go,
// admin.go (what the control and admin addresses serve), demo.go,
// events.go (the banner and the lines printed for people), flags.go,
// main.go.
//
// Three listeners: the gateway (-gateway-addr), the control plane
// (-control-addr: the registry's API, /healthz, /readyz) and the admin
// address (-admin-addr: /debug/maps, /debug/runners, /metrics,
// /debug/pprof/, for operators only). Each has the httpserver limits and a
// share of the process's connections; SIGTERM lets requests in flight
// finish for up to -shutdown-grace. hostile_test.go attacks it as issue 11
// did (TestHostileClients). The HTTP servers are httpserver.Servers and the admin pages
// come from the admin package; no runner waits for another, since each
// waits for the data it needs. The walkthrough in
// docs/pipeline-walkthrough.md shows a session with it.
package main
