package integration_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard-go/switchyard/internal/integration"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The process tests run this test binary as their server.
	switch os.Getenv(serverEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "fail":
		fmt.Println("giving up at once")
		os.Exit(3)
	default:
		serve(os.Getenv(serverEnv))
	}
}

func TestFind(t *testing.T) {
	cache := t.TempDir()
	assets := t.TempDir()
	explicit := filepath.Join(t.TempDir(), "mine")
	for _, p := range []string{filepath.Join(cache, "tool", "tool"), filepath.Join(assets, "tool"), explicit} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lookup := integration.Lookup{Env: "TEST_TOOL_BIN", Dirs: []string{"TEST_TOOL_ASSETS"}, Cached: "tool/tool", Script: "hack/tool.sh"}

	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"cache", map[string]string{"SWITCHYARD_CACHE_DIR": cache}, filepath.Join(cache, "tool", "tool")},
		{"assets dir first", map[string]string{"SWITCHYARD_CACHE_DIR": cache, "TEST_TOOL_ASSETS": assets}, filepath.Join(assets, "tool")},
		{"assets dir without it", map[string]string{"SWITCHYARD_CACHE_DIR": cache, "TEST_TOOL_ASSETS": t.TempDir()}, filepath.Join(cache, "tool", "tool")},
		{"explicit path wins", map[string]string{"SWITCHYARD_CACHE_DIR": cache, "TEST_TOOL_ASSETS": assets, "TEST_TOOL_BIN": explicit}, explicit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("TEST_TOOL_BIN", "")
			t.Setenv("TEST_TOOL_ASSETS", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if got := integration.Find(t, lookup); got != tt.want {
				t.Errorf("Find = %s, want %s", got, tt.want)
			}
		})
	}
}

// recorder notes how a test ended without ending the real one.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()                       {}
func (r *recorder) Skip(...any)                   { r.skipped = true }
func (r *recorder) Fatalf(string, ...any)         { r.failed = true }
func (r *recorder) Skipf(format string, a ...any) { r.skipped = true }

func TestMissingSkipsUnlessRequired(t *testing.T) {
	lookup := integration.Lookup{Env: "TEST_TOOL_BIN", Cached: "tool/tool", Script: "hack/tool.sh"}
	t.Setenv("SWITCHYARD_CACHE_DIR", t.TempDir())
	t.Setenv("TEST_TOOL_BIN", "")

	t.Setenv(integration.RequireEnv, "")
	r := &recorder{TB: t}
	integration.Find(r, lookup)
	if !r.skipped || r.failed {
		t.Errorf("without %s: skipped=%v failed=%v, want a skip", integration.RequireEnv, r.skipped, r.failed)
	}

	t.Setenv(integration.RequireEnv, "1")
	r = &recorder{TB: t}
	integration.Find(r, lookup)
	if r.skipped || !r.failed {
		t.Errorf("with %s=1: skipped=%v failed=%v, want a failure", integration.RequireEnv, r.skipped, r.failed)
	}
}

func TestExplicitPathMustExist(t *testing.T) {
	t.Setenv("TEST_TOOL_BIN", filepath.Join(t.TempDir(), "absent"))
	t.Setenv(integration.RequireEnv, "")
	r := &recorder{TB: t}
	integration.Find(r, integration.Lookup{Env: "TEST_TOOL_BIN", Cached: "tool/tool", Script: "hack/tool.sh"})
	if !r.failed {
		t.Errorf("a set but wrong %s did not fail the test", "TEST_TOOL_BIN")
	}
}
