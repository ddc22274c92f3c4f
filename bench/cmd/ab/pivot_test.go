package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

func TestParsePivot(t *testing.T) {
	for _, tt := range []struct{ in, wantErr string }{
		{in: "lib=peer"},
		{in: "lib", wantErr: `-pivot "lib": want one element`},
		{in: "=peer", wantErr: `-pivot "=peer"`},
		{in: "lib=", wantErr: `-pivot "lib="`},
		{in: "lib=peer/N=100", wantErr: `-pivot "lib=peer/N=100"`},
	} {
		_, err := parsePivot(tt.in)
		if tt.wantErr == "" {
			if err != nil {
				t.Errorf("parsePivot(%q): %v", tt.in, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("parsePivot(%q) error = %v, want one naming %q", tt.in, err, tt.wantErr)
		}
	}
}

// TestPivotDividesWithinEachRun checks that a benchmark is divided by its
// counterpart of the same run, unit by unit, and that the counterpart
// itself, a benchmark without the key, and a unit the counterpart lacks
// get no quotient.
func TestPivotDividesWithinEachRun(t *testing.T) {
	res := func(name string, m map[string]float64) gobench.Result {
		return gobench.Result{Name: name, Procs: 2, Iterations: 10, Metrics: m}
	}
	run := func(ours, peer float64) []gobench.Result {
		return []gobench.Result{
			res("BenchmarkStore/lib=switchyard/N=100", map[string]float64{"ns/op": ours, "B/op": 0, "x/op": 1}),
			res("BenchmarkStore/lib=peer/N=100", map[string]float64{"ns/op": peer, "B/op": 6}),
			res("BenchmarkOther", map[string]float64{"ns/op": 5}),
		}
	}
	// The machine slows by half in round 2; the quotients hold still.
	s := samples{base: {run(120, 100), run(180, 150)}, head: {run(90, 100), run(135, 150)}}
	p, err := parsePivot("lib=peer")
	if err != nil {
		t.Fatal(err)
	}
	derivePivots(s, []pivot{p})
	got := s[head][1][0].Metrics
	want := map[string]float64{"ns/op": 135, "B/op": 0, "x/op": 1, "ns/op ÷ lib=peer": 0.9, "B/op ÷ lib=peer": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ours in head's round 2 (-want +got):\n%s", diff)
	}
	if n := len(s[head][1][1].Metrics); n != 2 {
		t.Errorf("the pivot itself got quotients: %v", s[head][1][1].Metrics)
	}
	if n := len(s[head][1][2].Metrics); n != 1 {
		t.Errorf("a benchmark without the key got quotients: %v", s[head][1][2].Metrics)
	}
	var row *comparison
	tb := tabulate(s)
	for i := range tb.rows {
		if tb.rows[i].unit == "ns/op ÷ lib=peer" {
			row = &tb.rows[i]
		}
	}
	if row == nil || row.base != 1.2 || row.head != 0.9 || row.lower != 2 {
		t.Errorf("the quotient's row = %+v, want base 1.2, head 0.9, head lower in both rounds", row)
	}
}
