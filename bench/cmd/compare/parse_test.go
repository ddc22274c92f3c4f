package main

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestResultLib(t *testing.T) {
	tests := []struct {
		name          string
		lib, scenario string
	}{
		{"BenchmarkStore/lib=peer/val=int/N=100/S=8", "peer", "BenchmarkStore/val=int/N=100/S=8"},
		{"BenchmarkState/lib=switchyard/val=k8s/N=100", "switchyard", "BenchmarkState/val=k8s/N=100"},
		{"BenchmarkOther/N=100", "", "BenchmarkOther/N=100"},
	}
	for _, tt := range tests {
		lib, scenario := libOf(result{Name: tt.name})
		if lib != tt.lib || scenario != tt.scenario {
			t.Errorf("libOf(%q) = %q, %q; want %q, %q", tt.name, lib, scenario, tt.lib, tt.scenario)
		}
	}
}
