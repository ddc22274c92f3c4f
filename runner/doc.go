// Package runner runs the components of a program together, as one unit with
// one lifetime.
//
// A component is a Runner: a name and a Run method that blocks until its
// context is done. Run (or a Group, to watch it while it runs) starts every
// runner in its own goroutine and returns when they have all returned. The
// first runner to fail, or to panic, stops the others by cancelling their
// context, and its error, carrying the runner's name, is what Run returns.
// A runner that ignores cancellation cannot hang the program: after a grace
// period Run gives up on it and names it in the error.
//
// While the group runs, the Status of every runner (its Phase: starting,
// running, ready, stopped or failed; and the problems it reported through
// its Health, each under its own key) is published in a watchable map keyed
// by runner name, whose View a health check or an admin page subscribes to
// like any other map. Group.Ready tells when every runner has finished its
// initial work (see Readier). Records go to slog.Default() unless WithLogger
// says otherwise.
//
// A program that runs as several replicas decides here which replica does
// what. LeaderOnly runs a runner only in the replica that leads an
// election, and cancels it when leadership is lost; Shard spreads the items
// of a map over the replicas, each item handled by one of them at a time,
// within ⌈items/replicas⌉+1 items per replica. Both run on an engine that
// only provides primitives (Elector, ShardEngine: etcd in the etcd module,
// Kubernetes Leases in the kube module), so the same program runs on either
// by changing one constructor; every policy (campaigning again, claim
// delays, the cap, what happens on loss) lives here. TermOf gives the code
// they run its fencing token. docs/cluster.md has the proof of the bound
// and the failover timing.
//
// FanOut is the in-process counterpart: one handler per partition of a map
// (per node, per tenant), each with a subscription to its partition only,
// started and stopped as partitions appear and empty, its failures isolated
// from the others. Given a partition index's Sizes as items, Shard spreads
// the partitions themselves over replicas.
package runner
