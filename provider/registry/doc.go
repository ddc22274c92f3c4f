// Package registry is a service-discovery control plane run as a provider:
// instances register, heartbeat and deregister over HTTP or a WebSocket
// JSON-RPC connection, and are stored in a watchable map that the rest of
// the program subscribes to.
package registry
