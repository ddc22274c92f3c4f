// Command pipeline runs the whole switchyard library at work: a file
// provider reads routes, a service registry accepts instances over HTTP and
// WebSocket, a translator resolves a route table from both, a reverse proxy
// serves it, and a connection pool keeps one transport per discovered
// instance. Every component is a runner in one runner group, and they talk
// only through watchable maps, which the admin server shows on /debug/maps.
//
//	go run ./examples/pipeline
//	curl 127.0.0.1:8080/petstore/pets
//
// Without -config, the configuration embedded from config/ is used and two
// demo backends register themselves for serviceId petstore. Run it with -h
// for the flags.
//
// Files: config.go (Route and DirectRegistry), routing.go (the route table
// as a pure function), gateway.go, pool.go, admin.go, demo.go, serve.go
// (what the HTTP servers share), events.go (the banner and the lines
// printed for people), run.go (the wiring), flags.go, main.go. The
// walkthrough in docs/pipeline-walkthrough.md shows a session with it.
package main
