package runner_test

import (
	"testing"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/runner/clustertest"
)

// The in-memory engine the tests stand on keeps the contracts that every
// engine is held to.
func TestMemEngineKeepsTheContracts(t *testing.T) {
	t.Run("Elector", func(t *testing.T) {
		clustertest.Elector(t, func(*testing.T) func(string) runner.Elector {
			e := newMemEngine()
			return func(id string) runner.Elector { return e.replica(id) }
		})
	})
	t.Run("ShardEngine", func(t *testing.T) {
		clustertest.ShardEngine(t, func(*testing.T) func(string) runner.ShardEngine {
			e := newMemEngine()
			return func(id string) runner.ShardEngine { return e.replica(id) }
		})
	})
}
