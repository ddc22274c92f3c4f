// Package kube connects switchyard to Kubernetes. Its subpackages fill
// watchable maps from the API server and write back to it:
//
//   - informer: a resource's objects in a map, kept equal to the API server
//     through lists and watches (typed, or unstructured for custom
//     resources);
//   - status: a map of desired statuses written to the status subresource,
//     by the leader only;
//   - lease: runner's Elector and ShardEngine on coordination/v1 Leases, so
//     that runner.LeaderOnly and runner.Shard run on Kubernetes.
//
// This package loads the client configuration they share (Config), with
// client-side rate limits sized for them.
//
// The module is separate from switchyard's core so that a program that does
// not talk to Kubernetes never downloads client-go.
package kube
