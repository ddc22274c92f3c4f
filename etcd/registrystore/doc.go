// Package registrystore keeps the instances of a registry.Registry in etcd,
// so that several registries — replicas of one control plane behind any
// load balancer — share them:
//
//	st := registrystore.New(client, "/switchyard")
//	reg, err := registry.New(registry.WithToken(token), registry.WithStore(st))
//
// Each instance is a key, <prefix>/instances/<serviceId>/<runtimeInstanceId>,
// whose value is the Instance in JSON. Every replica mirrors that prefix
// (see the mirror package) into its Instances map, so lookups, SSE watches
// and WebSocket subscriptions answer the same on every replica, and a
// registration returns only once the local mirror has it.
//
// How instances live and die:
//
//   - An instance registered over HTTP holds a lease of its own, of the
//     registry's lease period (in whole seconds). A heartbeat received by
//     any replica renews that lease; a renewal writes no key, so no watcher
//     anywhere wakes. Without heartbeats the key expires one lease after the
//     last one, and every replica sees it go. (The in-memory store marks
//     such an instance disconnected after one lease and removes it after
//     three; in etcd it is removed after one.)
//   - An instance registered over a WebSocket lives under the session lease
//     of the replica that holds the socket (see the sink package): it stays
//     while the replica lives, whatever the heartbeats, and vanishes one
//     lease after the replica dies — at once if the replica stops cleanly.
//     When the socket closes, the instance is marked disconnected and
//     removed one lease later, as in memory.
//   - A replica cut off from etcd for longer than the lease loses its
//     session: its WebSocket-held instances expire for the others. When it
//     reaches etcd again it lists the prefix anew and writes them back.
//
// What etcd does not give: an instance's LastSeenAt is the time of the
// write that made its record (registration, reconnection), not of its
// latest heartbeat, since heartbeats write nothing. Limits per service, the
// choice of a proposed id and the takeover of an endpoint are checked
// against the local mirror, not atomically across replicas: two replicas
// registering the same endpoint at the same instant may make two instances
// of it (the one whose client stops heartbeating then expires).
package registrystore
