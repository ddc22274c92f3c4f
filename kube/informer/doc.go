// Package informer keeps a watchable map equal to a Kubernetes resource: the
// objects of one kind, in one namespace or all of them, optionally narrowed
// by label and field selectors, keyed by namespace and name.
//
// An Informer lists the resource, publishes the list as the map's first
// complete contents (one Replace, after which the map is initialized and
// Ready closes), then follows the watch: an added or modified object is
// stored, a deleted one deleted. When the watch cannot be resumed (the API
// server answers 410 Gone because its history was compacted), it lists again
// and publishes only the net difference, as one revision, so a consumer never
// sees a half-applied re-list. The list and watch machinery is client-go's
// cache.Reflector; the map takes the place of its store, so an object is
// held once, by the map, rather than by an informer cache and again by the
// map.
//
// Problems are reported through runner.HealthOf under the keys "list" and
// "watch", and cleared once a list or a watch succeeds again: a resource the
// API server does not serve (a CustomResourceDefinition not installed yet)
// shows as a runner that is not ready and says why, and the informer keeps
// retrying, with a backoff, until the resource appears.
//
// New takes a typed client (clientset.CoreV1().Pods(namespace)); NewUnstructured
// takes the dynamic client and a GroupVersionResource, for custom resources
// without generated types.
package informer
