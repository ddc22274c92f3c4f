// Package registry is a service-discovery control plane run as a provider:
// instances of services register, heartbeat and deregister over HTTP or a
// WebSocket JSON-RPC connection; the Registry keeps them in a watchable map
// (Instances) and derives from it a map of DiscoverySnapshots (Snapshots),
// one per serviceId, envTag and protocol, that gateways and other components
// of the program subscribe to. Clients outside the process look up and watch
// the same snapshots over HTTP, Server-Sent Events or JSON-RPC.
//
//	token, err := registry.TokenFromEnv("REGISTRY_TOKEN")
//	...
//	reg, err := registry.New(registry.WithToken(token))
//	...
//	mux.Handle("/v1/", reg.Handler())
//	mux.Handle("/ws/", reg.Handler())
//	err = runner.Run(ctx, reg, server, gateway) // or registry.Serve(ctx, ln, reg)
//
// New takes functional options: WithToken (required), WithDiscoveryToken,
// WithLease, WithLogger and WithLimits.
//
// # In the program
//
// Instances and Snapshots return read-only views (watchable.View): the
// registry is their only writer. Instances is initialized (see
// watchable.View.Initialized) once Run has started, and Snapshots once it
// reflects Instances; Ready is Snapshots' Initialized, so a consumer waits
// on the data, not on the order its components start in. When Run returns,
// both keep their last contents.
//
// Snapshots is derived from Instances by a translator.GroupBy keyed by
// (serviceId, envTag, protocol) that Run runs: a change to an instance
// rebuilds only its snapshot (or two, when it moves). Heartbeats wake
// nobody: a heartbeat moves only LastSeenAt, which Instance.Equal ignores,
// so the map stores it without a notification (Load and State show the
// newest LastSeenAt) and neither map's subscribers, the translator
// included, hear of it. A heartbeat that reconnects an instance is a change.
//
// # HTTP API
//
//	POST   /v1/services                      register; 201 {"runtimeInstanceId", "leaseSeconds"}
//	PUT    /v1/services/{id}/heartbeat       renew the lease; 204, 404 for an unknown id
//	DELETE /v1/services/{id}                 deregister at once; 204, 404
//	GET    /v1/discovery?serviceId=&envTag=&protocol=        200 DiscoverySnapshot
//	GET    /v1/discovery/watch?serviceId=&envTag=&protocol=  text/event-stream
//
// The first three need "Authorization: Bearer <token>" with the token of
// WithToken; lookups and watches need the token of WithDiscoveryToken (or
// that of WithToken) when one is set. Bad input changes nothing and is
// answered with {"error", "field"}: 400 for invalid JSON, unknown or invalid
// fields, 401 for a missing or wrong token, 409 when the service has
// Limits.MaxInstancesPerService instances, 413 for a body over
// Limits.MaxBodyBytes, 415 for a content type other than application/json,
// 503 while the registry is not running.
//
// A watch sends "event: snapshot" with the current snapshot at once, then
// one after every change that affects it. Events are coalesced: a slow
// reader gets the newest snapshot, never a backlog. Comment lines keep idle
// streams alive.
//
// # Lookups
//
// A lookup names a serviceId and optionally an envTag and a protocol; an
// omitted (or empty) envTag or protocol matches every value. The answer is
// one DiscoverySnapshot merging the matching ones: its omitted fields are
// empty and its nodes are those of every match, sorted by envTag, protocol,
// address, port and runtimeInstanceId. When nothing matches, nodes is []. An
// instance registered without envTag can therefore only be looked up with
// envTag omitted.
//
// Nodes include disconnected instances: use only those for which
// Instance.Usable reports true. The nodes of a lookup carry lastSeenAt (the
// latest registration or heartbeat); those of watches and subscriptions do
// not, and heartbeats never wake watchers. Nodes show the environment an
// instance registered with, which, unlike envTag, selects nothing.
//
// # Leases
//
// An instance registered over HTTP is connected while it heartbeats: after
// one lease (WithLease) without a heartbeat it is marked connected=false,
// after three it is removed. An instance registered over a WebSocket is
// connected while the socket is open; when the socket closes it is marked
// connected=false at once and removed one lease later. Registering the same
// endpoint (serviceId, envTag, protocol, address, port) again, on any
// transport, takes the existing instance over, keeps its runtimeInstanceId
// and marks it connected: that is how a client that reconnects keeps its
// identity. A registry that restarted knows none of its instances: it
// answers their heartbeats 404, and a client then registers again,
// proposing the id it had as runtimeInstanceId, which the registry keeps
// unless another instance holds it.
//
// # WebSocket JSON-RPC 2.0
//
// /ws/microservice is for instances: the first call must be
// service/register, with the fields of the HTTP body and the token either in
// the Authorization header of the upgrade request or as params.token; the
// result is {"runtimeInstanceId"}. After it, discovery/lookup,
// discovery/subscribe and discovery/unsubscribe (below) work on the same
// socket, so that one connection registers an instance and discovers the
// services it calls.
//
// /ws/discovery is for clients that only discover: discovery/lookup
// ({serviceId, envTag?, protocol?} → DiscoverySnapshot), discovery/subscribe
// (same params → {"subscriptionId"}, then discovery/snapshot notifications
// whose params are a DiscoverySnapshot plus subscriptionId, coalesced like
// SSE events) and discovery/unsubscribe ({subscriptionId} → true; no
// notification for it follows). When a discovery token is set and the
// upgrade request did not carry it, the first lookup or subscribe must carry
// it as params.token.
//
// Errors use the standard codes (CodeParseError, CodeInvalidRequest,
// CodeMethodNotFound, CodeInvalidParams with {"error", "field"} as data) and
// the application codes CodeUnauthorized (the socket is then closed with
// 1008), CodeNotRegistered, CodeAlreadyRegistered, CodeLimitExceeded and
// CodeUnavailable. Batches are not supported. A message over
// Limits.MaxMessageBytes closes the socket with 1009, a binary message with
// 1003. Sockets are pinged every Limits.KeepAlive.
//
// # Security
//
// Tokens are Secrets: they print as "[redacted]" through fmt, log/slog and
// encoders, the Registry keeps only their SHA-256 digests, and they are
// compared in constant time. Read them with TokenFromEnv or from a
// configuration file, never from a command line flag.
package registry
