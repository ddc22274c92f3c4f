package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// TestQuotientPairsWithinEachSample checks that a quotient is taken
// sample by sample, before the medians: a head whose own figure and
// reference both drift with the machine compares by their quotient.
func TestQuotientPairsWithinEachSample(t *testing.T) {
	res := func(ns, floor float64) []gobench.Result {
		m := map[string]float64{"ns/op": ns}
		if floor >= 0 {
			m["floor-ns/op"] = floor
		}
		return []gobench.Result{{Name: "BenchmarkBatch", Procs: 2, Iterations: 20, Metrics: m}}
	}
	s := samples{
		// The machine slows by half in round 2, and head's own figure
		// moves with it; each sample's quotient does not.
		base: {res(200, 100), res(300, 150), res(220, 110)},
		head: {res(180, 100), res(270, 150), res(99, -1)}, // round 3 lost its floor
	}
	q, err := parseQuotient("ns/op, floor-ns/op")
	if err != nil {
		t.Fatal(err)
	}
	derive(s, []quotient{q})
	var got *comparison
	tb := tabulate(s)
	for i := range tb.rows {
		if tb.rows[i].unit == "ns/op ÷ floor-ns/op" {
			got = &tb.rows[i]
		}
	}
	if got == nil {
		t.Fatalf("no row for the quotient among %+v", tb.rows)
	}
	want := comparison{name: "BenchmarkBatch", unit: "ns/op ÷ floor-ns/op",
		base: 2, head: 1.8, ratio: 0.9, ratioOK: true, lo: 0.9, hi: 0.9, pairedOK: true, lower: 2, pairs: 2}
	if diff := cmp.Diff(want, *got, cmp.AllowUnexported(comparison{}), cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("quotient row (-want +got):\n%s", diff)
	}
	if v := formatValue(got.head, got.unit); v != "1.80" {
		t.Errorf("a quotient prints as %q, want a plain number, 1.80", v)
	}
}

func TestReportCommandKeepsQuotients(t *testing.T) {
	c, err := parseFlags([]string{"-base", "HEAD", "-bench", ".", "-quotient", "ns/op,floor-ns/op"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := report{cfg: c, trees: [2]tree{{rev: "HEAD", short: "abc1234"}, {}}}
	if cmd := r.command(); !strings.Contains(cmd, "-quotient ns/op,floor-ns/op") {
		t.Errorf("reproducing command %q lacks the quotient", cmd)
	}
}
