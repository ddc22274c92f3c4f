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
// Files: config.go (Route and DirectRegistry), routing.go (the route table
// as a pure function), run.go (the wiring, and the routing translator),
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
