// Package lease runs runner's cluster contracts on Kubernetes Leases
// (coordination.k8s.io/v1), so that a program that elects a leader with
// runner.LeaderOnly or shares items with runner.Shard runs on Kubernetes by
// changing one constructor: NewElector for an Elector, NewShardEngine for a
// ShardEngine.
//
// An election is one Lease. A candidate takes it when it is vacant (absent,
// released, or expired) with an update conditioned on the version it read,
// so that of several candidates exactly one succeeds; it then renews it
// every RetryPeriod. A sharding group is one Lease per member, which the
// member renews, and one Lease per claimed item, created or taken over the
// same way and renewed by its holder.
//
// Expiry is judged as client-go's leaderelection judges it: a Lease whose
// version a process has not seen change for its leaseDurationSeconds,
// counted on that process's own clock from the moment it saw the version,
// is expired; so clocks need not agree, only run at the same rate. A holder
// ends its term when a renewal has not succeeded within RenewDeadline of
// being sent, which is shorter than the lease duration: it stops before any
// other process can take over.
//
// The fencing token of a term is the Lease's spec.leaseTransitions, which
// this package sets to 1 when it creates a Lease and increments at every
// acquisition, also by the same holder; Leases are released, never deleted,
// so the token of an item or an election only grows (deleting one by hand
// starts it again at 1).
//
// Requests: a holder renews each Lease it holds once per RetryPeriod, so a
// replica holding n items sends about (n+1)/RetryPeriod requests per second
// (see kube.DefaultQPS); watching is one watch per election campaign or
// per member.
package lease
