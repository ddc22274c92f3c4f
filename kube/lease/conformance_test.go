package lease_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/switchyard-go/switchyard/internal/testrun"
	"github.com/switchyard-go/switchyard/kube/kubetest"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/runner/clustertest"
)

// The Lease engine keeps the contracts every engine is held to, on a real
// API server: one server serves every check, each under a Lease name or
// shard group of its own.
func TestLeaseKeepsTheContracts(t *testing.T) {
	t.Parallel()
	cs := kubetest.Start(t).Clientset(t)
	var n atomic.Int64
	t.Run("Elector", func(t *testing.T) {
		clustertest.Elector(t, func(t *testing.T) func(string) runner.Elector {
			name := fmt.Sprintf("conformance-%d", n.Add(1))
			return func(id string) runner.Elector {
				e, err := lease.NewElector(cs.CoordinationV1(), "default", name,
					lease.WithIdentity(id), lease.WithTiming(timing), lease.WithLogger(testrun.Quiet))
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
		})
	})
	t.Run("ShardEngine", func(t *testing.T) {
		clustertest.ShardEngine(t, func(t *testing.T) func(string) runner.ShardEngine {
			group := fmt.Sprintf("conformance-%d", n.Add(1))
			return func(id string) runner.ShardEngine {
				e, err := lease.NewShardEngine(cs.CoordinationV1(), "default", group,
					lease.WithIdentity(id), lease.WithTiming(timing), lease.WithLogger(testrun.Quiet))
				if err != nil {
					t.Fatal(err)
				}
				return e
			}
		})
	})
}
