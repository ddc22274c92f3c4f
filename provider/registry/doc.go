// Package registry is a service-discovery control plane run as a provider:
// instances of services register, heartbeat and deregister over HTTP or a
// WebSocket JSON-RPC connection; the Registry keeps them in a watchable map
// (Instances) and derives from it a map of DiscoverySnapshots (Snapshots),
// one per serviceId, envTag and protocol, that gateways and other components
// of the program subscribe to. Clients outside the process look up and watch
// the same snapshots over HTTP, Server-Sent Events or JSON-RPC; the Go client
// is provider/registry/client, whose mirror of the snapshots has the shape
// of Snapshots.
//
//	token, err := registry.TokenFromEnv("REGISTRY_TOKEN")
//	...
//	reg, err := registry.New(registry.WithToken(token))
//	...
//	api := httpserver.New("registry-api", addr, reg.Handler())
//	err = runner.Run(ctx, reg, api, gateway) // or registry.ListenAndServe(ctx, addr, reg)
//
// New takes functional options: WithToken or WithServiceToken (at least
// one is required), WithDiscoveryToken, WithAddressPolicy, WithLease,
// WithLogger, WithLimits and WithStore.
//
// # Where instances are kept
//
// A Store keeps the instances and runs their leases out; every change to
// an instance goes through it. The default (NewMemoryStore) keeps them in
// the registry's memory: they are lost when the process ends. The etcd
// module's registrystore keeps them in etcd, where several registries
// (replicas behind a load balancer) share them; see docs/cluster.md. The
// registrytest package checks that a Store keeps the contract.
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
// The first three need "Authorization: Bearer <token>" with a registration
// token: that of WithToken, for every service, or one of WithServiceToken,
// for the services it lists only. Lookups and watches need the token of
// WithDiscoveryToken (or a registration token) when one is set. Bad input
// changes nothing and is answered with {"error", "field"}:
//
//	400  invalid JSON, invalid UTF-8, unknown or invalid fields (see Input)
//	401  a missing or wrong token (the connection is then closed)
//	403  a token that may not act for the service, or an address that the
//	     AddressPolicy refuses (field "address")
//	404  an unknown runtimeInstanceId, with "code": "not_registered"
//	     (ReasonNotRegistered): its lease expired, it was deregistered, or
//	     the registry restarted; a client whose heartbeat gets it
//	     registers again
//	408  a body not received within the server's body timeout
//	409  the service has Limits.MaxInstancesPerService instances, or the
//	     registry Limits.MaxInstances
//	413  a body over Limits.MaxBodyBytes
//	415  a content type other than application/json
//	503  the registry is not running, or Limits.MaxWatchers watches are
//	     live (with Retry-After)
//
// A watch sends "event: snapshot" with the current snapshot at once, then
// one after every change that affects it. Events are coalesced: a slow
// reader gets the newest snapshot, never a backlog. Comment lines keep idle
// streams alive.
//
// # Delta watches
//
// A watch of a large service sends the whole service after every change
// (a 1,000-node service: about 300 KB per change, to every watcher). With
// delta=true (GET /v1/discovery/watch?serviceId=...&delta=true), it sends
// "event: snapshot" with the current snapshot at once, as any watch does,
// and then "event: delta" events, each a DiscoveryDelta:
//
//	{"serviceId": ..., "envTag": ..., "protocol": ...,
//	 "upserts": [<node>, ...],   // added or changed nodes
//	 "removes": ["<runtimeInstanceId>", ...]}
//
// A delta is relative to the previous event the watcher received: remove
// the nodes listed in removes, replace or add those in upserts (by
// runtimeInstanceId), and sort as a snapshot is (DiscoveryDelta.Apply does
// this). Coalescing works as for snapshots: a slow reader gets one delta
// from what it last received to the newest state. A change that no node of
// the watch shows sends nothing. A client that loses the stream watches
// again and starts over from the new first snapshot; delta events never
// carry lastSeenAt, as snapshots do not. Over JSON-RPC, discovery/subscribe
// with "delta": true sends discovery/snapshot once, then discovery/delta
// notifications whose params are a DiscoveryDelta plus subscriptionId. A watch ends when the registry stops, or when the
// httpserver.Server serving it begins to shut down (see
// httpserver.Draining).
//
// # Input
//
// serviceId and envTag may contain only ASCII letters, digits, '.', '_'
// and '-', and start with a letter or digit; tag keys may also contain
// '/' ("app.kubernetes.io/name"). So nothing invisible or confusable gets
// in: "svc-a" followed by a zero-width space, or with a Cyrillic "а", is
// refused, not registered as a second service that looks like the first.
// version and tag values are printable UTF-8: letters, marks, numbers,
// punctuation, symbols and the ASCII space, without control, format (such
// as U+200B or U+202E) or private-use characters. address is an IP
// address (IPv6 without brackets) or a host name of ASCII letters, digits,
// '-' and '_', without scheme or port. Every string is at most
// Limits.MaxStringLength bytes. A body, query or message that is not
// valid UTF-8 is refused as a whole (400, or CodeInvalidParams), rather
// than decoded with replacement characters. The error names the field and
// the character refused, with its position.
//
// # Lookups
//
// A lookup costs the instances of its service, however many the registry
// holds.
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
// (same params and delta? → {"subscriptionId"}, then discovery/snapshot
// (or, with delta, discovery/delta: see Delta watches) notifications
// whose params are a DiscoverySnapshot plus subscriptionId, coalesced like
// SSE events) and discovery/unsubscribe ({subscriptionId} → true; no
// notification for it follows). When a discovery token is set and the
// upgrade request did not carry it, the first lookup or subscribe must carry
// it as params.token.
//
// Errors use the standard codes (CodeParseError, CodeInvalidRequest,
// CodeMethodNotFound, CodeInvalidParams with {"error", "field"} as data) and
// the application codes CodeUnauthorized (the socket is then closed with
// 1008), CodeNotRegistered, CodeAlreadyRegistered, CodeLimitExceeded,
// CodeUnavailable and CodeForbidden (with {"error", "field"} as data). An
// error carries the id of the request whenever it can be read, even from
// a request that is otherwise invalid; null only when it cannot. Batches
// are not supported: each request of a batch is answered with
// CodeInvalidRequest and its id, in an array (an empty batch with one
// error). A message that is not valid UTF-8 is answered with
// CodeInvalidParams.
//
// A socket that has not presented a valid token within
// Limits.AuthTimeout is closed with 1008. A message over
// Limits.MaxMessageBytes closes it with 1009, a binary message with 1003.
// Sockets are pinged every Limits.KeepAlive, and closed with 1001 (going
// away) when the registry stops or the server shuts down. At most
// Limits.MaxSockets are open at once (503 before the upgrade beyond).
//
// # Security
//
// Tokens are Secrets: they print as "[redacted]" through fmt, log/slog and
// encoders, the Registry keeps only their SHA-256 digests, and they are
// compared in constant time. Read them with TokenFromEnv or from a
// configuration file, never from a command line flag.
//
// A token of WithServiceToken registers, renews and deregisters the
// instances of its services only, so that one team's token cannot remove
// another's instances. What instances may register is bounded by an
// AddressPolicy: by default no link-local address (metadata services), no
// unspecified or multicast address, and not the control plane's own
// address, so that a gateway following the registry is never pointed at
// either.
//
// Refusals are counted (Counters) and logged without the token: refused
// tokens and caps reached at warn, at most one record a second each,
// with the client's address and the reason. Per-instance events
// (registered, deregistered, lease expired) are logged at debug only.
//
// # Limits
//
// Limits bound what clients can make the registry hold: instances per
// service and in all, live watches (SSE and subscriptions together),
// open WebSockets, subscriptions per socket, sizes of bodies, messages,
// strings and tag sets, and the time a socket may stay unauthenticated.
// Their defaults suit production. Serve the handler with an
// httpserver.Server (ListenAndServe does) for the limits of the
// connections themselves: header, body and idle timeouts, and a
// connection cap.
package registry
