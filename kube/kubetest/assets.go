package kubetest

import (
	"path/filepath"
	"testing"

	"github.com/switchyard-go/switchyard/internal/integration"
)

// binaries finds kube-apiserver and the etcd beside it.
func binaries(tb testing.TB) (apiserver, etcd string) {
	tb.Helper()
	find := func(name string) string {
		tb.Helper()
		return integration.Find(tb, integration.Lookup{
			Dirs:   []string{"SWITCHYARD_KUBE_ASSETS", "KUBEBUILDER_ASSETS"},
			Cached: filepath.Join("kube", name),
			Script: "kube/hack/apiserver.sh",
		})
	}
	return find("kube-apiserver"), find("etcd")
}
