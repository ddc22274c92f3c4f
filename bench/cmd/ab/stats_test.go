package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

func TestMedian(t *testing.T) {
	tests := []struct {
		name string
		vs   []float64
		want float64
	}{
		{"none", nil, 0},
		{"one", []float64{7}, 7},
		{"odd count, unsorted", []float64{5, 1, 9, 3, 7}, 5},
		{"even count takes the mean of the middle two", []float64{4, 1, 10, 2}, 3},
		{"two", []float64{100, 110}, 105},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.vs...)
			if got := median(tt.vs); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.vs, got, tt.want)
			}
			if diff := cmp.Diff(in, tt.vs); diff != "" {
				t.Errorf("median changed its argument (-before +after):\n%s", diff)
			}
		})
	}
}

// figs returns figures from values, a negative value standing for a round
// that lacks the figure.
func figs(vs ...float64) []figure {
	out := make([]figure, len(vs))
	for i, v := range vs {
		if v >= 0 {
			out[i] = figure{v: v, ok: true}
		}
	}
	return out
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name       string
		base, head []figure
		want       comparison
	}{
		{
			name: "paired quotients and head lower",
			base: figs(100, 200, 100, 300),
			head: figs(90, 220, 80, 300),
			// Medians 150 and 155; quotients 0.9, 1.1, 0.8, 1.
			want: comparison{base: 150, head: 155, ratio: 155.0 / 150, ratioOK: true,
				lo: 0.8, hi: 1.1, pairedOK: true, lower: 2, pairs: 4},
		},
		{
			name: "odd rounds",
			base: figs(10, 30, 20),
			head: figs(20, 60, 40),
			want: comparison{base: 20, head: 40, ratio: 2, ratioOK: true, lo: 2, hi: 2, pairedOK: true, lower: 0, pairs: 3},
		},
		{
			name: "a round missing on one side is left out of the pairing, not of the median",
			base: figs(100, 1000, 100),
			head: figs(50, -1, 200),
			// Base's median counts all three rounds; only rounds 1 and 3 pair.
			want: comparison{base: 100, head: 125, ratio: 1.25, ratioOK: true, lo: 0.5, hi: 2, pairedOK: true, lower: 1, pairs: 2},
		},
		{
			name: "no round with both sides",
			base: figs(100, -1),
			head: figs(-1, 50),
			want: comparison{base: 100, head: 50, ratio: 0.5, ratioOK: true},
		},
		{
			name: "zero base has no quotient, but still counts",
			base: figs(0, 0),
			head: figs(0, 1),
			want: comparison{base: 0, head: 0.5, pairs: 2},
		},
		{
			name: "a zero in one round leaves the others' quotients",
			base: figs(0, 4),
			head: figs(0, 2),
			want: comparison{base: 2, head: 1, ratio: 0.5, ratioOK: true, lo: 0.5, hi: 0.5, pairedOK: true, lower: 1, pairs: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.name, tt.want.unit = "BenchmarkX", "ns/op"
			got := compare("BenchmarkX", "ns/op", tt.base, tt.head)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(comparison{})); diff != "" {
				t.Errorf("compare (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{612.5, "ns/op", "612 ns"},
		{98.04, "ns/op", "98.0 ns"},
		{1364568, "ns/op", "1.36 ms"},
		{15099, "ns/op", "15.1 µs"},
		{999.7, "ns/op", "1.00 µs"},
		{2.5e9, "ns/op", "2.50 s"},
		{4301392, "publish-ns/op", "4.30 ms"},
		{0, "ns/op", "0 ns"},
		{379620, "B/op", "379620 B/op"},
		{6, "allocs/op", "6.00 allocs/op"},
		{0, "allocs/op", "0 allocs/op"},
		{227.3, "updates/snapshot", "227 updates/snapshot"},
		{0.012345, "x/op", "0.0123 x/op"},
		{9.996, "x/op", "10.0 x/op"},
		{-409.6, "retained-B/op", "-410 retained-B/op"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.v, tt.unit); got != tt.want {
			t.Errorf("formatValue(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestTabulate(t *testing.T) {
	res := func(name string, metrics map[string]float64) gobench.Result {
		return gobench.Result{Name: name, Procs: 2, Iterations: 100, Metrics: metrics}
	}
	skip := func(name, why string) gobench.Result {
		return gobench.Result{Name: name, Procs: 2, Skipped: why}
	}
	s := samples{
		base: {
			{
				res("BenchmarkA", map[string]float64{"allocs/op": 2, "B/op": 64, "ns/op": 100, "z-things/op": 3, "a-things/op": 1}),
				res("BenchmarkGone", map[string]float64{"ns/op": 5}),
				res("BenchmarkSkippedInHead", map[string]float64{"ns/op": 9}),
				res("BenchmarkOldUnit", map[string]float64{"ns/op": 7, "old/op": 1}),
				skip("BenchmarkNowhere", "too slow"),
			},
			{
				res("BenchmarkA", map[string]float64{"allocs/op": 2, "B/op": 64, "ns/op": 120, "z-things/op": 3, "a-things/op": 1}),
				res("BenchmarkGone", map[string]float64{"ns/op": 5}),
				res("BenchmarkSkippedInHead", map[string]float64{"ns/op": 9}),
				res("BenchmarkOldUnit", map[string]float64{"ns/op": 7, "old/op": 1}),
			},
		},
		head: {
			{
				res("BenchmarkA", map[string]float64{"allocs/op": 1, "B/op": 32, "ns/op": 110, "z-things/op": 3, "a-things/op": 1}),
				skip("BenchmarkSkippedInHead", "needs a bigger machine"),
				res("BenchmarkNew", map[string]float64{"ns/op": 5}),
				res("BenchmarkOldUnit", map[string]float64{"ns/op": 7}),
				skip("BenchmarkNowhere", "too slow"),
			},
			{
				// Round 2 of head failed to report A: it pairs round 1 only.
				skip("BenchmarkSkippedInHead", "needs a bigger machine"),
				res("BenchmarkNew", map[string]float64{"ns/op": 5}),
				res("BenchmarkOldUnit", map[string]float64{"ns/op": 7}),
			},
		},
	}
	got := tabulate(s)
	var rows [][2]string
	for _, r := range got.rows {
		rows = append(rows, [2]string{r.name, r.unit})
	}
	wantRows := [][2]string{
		{"BenchmarkA", "ns/op"}, {"BenchmarkA", "a-things/op"}, {"BenchmarkA", "z-things/op"},
		{"BenchmarkA", "B/op"}, {"BenchmarkA", "allocs/op"},
		{"BenchmarkOldUnit", "ns/op"},
	}
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		"BenchmarkGone ran only in base",
		"BenchmarkSkippedInHead ran only in base (head skipped it: needs a bigger machine)",
		"BenchmarkOldUnit: only base reported old/op",
		"BenchmarkNowhere skipped on both sides: too slow",
		"BenchmarkNew ran only in head",
	}
	if diff := cmp.Diff(wantNotes, got.notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	a := got.rows[0]
	want := comparison{name: "BenchmarkA", unit: "ns/op", base: 110, head: 110, ratio: 1, ratioOK: true,
		lo: 1.1, hi: 1.1, pairedOK: true, lower: 0, pairs: 1}
	if diff := cmp.Diff(want, a, cmp.AllowUnexported(comparison{})); diff != "" {
		t.Errorf("BenchmarkA's ns/op (-want +got):\n%s", diff)
	}
}

// With -test.cpu=1,2 a benchmark runs under one name for each GOMAXPROCS:
// the rows keep them apart by go test's suffix.
func TestTabulateProcs(t *testing.T) {
	one := func(procs int, ns float64) gobench.Result {
		return gobench.Result{Name: "BenchmarkA", Procs: procs, Iterations: 1, Metrics: map[string]float64{"ns/op": ns}}
	}
	round := []gobench.Result{one(1, 10), one(2, 6)}
	got := tabulate(samples{base: {round, round}, head: {round, round}})
	var names []string
	for _, r := range got.rows {
		names = append(names, r.name)
	}
	if diff := cmp.Diff([]string{"BenchmarkA-1", "BenchmarkA-2"}, names); diff != "" {
		t.Errorf("row names (-want +got):\n%s", diff)
	}
}
