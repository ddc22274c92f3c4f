// Package cluster runs runner's election and sharding on etcd: an Elector
// for runner.LeaderOnly, and a ShardEngine for runner.Shard. It provides
// the primitives only; every decision (campaigning again, which item to
// claim and when, how many to hold) is runner's, made the same way on
// every engine.
//
// Both stand on a session: an etcd lease that the process renews. A
// session ends for the process before it can end for the others: renewals
// are sent every third of the time to live, and the session counts as lost
// as soon as 90% of the time to live has passed since the last renewal that
// was sent and confirmed (etcd can only have renewed it later, so it
// expires later), so the holder stops before another replica can win what
// it held. See docs/cluster.md in the repository for the timing.
//
// The election is a single leader key, created if absent under the
// candidate's session lease; the fencing token is the key's create
// revision. A candidate that finds the key taken watches it and tries
// again when it is deleted: by a resignation (the lease is revoked at
// once) or by the expiry of the leader's lease.
//
// Sharding keeps members under <prefix>/members/<id> and claims under
// <prefix>/claims/<item>, both under the member's session lease, so a
// member's claims vanish with it, in the same revision. A claim is created
// if absent in one transaction; its token is its create revision. Each
// member watches the whole prefix and publishes the members and the claims
// as watchable views.
package cluster
