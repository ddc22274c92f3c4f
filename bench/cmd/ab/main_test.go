package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string // what the error must name; empty for none
	}{
		{name: "minimal", args: []string{"-base", "HEAD~1", "-bench", "."}},
		{name: "passthrough", args: []string{"-base", "HEAD~1", "-bench", ".", "--", "-test.benchtime=200000x", "-sizes=100"}},
		{name: "missing base", args: []string{"-bench", "."}, wantErr: "-base is required"},
		{name: "missing bench", args: []string{"-base", "HEAD"}, wantErr: "-bench is required"},
		{name: "one round", args: []string{"-base", "HEAD", "-bench", ".", "-rounds", "1"}, wantErr: "-rounds 1: need at least 2"},
		{name: "negative rounds", args: []string{"-base", "HEAD", "-bench", ".", "-rounds", "-3"}, wantErr: "-rounds -3"},
		{name: "pkg outside", args: []string{"-base", "HEAD", "-bench", ".", "-pkg", "../other"}, wantErr: `-pkg "../other"`},
		{name: "pkg absolute", args: []string{"-base", "HEAD", "-bench", ".", "-pkg", "/tmp/x"}, wantErr: `-pkg "/tmp/x"`},
		{name: "test.count", args: []string{"-base", "HEAD", "-bench", ".", "--", "-test.count=5"}, wantErr: "-test.count=5 after --: each run takes one sample"},
		{name: "count", args: []string{"-base", "HEAD", "-bench", ".", "--", "-count", "5"}, wantErr: "-count after --: each run takes one sample"},
		{name: "double dash count", args: []string{"-base", "HEAD", "-bench", ".", "--", "--test.count=5"}, wantErr: "--test.count=5 after --"},
		{name: "test.run", args: []string{"-base", "HEAD", "-bench", ".", "--", "-test.run=TestX"}, wantErr: "-test.run=TestX after --: ab runs no tests"},
		{name: "run", args: []string{"-base", "HEAD", "-bench", ".", "--", "-run", "x"}, wantErr: "-run after --"},
		{name: "test.bench", args: []string{"-base", "HEAD", "-bench", ".", "--", "-test.bench=X"}, wantErr: "-test.bench=X after --: ab's own -bench"},
		{name: "test.benchtime is not test.bench", args: []string{"-base", "HEAD", "-bench", ".", "--", "-test.benchtime=1x", "-test.benchmem"}},
		{name: "quotient", args: []string{"-base", "HEAD", "-bench", ".", "-quotient", "ns/op,floor-ns/op", "-quotient", "ns/op, idle0-ns/op"}},
		{name: "quotient of one unit", args: []string{"-base", "HEAD", "-bench", ".", "-quotient", "ns/op"}, wantErr: `-quotient "ns/op": want two units`},
		{name: "quotient of three units", args: []string{"-base", "HEAD", "-bench", ".", "-quotient", "a,b,c"}, wantErr: `-quotient "a,b,c"`},
		{name: "unknown flag", args: []string{"-base", "HEAD", "-bench", ".", "-count", "3"}, wantErr: "-count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("parseFlags: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("parseFlags error = %v, want one naming %q", err, tt.wantErr)
			}
			var usage usageError
			if !errors.As(err, &usage) {
				t.Errorf("parseFlags error %v is not a usageError", err)
			}
		})
	}
}

func TestParseFlagsHelp(t *testing.T) {
	var out strings.Builder
	_, err := parseFlags([]string{"-h"}, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Errorf("parseFlags(-h) error = %v, want flag.ErrHelp", err)
	}
	if !strings.Contains(out.String(), "-base revision") {
		t.Errorf("usage does not describe -base:\n%s", out.String())
	}
}

func TestConfigArgs(t *testing.T) {
	c, err := parseFlags([]string{"-base", "HEAD", "-bench", "^BenchmarkStore$/N=100$", "--", "-test.benchtime=200000x", "-sizes=100"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-test.run", "^$", "-test.bench", "^BenchmarkStore$/N=100$", "-test.count", "1", "-test.benchmem",
		"-test.benchtime=200000x", "-sizes=100"}
	if diff := cmp.Diff(want, c.args()); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if c.rounds != 6 || c.pkg != "bench" || c.head != "" {
		t.Errorf("defaults: rounds %d, pkg %q, head %q; want 6, bench and the working tree", c.rounds, c.pkg, c.head)
	}
}
