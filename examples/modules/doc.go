// Command modules is a module of a TinySystems-like program on Kubernetes,
// built on switchyard's kube module. Start it as module M, with as many
// replicas as you like:
//
//	modules -module text -components upper,reverse -replica $(hostname)
//
// Every replica:
//
//   - watches every TinyModule custom resource of its namespace (an
//     informer into a watchable map) and creates its own module's if it is
//     missing;
//   - keeps a pool of HTTP connections to the modules, one per module,
//     following the address each module publishes in its status (a
//     discovery.Pool over a map derived from the TinyModules: a connection
//     appears with the address, is replaced when it changes, and is closed
//     when the module goes);
//   - campaigns for its module's Lease: only the leader writes the module's
//     status (its own address, the components it serves), through a
//     status.Writer; when it dies, another replica takes over and publishes
//     its own address;
//   - serves POST /send?to=node.port: the message goes to the component
//     named node if this module serves it, and otherwise to the module
//     whose status lists it, through the pool, waiting a bounded time for
//     one to appear (then it answers 504, saying what it waited for).
//
// Apply tinymodule.yaml (the CRD) first. -kubeconfig, $KUBECONFIG or
// ~/.kube/config, or the pod's service account say which cluster. The
// Lease names and the status are in the namespace of -namespace.
package main
