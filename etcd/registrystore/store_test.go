package registrystore_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/registrystore"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/registrytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// lease is the shortest etcd grants with its default settings.
const lease = 2 * time.Second

func TestConformance(t *testing.T) {
	srv := etcdtest.StartEmbedded(t)
	registrytest.Conformance(t, lease, func(t *testing.T) registry.Store {
		// Each test its own prefix, so that they run in parallel on one
		// server.
		return registrystore.New(etcdtest.NewClient(t, srv.Endpoints), "/"+t.Name())
	})
}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), etcdtest.WaitTimeout)
	t.Cleanup(cancel)
	return ctx
}
