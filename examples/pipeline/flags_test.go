package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseFlags(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	dir := t.TempDir()
	file := filepath.Join(dir, "routes.yaml")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    config // Token is checked separately when generated
		wantErr bool
	}{
		{"defaults", nil, map[string]string{"SWITCHYARD_TOKEN": "t"},
			config{GatewayAddr: "127.0.0.1:8080", ControlAddr: "127.0.0.1:9090", AdminAddr: "127.0.0.1:9091", ShutdownGrace: 15 * time.Second, Demo: true, Lease: 15 * time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelWarn, StartOnRegistryFailure: true, Token: "t"}, false},
		{"config dir turns the demo off", []string{"-config", dir}, map[string]string{"SWITCHYARD_TOKEN": "t", "SWITCHYARD_DISCOVERY_TOKEN": "d"},
			config{GatewayAddr: "127.0.0.1:8080", ControlAddr: "127.0.0.1:9090", AdminAddr: "127.0.0.1:9091", ShutdownGrace: 15 * time.Second, ConfigDir: dir, Lease: 15 * time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelWarn, StartOnRegistryFailure: true, Token: "t", DiscoveryToken: "d"}, false},
		{"explicit demo with a config dir", []string{"-config", dir, "-demo", "-lease", "1s", "-log-level", "debug", "-gateway-addr", ":1", "-control-addr", ":2", "-admin-addr", ":3", "-shutdown-grace", "5s"}, map[string]string{"SWITCHYARD_TOKEN": "t"},
			config{GatewayAddr: ":1", ControlAddr: ":2", AdminAddr: ":3", ShutdownGrace: 5 * time.Second, ConfigDir: dir, Demo: true, Lease: time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelDebug, StartOnRegistryFailure: true, Token: "t"}, false},
		{"demo off", []string{"-demo=false"}, map[string]string{"SWITCHYARD_TOKEN": "t"},
			config{GatewayAddr: "127.0.0.1:8080", ControlAddr: "127.0.0.1:9090", AdminAddr: "127.0.0.1:9091", ShutdownGrace: 15 * time.Second, Lease: 15 * time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelWarn, StartOnRegistryFailure: true, Token: "t"}, false},
		{"remote controller", []string{"-registry-url", "http://127.0.0.1:9090", "-start-on-registry-failure=false", "-control-addr", "127.0.0.1:9190", "-admin-addr", "127.0.0.1:9191"}, map[string]string{"SWITCHYARD_TOKEN": "t"},
			config{GatewayAddr: "127.0.0.1:8080", ControlAddr: "127.0.0.1:9190", AdminAddr: "127.0.0.1:9191", ShutdownGrace: 15 * time.Second, Demo: true, Lease: 15 * time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelWarn,
				RegistryURL: "http://127.0.0.1:9090", Token: "t"}, false},
		{"remote controller without a token", []string{"-registry-url", "http://127.0.0.1:9090"}, nil, config{}, true},
		{"remote controller URL without a host", []string{"-registry-url", "http://"}, map[string]string{"SWITCHYARD_TOKEN": "t"}, config{}, true},
		{"remote controller URL of another scheme", []string{"-registry-url", "tcp://127.0.0.1:9090"}, map[string]string{"SWITCHYARD_TOKEN": "t"}, config{}, true},
		{"etcd", []string{"-etcd", "http://127.0.0.1:2379, http://127.0.0.1:22379", "-etcd-prefix", "/mine"}, map[string]string{"SWITCHYARD_TOKEN": "t"},
			config{GatewayAddr: "127.0.0.1:8080", ControlAddr: "127.0.0.1:9090", AdminAddr: "127.0.0.1:9091", ShutdownGrace: 15 * time.Second, Demo: true, Lease: 15 * time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelWarn, StartOnRegistryFailure: true, Token: "t",
				Etcd: []string{"http://127.0.0.1:2379", "http://127.0.0.1:22379"}, EtcdPrefix: "/mine"}, false},
		{"etcd with the default prefix", []string{"-etcd", "127.0.0.1:2379"}, map[string]string{"SWITCHYARD_TOKEN": "t"},
			config{GatewayAddr: "127.0.0.1:8080", ControlAddr: "127.0.0.1:9090", AdminAddr: "127.0.0.1:9091", ShutdownGrace: 15 * time.Second, Demo: true, Lease: 15 * time.Second, Wait: 2 * time.Second, LogLevel: slog.LevelWarn, StartOnRegistryFailure: true, Token: "t",
				Etcd: []string{"127.0.0.1:2379"}, EtcdPrefix: "/switchyard"}, false},
		{"empty etcd endpoint", []string{"-etcd", "127.0.0.1:2379,"}, nil, config{}, true},
		{"etcd prefix not a key", []string{"-etcd", "127.0.0.1:2379", "-etcd-prefix", "switchyard"}, nil, config{}, true},
		{"remote controller and etcd", []string{"-registry-url", "http://127.0.0.1:9090", "-etcd", "127.0.0.1:2379"}, map[string]string{"SWITCHYARD_TOKEN": "t"}, config{}, true},
		{"bad log level", []string{"-log-level", "loud"}, nil, config{}, true},
		{"bad lease", []string{"-lease", "0s"}, nil, config{}, true},
		{"negative wait", []string{"-wait", "-1s"}, nil, config{}, true},
		{"gateway address without port", []string{"-gateway-addr", "localhost"}, nil, config{}, true},
		{"control address without port", []string{"-control-addr", "9090"}, nil, config{}, true},
		{"same address twice", []string{"-gateway-addr", "127.0.0.1:7000", "-control-addr", "127.0.0.1:7000"}, nil, config{}, true},
		{"admin on the control address", []string{"-admin-addr", "127.0.0.1:9090"}, nil, config{}, true},
		{"admin address without port", []string{"-admin-addr", "x"}, nil, config{}, true},
		{"negative shutdown grace", []string{"-shutdown-grace", "-1s"}, nil, config{}, true},
		{"missing config directory", []string{"-config", filepath.Join(dir, "nope")}, nil, config{}, true},
		{"config file instead of directory", []string{"-config", file}, nil, config{}, true},
		{"unknown flag", []string{"-nope"}, nil, config{}, true},
		{"stray argument", []string{"extra"}, nil, config{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, env(tt.env), io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(config{})); !tt.wantErr && diff != "" {
				t.Errorf("parseFlags(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}

	got, err := parseFlags(nil, env(nil), io.Discard)
	if err != nil || !got.TokenGenerated || len(got.Token) != 32 {
		t.Errorf("without SWITCHYARD_TOKEN: token generated %v, length %d, err %v; want a generated 32-character token", got.TokenGenerated, len(got.Token), err)
	}
	again, _ := parseFlags(nil, env(nil), io.Discard)
	if again.Token == got.Token {
		t.Error("two generated tokens are equal")
	}
}
