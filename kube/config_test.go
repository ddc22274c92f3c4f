package kube_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-go/switchyard/kube"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// klog, which client-go logs through, starts its flush daemon at init.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	)
}

const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: one
  cluster: {server: "https://127.0.0.1:6443"}
- name: two
  cluster: {server: "https://127.0.0.1:7443"}
users:
- name: admin
  user: {token: secret}
contexts:
- name: one
  context: {cluster: one, user: admin}
- name: two
  context: {cluster: two, user: admin}
current-context: one
`

func TestConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		opts  []kube.Option
		host  string
		qps   float32
		burst int
	}{
		{"defaults", nil, "https://127.0.0.1:6443", kube.DefaultQPS, kube.DefaultBurst},
		{"rate limits", []kube.Option{kube.WithQPS(7, 9)}, "https://127.0.0.1:6443", 7, 9},
		{"context", []kube.Option{kube.WithContext("two")}, "https://127.0.0.1:7443", kube.DefaultQPS, kube.DefaultBurst},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := kube.Config(path, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != tt.host || cfg.QPS != tt.qps || cfg.Burst != tt.burst || cfg.BearerToken != "secret" {
				t.Errorf("Config = host %s, QPS %v, burst %d, token %q; want %s, %v, %d, the file's", cfg.Host, cfg.QPS, cfg.Burst, cfg.BearerToken, tt.host, tt.qps, tt.burst)
			}
		})
	}
	if _, err := kube.Config(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("Config of a missing file succeeded")
	}
}
