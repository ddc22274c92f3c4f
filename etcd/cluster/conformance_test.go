package cluster_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/runner/clustertest"
)

// The etcd engine keeps the contracts every engine is held to. One server
// serves every check, each under a key of its own; each candidate and
// member has a client of its own, as separate processes would.
func TestEtcdKeepsTheContracts(t *testing.T) {
	t.Parallel()
	srv := etcdtest.StartEmbedded(t)
	var n atomic.Int64
	t.Run("Elector", func(t *testing.T) {
		clustertest.Elector(t, func(t *testing.T) func(string) runner.Elector {
			key := fmt.Sprintf("/conformance/%d/leader", n.Add(1))
			return func(id string) runner.Elector {
				c := etcdtest.NewClient(t, srv.Endpoints)
				return cluster.NewElector(c, key, cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
			}
		})
	})
	t.Run("ShardEngine", func(t *testing.T) {
		clustertest.ShardEngine(t, func(t *testing.T) func(string) runner.ShardEngine {
			prefix := fmt.Sprintf("/conformance/%d/shards", n.Add(1))
			return func(id string) runner.ShardEngine {
				c := etcdtest.NewClient(t, srv.Endpoints)
				return cluster.NewShardEngine(c, prefix, cluster.WithIdentity(id), cluster.WithTTL(ttl), cluster.WithLogger(quiet))
			}
		})
	})
}
