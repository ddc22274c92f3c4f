package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Outputs of two invocations as a benchmark binary writes them: headers,
// results, a skip with its reason, PASS.
const (
	sideOutput = `goos: linux
goarch: amd64
pkg: github.com/switchyard-go/switchyard/bench
cpu: Test CPU
BenchmarkStore/lib=switchyard/val=int/N=100/S=0-2   200000   70.5 ns/op   0 B/op   0 allocs/op
BenchmarkStore/lib=floor/val=int/N=100/S=0-2   200000   40.1 ns/op   0 B/op   0 allocs/op
BenchmarkStore/lib=peer/val=int/N=100/S=0-2   200000   60.0 ns/op   8 B/op   1 allocs/op
--- SKIP: BenchmarkIdleSubscriber/lib=peer/val=int/N=10000/idle=1-2
    idle_test.go:61: publisher blocked after 3 of 100 stores
BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=1-2   100000   1050 ns/op
PASS
`
	soloOutput = `goos: linux
pkg: github.com/switchyard-go/switchyard/provider/registry
BenchmarkHeartbeat/watchers=0-2   20000   900 ns/op   100 B/op   2 allocs/op
PASS
`
)

func testEnv() env {
	return env{
		CPU: "Test CPU", Cores: 2, GoVersion: "go1.26.0", OS: "linux/amd64", Commit: "abc1234",
		Peer: "github.com/telepresenceio/watchable v0.0.0", Date: "2026-11-25", Elapsed: 263 * time.Second,
		Side: "./bench",
	}
}

// TestRawRoundTrip checks that a report rendered from a raw file is the
// report of the run that wrote it.
func TestRawRoundTrip(t *testing.T) {
	runs := []struct {
		output string
		c      command
	}{
		{sideOutput, command{Pkg: "./bench", Line: "go test -run '^$' -bench '^BenchmarkStore$' ./bench   # 12s"}},
		{soloOutput, command{Pkg: registryPkg, Line: "go test -run '^$' -bench '^BenchmarkHeartbeat' " + registryPkg + "   # 3s"}},
	}
	var w rawWriter
	var results []result
	e := testEnv()
	for _, r := range runs {
		if err := w.ran([]byte(r.output), r.c); err != nil {
			t.Fatal(err)
		}
		rs, err := parse(strings.NewReader(r.output))
		if err != nil {
			t.Fatal(err)
		}
		for i := range rs {
			rs[i].Pkg = r.c.Pkg
		}
		results = append(results, rs...)
		e.Commands = append(e.Commands, r.c)
	}
	data, err := w.finish(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{sideOutput, soloOutput} {
		if !bytes.Contains(data, []byte(out)) {
			t.Errorf("the raw file does not hold an invocation's output as it was written:\n%s", out)
		}
	}

	gotResults, gotEnv, err := readRaw(bytes.NewReader(data), "raw.txt")
	if err != nil {
		t.Fatalf("readRaw: %v\n%s", err, data)
	}
	if diff := cmp.Diff(results, gotResults); diff != "" {
		t.Errorf("results (-written +read):\n%s", diff)
	}
	if diff := cmp.Diff(e, gotEnv); diff != "" {
		t.Errorf("environment (-written +read):\n%s", diff)
	}

	report := func(rs []result, e env) string {
		side, solo := splitByPkg(rs, e.Side)
		var b bytes.Buffer
		writeReport(&b, newTable(side), solo, e)
		return b.String()
	}
	want, got := report(results, e), report(gotResults, gotEnv)
	if got != want {
		t.Errorf("the report rendered from the raw file differs from the run's:\n%s", cmp.Diff(want, got))
	}
	for _, s := range []string{"70.5 ns", "in 4m23s", "abc1234", "# 12s"} {
		if !strings.Contains(got, s) {
			t.Errorf("the report rendered from the raw file lacks %q", s)
		}
	}
}

func TestReadRawRejects(t *testing.T) {
	var w rawWriter
	if err := w.ran([]byte(sideOutput), command{Pkg: "./bench", Line: "go test -bench Store"}); err != nil {
		t.Fatal(err)
	}
	whole, err := w.finish(testEnv())
	if err != nil {
		t.Fatal(err)
	}
	withoutEnv := string(whole[:bytes.LastIndex(whole, []byte(envMarker))])
	tests := []struct {
		name, input, want string
	}{
		{"a raw file of an older compare", sideOutput, "no # compare-run line"},
		{"no environment", withoutEnv, "no # compare-env line"},
		{"output after the last invocation", withoutEnv + sideOutput + envMarker + "{}\n", "after the last # compare-run line"},
		{"text after the environment", string(whole) + "BenchmarkX-2 1 1 ns/op\n", "text after the # compare-env line"},
		{"an invocation that measured nothing", "PASS\n" + runMarker + `{"Pkg":"./bench","Line":"go test -bench Nothing"}` + "\n", "go test -bench Nothing measured nothing"},
		{"an invocation without its command", sideOutput + runMarker + `{"Pkg":"./bench"}` + "\n", "names no package or no command"},
		{"a broken marker", sideOutput + runMarker + "{\n", "reading the invocation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readRaw(strings.NewReader(tt.input), "raw.txt")
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "raw.txt") {
				t.Errorf("readRaw = %v; want an error naming raw.txt and containing %q", err, tt.want)
			}
		})
	}
}
