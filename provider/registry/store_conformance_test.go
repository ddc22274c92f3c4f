package registry_test

import (
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/registrytest"
)

func TestMemoryStoreConformance(t *testing.T) {
	registrytest.Conformance(t, 100*time.Millisecond, func(*testing.T) registry.Store { return registry.NewMemoryStore() })
}
