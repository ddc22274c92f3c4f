package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInRounds(t *testing.T) {
	a := "go test -run '^$' -bench '^BenchmarkA$' -benchtime 10x -count 1 -benchmem ./bench"
	b := "go test -run '^$' -bench '^BenchmarkB$' -benchtime 10x -count 1 -benchmem ./bench"
	in := []command{
		{Pkg: "./bench", Line: a + timeSep + "1s"},
		{Pkg: "./bench", Line: b + timeSep + "2s"},
		{Pkg: "./bench", Line: b + timeSep + "3s"},
		{Pkg: "./bench", Line: b + timeSep + "2s"},
		{Pkg: "./other", Line: b + timeSep + "4s"}, // another package: not a round of the above
		{Pkg: "./bench", Line: a + timeSep + "1s"}, // not in a row with the first
	}
	want := []command{
		{Pkg: "./bench", Line: a + timeSep + "1s"},
		{Pkg: "./bench", Line: "for i in $(seq 3); do " + b + "; done" + timeSep + "2s, 3s, 2s"},
		{Pkg: "./other", Line: b + timeSep + "4s"},
		{Pkg: "./bench", Line: a + timeSep + "1s"},
	}
	if diff := cmp.Diff(want, inRounds(in)); diff != "" {
		t.Errorf("inRounds (-want +got):\n%s", diff)
	}
	if got := inRounds(nil); len(got) != 0 {
		t.Errorf("inRounds(nil) = %v; want none", got)
	}
}

// TestRoundsPairSamplesOfARound writes the raw file of a plan line run in
// two rounds, reads it back as -from does, and checks that the quotient's
// range pairs the two figures of each round, and that the report shows the
// rounds as one loop.
func TestRoundsPairSamplesOfARound(t *testing.T) {
	round := func(ours, floor string) string {
		return "pkg: github.com/switchyard-go/switchyard/bench\n" +
			"BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   " + ours + " ns/op\n" +
			"BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   " + floor + " ns/op\nPASS\n"
	}
	line := "go test -run '^$' -bench '^BenchmarkBatch$' -benchtime 20x -count 1 -benchmem ./bench"
	var w rawWriter
	// The machine ran the second round slower: paired by round, the
	// quotients are 3.00 and 1.60; the medians are 350 and 175.
	for _, r := range []struct{ ours, floor, took string }{{"300", "100", "1s"}, {"400", "250", "2s"}} {
		if err := w.ran([]byte(round(r.ours, r.floor)), command{Pkg: "./bench", Line: line + timeSep + r.took}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := w.finish(testEnv())
	if err != nil {
		t.Fatal(err)
	}
	results, e, err := readRaw(bytes.NewReader(data), "bench.txt")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := batchTarget(newTable(results)).measured, "ours ÷ floor 2.00× (1.60–3.00)"; got != want {
		t.Errorf("batchTarget = %q; want %q", got, want)
	}
	if len(e.Commands) != 2 {
		t.Fatalf("the raw file gives %d invocations; want one a round, 2", len(e.Commands))
	}
	var report bytes.Buffer
	writeReport(&report, newTable(results), nil, e)
	if want := "for i in $(seq 2); do " + line + "; done" + timeSep + "1s, 2s\n"; !strings.Contains(report.String(), want) {
		t.Errorf("the report does not show the rounds as %q", want)
	}
}
