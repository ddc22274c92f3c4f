package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// fakeRunner records the runs asked of it and answers each with a result
// whose ns/op says which run it was: 1000 for head plus the side's count
// of runs so far, so that a test can tell where each output ended up.
type fakeRunner struct {
	calls []side
	args  [][]string
	count [2]int
	fail  int // the call, counted from 1, that fails; 0 for none
}

func (f *fakeRunner) run(_ context.Context, sd side, args []string) ([]byte, error) {
	f.calls = append(f.calls, sd)
	f.args = append(f.args, args)
	if len(f.calls) == f.fail {
		return nil, errors.New("exit status 1")
	}
	f.count[sd]++
	return fmt.Appendf(nil, "goos: linux\nBenchmarkX-2   \t 100\t %d ns/op\nPASS", 1000*int(sd)+f.count[sd]), nil
}

func TestLoopOrder(t *testing.T) {
	tests := []struct {
		rounds int
		want   []side
	}{
		{2, []side{base, head, head, base}},
		{3, []side{base, head, head, base, base, head}},
		{6, []side{base, head, head, base, base, head, head, base, base, head, head, base}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.rounds), func(t *testing.T) {
			var f fakeRunner
			args := []string{"-test.bench", "."}
			if _, err := (loop{rounds: tt.rounds, args: args, log: io.Discard}).run(context.Background(), f.run); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, f.calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			for i, a := range f.args {
				if diff := cmp.Diff(args, a); diff != "" {
					t.Errorf("call %d's args (-want +got):\n%s", i+1, diff)
				}
			}
		})
	}
}

// TestLoopPairs checks that each output lands under its side and round,
// whichever side went first in that round.
func TestLoopPairs(t *testing.T) {
	var f fakeRunner
	var raw bytes.Buffer
	s, err := (loop{rounds: 3, args: []string{"-test.bench", "^BenchmarkX$"}, raw: &raw, log: io.Discard}).run(context.Background(), f.run)
	if err != nil {
		t.Fatal(err)
	}
	var got [2][]float64
	for sd := range s {
		for round, rs := range s[sd] {
			if len(rs) != 1 {
				t.Fatalf("%s round %d: %d results, want 1", side(sd), round+1, len(rs))
			}
			got[sd] = append(got[sd], rs[0].Metrics["ns/op"])
		}
	}
	// Each side's nth run is its nth round, though head ran before base in
	// round 2.
	want := [2][]float64{{1, 2, 3}, {1001, 1002, 1003}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ns/op by side and round (-want +got):\n%s", diff)
	}

	// The raw file can be read back as go test output, each run's result
	// followed by the line naming it.
	rs, err := gobench.Parse(bytes.NewReader(raw.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 6 {
		t.Errorf("raw file holds %d results, want 6", len(rs))
	}
	var comments []string
	for line := range strings.Lines(raw.String()) {
		if strings.HasPrefix(line, "#") {
			comments = append(comments, line)
		}
	}
	wantComments := []string{
		"# ab: base, round 1: base.test -test.bench '^BenchmarkX$'\n",
		"# ab: head, round 1: head.test -test.bench '^BenchmarkX$'\n",
		"# ab: head, round 2: head.test -test.bench '^BenchmarkX$'\n",
		"# ab: base, round 2: base.test -test.bench '^BenchmarkX$'\n",
		"# ab: base, round 3: base.test -test.bench '^BenchmarkX$'\n",
		"# ab: head, round 3: head.test -test.bench '^BenchmarkX$'\n",
	}
	if diff := cmp.Diff(wantComments, comments); diff != "" {
		t.Errorf("raw file's comment lines (-want +got):\n%s", diff)
	}
	if !strings.Contains(raw.String(), "PASS\n# ab: base, round 1") {
		t.Errorf("a comment line does not start a line of its own:\n%s", raw.String())
	}
}

func TestLoopFailure(t *testing.T) {
	f := fakeRunner{fail: 3}
	_, err := (loop{rounds: 2, log: io.Discard}).run(context.Background(), f.run)
	if err == nil || !strings.Contains(err.Error(), "round 2, head: exit status 1") {
		t.Errorf("run error = %v, want one naming round 2 and head", err)
	}
	if len(f.calls) != 3 {
		t.Errorf("%d runs, want 3: none after the failure", len(f.calls))
	}
}
