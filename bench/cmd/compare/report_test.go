package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustParse(t *testing.T, input string) *table {
	t.Helper()
	results, err := parse(strings.NewReader(input))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return newTable(results)
}

func TestMetricIsTheMedianOfSamples(t *testing.T) {
	tb := mustParse(t, `BenchmarkLoad/lib=switchyard/val=k8s/N=100-2  20000  900 ns/op
BenchmarkLoad/lib=switchyard/val=k8s/N=100-2  20000  5000 ns/op
BenchmarkLoad/lib=switchyard/val=k8s/N=100-2  20000  1000 ns/op
BenchmarkLoad/lib=peer/val=k8s/N=100-2  20000  600 ns/op
BenchmarkLoad/lib=peer/val=k8s/N=100-2  20000  800 ns/op
`)
	tests := []struct {
		lib  string
		want float64
	}{{ours, 1000}, {peer, 700}}
	for _, tt := range tests {
		got, ok := tb.metric("BenchmarkLoad/val=k8s/N=100", tt.lib, "ns/op")
		if !ok || got != tt.want {
			t.Errorf("metric(%s) = %v, %v; want %v, true", tt.lib, got, ok, tt.want)
		}
	}
	if _, ok := tb.metric("BenchmarkLoad/val=k8s/N=100", ours, "B/op"); ok {
		t.Error("metric found a unit no sample has")
	}
}

func TestTargets(t *testing.T) {
	tb := mustParse(t, `BenchmarkStore/lib=switchyard/val=int/N=100/S=0-2   2000   140 ns/op
BenchmarkStore/lib=peer/val=int/N=100/S=0-2   2000   100 ns/op
BenchmarkStore/lib=switchyard/val=int/N=100000/S=0-2   2000   300 ns/op
BenchmarkStore/lib=peer/val=int/N=100000/S=0-2   2000   100 ns/op
BenchmarkStore/lib=switchyard/val=k8s/N=100/S=1-2   2000   2500 ns/op
BenchmarkStore/lib=floor/val=k8s/N=100/S=0-2   2000   1000 ns/op
BenchmarkStore/lib=floor/val=k8s/N=100/S=8-2   2000   1200 ns/op
BenchmarkStore/lib=switchyard/val=int/N=10000/S=8-2   2000   1000 ns/op   100 B/op   5 allocs/op
BenchmarkStore/lib=peer/val=int/N=10000/S=8-2   200   200000 ns/op   5000 B/op   50 allocs/op
BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   1500000 ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   1000000 ns/op
BenchmarkLatency/lib=switchyard/val=k8s/N=100-2   2000   3000 ns/op   2000 p50-ns   9000 p99-ns
BenchmarkLatency/lib=switchyard/val=k8s/N=100000-2   2000   5000 ns/op   5000 p50-ns   20000 p99-ns
BenchmarkLatency/lib=floor/val=k8s/N=100-2   2000   2000 ns/op   1500 p50-ns   8000 p99-ns
BenchmarkLatency/lib=floor/val=k8s/N=100000-2   2000   2200 ns/op   1800 p50-ns   9000 p99-ns
BenchmarkLatency/lib=switchyard/val=int/N=100-2   2000   3000 ns/op
BenchmarkLatency/lib=switchyard/val=int/N=100000-2   2000   5000 ns/op
BenchmarkLatency/lib=peer/val=int/N=100-2   2000   4000 ns/op
BenchmarkLatency/lib=peer/val=int/N=100000-2   20   4000000 ns/op
BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how=keys/S=1-2   20000   400 ns/op
BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how=keys/S=1000-2   20000   440 ns/op
BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how=keys/S=10000-2   20000   500 ns/op
BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how=subset/S=1-2   2000   500 ns/op
BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how=subset/S=1000-2   2000   20000 ns/op
BenchmarkMemory/lib=switchyard/val=int/N=100000/S=0-2   1   100 ns/op   4 heap-MB   40 heap-B/entry
BenchmarkMemory/lib=peer/val=int/N=100000/S=0-2   1   100 ns/op   3.5 heap-MB   35 heap-B/entry
BenchmarkMemory/lib=switchyard/val=k8s/N=100000/S=8-2   1   100 ns/op   150 heap-MB
BenchmarkMemory/lib=peer/val=k8s/N=100000/S=8-2   1   100 ns/op   1200 heap-MB
BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=0-2   100000   1000 ns/op
BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=1-2   100000   1500 ns/op
BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=lazy-2   100000   1050 ns/op
--- SKIP: BenchmarkIdleSubscriber/lib=peer/val=int/N=10000/idle=1-2
    idle_test.go:61: publisher blocked after 3 of 100 stores
BenchmarkIdleSubscriber/lib=peer/val=int/N=10000/idle=0-2   100000   100 ns/op
`)
	var got []string
	for _, tg := range targets(tb) {
		got = append(got, tg.verdict+": "+tg.measured)
	}
	want := []string{
		"MISS: N=100 1.40×, N=100,000 3.00×; not measured: N=10,000, N=1,000,000",
		"n/a: ",
		"n/a: ",
		"PASS: ours ÷ floor 1.50×",
		"PASS: N=100 S=1 2.50×; not measured: N=100 S=8, N=10,000 S=1, N=10,000 S=8, N=100,000 S=1, N=100,000 S=8, N=1,000,000 S=1, N=1,000,000 S=8; not judged: the floor with eight subscribers told of each Store ÷ the floor, N=100 1.20×",
		"MISS: median 2.50× (2.00 µs → 5.00 µs), mean 1.67× (3.00 µs → 5.00 µs); p99 9.00 µs → 20.0 µs; not judged: the floor, a Go map whose subscriber is told of each Store, median 1.20× (1.50 µs → 1.80 µs), mean 1.10×",
		"PASS: lazy reader (Notify, State.UpdatesSince) +5.0%; Subscribe channel +50.0%; peer blocks",
		"PASS: SubscribeKeys channel: S=1,000 ÷ S=1 1.10×, S=10,000 ÷ S=1 1.25× (SubscribeSubset: S=1,000 ÷ S=1 40.0×)",
		"n/a: ",
		"n/a: ",
		"PASS: N=100,000 (40.0 vs 35.0 B/entry) 1.14×; not measured: N=1,000,000",
		"MISS: 200× faster, 50.0× fewer bytes",
		"n/a: ",
		"n/a: ",
		"PASS: 1.67× (3.00 µs → 5.00 µs); peer 1000× (4.00 µs → 4.00 ms)",
		"PASS: 150 MB vs 1.20 GB: 1/8.00",
		"n/a: ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
}

func TestReportShowsBlockedPeer(t *testing.T) {
	tb := mustParse(t, `BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=1-2   100000   1050 ns/op   700 idle0-ns/op   0.5 retained-MB
--- SKIP: BenchmarkIdleSubscriber/lib=peer/val=int/N=10000/idle=1-2
    idle_test.go:61: publisher blocked after 3 of 100 stores
`)
	reportHas(t, tb, "| int, N=10000, idle=1 | 1.05 µs | blocks | — | 700 ns | blocks | — | 500 kB | blocks | — | 1.50× |")
}

// reportHas checks that the report of tb has each of the lines want.
func reportHas(t *testing.T, tb *table, want ...string) {
	t.Helper()
	var b bytes.Buffer
	writeReport(&b, tb, nil, env{CPU: "Test CPU", Cores: 2, GoVersion: "go1.24.0"})
	for _, w := range want {
		if !strings.Contains(b.String(), w) {
			t.Errorf("report lacks the line %q:\n%s", w, b.String())
		}
	}
}

// TestKeyedTableDividesByThePairedFigure checks that the keyed table's
// ÷ S=1 divides a sample's Stores by the one subscriber's it took
// alongside, where the scenario has them, and by the S=1 run otherwise.
func TestKeyedTableDividesByThePairedFigure(t *testing.T) {
	const base = "BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how="
	tb := mustParse(t, base+"keys/S=1-2 100 100 ns/op 0 B/op 0 allocs/op\n"+
		base+"keys/S=10000-2 100 300 ns/op 150 S1-ns/op 0 B/op 0 allocs/op\n"+
		base+"none/S=1-2 100 50 ns/op 0 B/op 0 allocs/op\n"+
		base+"none/S=10000-2 100 60 ns/op 0 B/op 0 allocs/op\n")
	reportHas(t, tb,
		"| int, N=10000, how=keys, S=10000 | 300 ns | 150 ns | 0 B | 0 | 2.00× |",
		"| int, N=10000, how=none, S=10000 | 60.0 ns | — | 0 B | 0 | 1.20× |")
}

// TestMemoryAfterPassDividesByTheFloorAtItsS checks that the memory
// after a pass is divided by the floor's heap at the same S, not by its
// ns/op at S=0 as the Stores are.
func TestMemoryAfterPassDividesByTheFloorAtItsS(t *testing.T) {
	const base = "BenchmarkMemoryAfterPass/lib="
	tb := mustParse(t, base+"switchyard/val=k8s/N=100000/S=0-2 1 5 ns/op 140 heap-MB 1400 heap-B/entry\n"+
		base+"switchyard/val=k8s/N=100000/S=8-2 1 5 ns/op 280 heap-MB 2800 heap-B/entry\n"+
		base+"floor/val=k8s/N=100000/S=0-2 1 9 ns/op 140 heap-MB 1400 heap-B/entry\n"+
		base+"floor/val=k8s/N=100000/S=8-2 1 9 ns/op 700 heap-MB 7000 heap-B/entry\n")
	reportHas(t, tb,
		"| scenario | ours heap-MB | ours heap-B/entry | floor heap-B/entry | ÷ floor |",
		"| k8s, N=100000, S=0 | 140 MB | 1400 | 1400 | 1.00× |",
		"| k8s, N=100000, S=8 | 280 MB | 2800 | 7000 | 0.40× |")
}

// TestMarkedHeapShowsOursBesideTheFloor renders the section of
// BenchmarkMarkedHeap from its output (a run of 50 cycles on a 2-core AMD
// EPYC, one of whose cycles spiked): each figure of ours beside the
// floor's, no peer and no quotient.
func TestMarkedHeapShowsOursBesideTheFloor(t *testing.T) {
	tb := mustParse(t, `BenchmarkMarkedHeap/lib=switchyard/val=k8s/N=10000/S=8-2         	      50	  55070931 ns/op	        32.54 max-MB	         1.533 max÷median	        21.23 median-MB	         2.000 spikes-%	17085381 B/op	   79289 allocs/op
BenchmarkMarkedHeap/lib=floor/val=k8s/N=10000/S=8-2              	      50	  39720956 ns/op	        24.36 max-MB	         1.167 max÷median	        20.88 median-MB	         0 spikes-%	18785359 B/op	  128863 allocs/op
`)
	reportHas(t, tb,
		"## Heap marked cycle by cycle\n",
		"| scenario | ours median-MB | floor median-MB | ours max-MB | floor max-MB | ours max÷median | floor max÷median | ours spikes-% | floor spikes-% |\n"+
			"|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"+
			"| k8s, N=10000, S=8 | 21.2 | 20.9 | 32.5 | 24.4 | 1.53 | 1.17 | 2.00 | 0 |\n\n")
}

func TestFormat(t *testing.T) {
	tests := []struct {
		v    float64
		unit string
		want string
	}{
		{612.5, "ns/op", "612 ns"},
		{1364568, "ns/op", "1.36 ms"},
		{2.07e9, "ns/op", "2.07 s"},
		{0, "B/op", "0 B"},
		{379620, "B/op", "380 kB"},
		{1250, "heap-MB", "1.25 GB"},
		{4.4, "snapshots/op", "4.40"},
		{227.3, "updates/snapshot", "227"},
		{16169, "p50-µs", "16.2 ms"},
		{487, "p99-µs", "487 µs"},
		{44, "p50-us", "44.0 µs"},
		{0.101, "p50-ms", "101 µs"},
		{2.5, "p99-s", "2.50 s"},
		{24606, "req/s", "24,606"},
		{1234567, "heartbeats/s", "1,234,567"},
		{512, "req/s", "512"},
		{3, "retries/op", "3.00"},
	}
	for _, tt := range tests {
		if got := format(tt.v, tt.unit); got != tt.want {
			t.Errorf("format(%v, %q) = %q, want %q", tt.v, tt.unit, got, tt.want)
		}
	}
}

func TestReportPlacesSoloSectionsAfterSideBySide(t *testing.T) {
	tb := mustParse(t, "BenchmarkLoad/lib=switchyard/val=k8s/N=100-2  20000  900 ns/op\nBenchmarkLoad/lib=peer/val=k8s/N=100-2  20000  600 ns/op\n")
	solo := append(parsePkg(t, registryPkg, registryOutput), parsePkg(t, pipelinePkg, pipelineOutput)...)
	commands := []command{
		{Pkg: "./bench", Line: "go test -run '^$' -bench '^BenchmarkLoad$' -benchtime 20000x -count 3 -benchmem ./bench   # 9s"},
		{Pkg: registryPkg, Line: "go test -run '^$' -bench 'Heartbeat' -benchtime 20000x -count 3 -benchmem ./provider/registry   # 4s"},
		{Pkg: pipelinePkg, Line: "go test -run '^$' -bench 'Regist' -benchtime 500x -count 3 -benchmem ./examples/pipeline   # 3s"},
	}
	var b bytes.Buffer
	writeReport(&b, tb, solo, env{CPU: "Test CPU", Cores: 2, GoVersion: "go1.24.0", Commands: commands})
	var got []string
	for _, line := range shape(b.String()) {
		if strings.HasPrefix(line, "## ") || strings.HasPrefix(line, "go test") {
			got = append(got, line)
		}
	}
	want := []string{
		"## Targets",
		"## Load",
		"## Service registry",
		commands[1].Line,
		"## Pipeline gateway",
		commands[2].Line,
		"## How these figures were taken",
		commands[0].Line,
		commands[1].Line,
		commands[2].Line,
		"## Comparing before and after a change, with benchstat",
		"go test -run '^$' -bench '/lib=switchyard/' -benchmem -count 10 ./bench > old.txt",
		"go test -run '^$' -bench '/lib=switchyard/' -benchmem -count 10 ./bench > new.txt",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report outline (-want +got):\n%s", diff)
	}
}

func TestHandWrittenTailIsKept(t *testing.T) {
	old := []byte("# generated\n\nfigures\n\n---\n\n" + handMarker + "; the section below is written by hand -->\n\n## By hand\n\nkept\n")
	got := string(handWritten(old))
	want := "\n---\n\n" + handMarker + "; the section below is written by hand -->\n\n## By hand\n\nkept\n"
	if got != want {
		t.Errorf("handWritten = %q; want %q", got, want)
	}
	if tail := handWritten([]byte("# generated only\n")); tail != nil {
		t.Errorf("handWritten of a report without a hand-written part = %q", tail)
	}
}

// TestIdleTarget checks that target 5 is judged on the lazy reader, and
// that a report without it judges nothing.
func TestIdleTarget(t *testing.T) {
	const base = "BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle="
	tests := []struct{ input, want string }{
		{base + "0-2 100 100 ns/op\n" + base + "1-2 100 150 ns/op\n" + base + "lazy-2 100 120 ns/op\n",
			"MISS: lazy reader (Notify, State.UpdatesSince) +20.0%; Subscribe channel +50.0%"},
		{base + "0-2 100 100 ns/op\n" + base + "1-2 100 150 ns/op\n",
			"n/a: Subscribe channel +50.0%"},
		{base + "0-2 100 100 ns/op\n" + base + "lazy-2 100 99 ns/op\n",
			"PASS: lazy reader (Notify, State.UpdatesSince) -1.0%"},
		// Samples that took the figure without a reader alongside are
		// divided by it, not by idle=0's: +5% and +50%, where idle=0
		// would say +20% and +100%.
		{base + "0-2 100 100 ns/op\n" + base + "1-2 100 200 ns/op 133.3333 idle0-ns/op\n" + base + "lazy-2 100 120 ns/op 114.2857 idle0-ns/op\n",
			"PASS: lazy reader (Notify, State.UpdatesSince) +5.0%; Subscribe channel +50.0%"},
	}
	for _, tt := range tests {
		tg := idleTarget(mustParse(t, tt.input))
		if got := tg.verdict + ": " + tg.measured; got != tt.want {
			t.Errorf("idleTarget(%q) = %q, want %q", tt.input, got, tt.want)
		}
	}
}

func TestQuotientRangePairsSamplesInOrder(t *testing.T) {
	// Ours ran 300, 330 and 270 ns; the floor 100, 90 and 150. Paired in
	// the order they ran, the quotients are 3.00, 3.67 and 1.80 (paired by
	// value they would be 3.00, 3.00 and 2.20). The quotient of the medians
	// is 300 / 100.
	tb := mustParse(t, `BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   300 ns/op
BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   330 ns/op
BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   270 ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   100 ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   90 ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   150 ns/op
`)
	got := batchTarget(tb)
	// The range spans the limit of 2; the verdict is the median's, marked
	// as one the samples could have reversed.
	if want := "ours ÷ floor 3.00× (1.80–3.67)"; got.measured != want || got.verdict != "MISS, within noise" {
		t.Errorf("batchTarget = %q, %s; want %q, MISS, within noise", got.measured, got.verdict, want)
	}

	// One sample on either side has no range.
	tb = mustParse(t, `BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   300 ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   100 ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   200 ns/op
`)
	if got, want := batchTarget(tb).measured, "ours ÷ floor 2.00×"; got != want {
		t.Errorf("with one sample of ours, batchTarget = %q; want %q", got, want)
	}
}

// TestBatchTargetDividesByThePairedFloor checks that target 2 and the
// Batch table divide each sample by the floor's batches it took alongside
// (bench/batch_test.go), not by the floor's own scenario, when a run has
// those.
func TestBatchTargetDividesByThePairedFloor(t *testing.T) {
	tb := mustParse(t, `BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   300 ns/op   200 floor-ns/op
BenchmarkBatch/lib=switchyard/val=int/N=100000/k=10000-2   20   330 ns/op   150 floor-ns/op
BenchmarkBatch/lib=floor/val=int/N=100000/k=10000-2   20   100 ns/op
`)
	got := batchTarget(tb)
	if want := "ours ÷ floor 1.80× (1.50–2.20)"; got.measured != want || got.verdict != "PASS, within noise" {
		t.Errorf("batchTarget = %q, %s; want %q, PASS, within noise", got.measured, got.verdict, want)
	}
	reportHas(t, tb, "| int, N=100000, k=10000 | 315 ns | — | — | — | — | — | — | — | — | 175 ns | 1.80× |")
}

func TestVerdictWithinNoise(t *testing.T) {
	ranged := func(v, lo, hi float64) quot { return quot{v: v, lo: lo, hi: hi, ok: true, ranged: true} }
	tests := []struct {
		name string
		figs []quot // each against a limit of 2
		want string
	}{
		{"within, every pair within", []quot{ranged(1.5, 1.2, 1.9)}, "PASS"},
		{"within, a pair over", []quot{ranged(1.5, 1.2, 2.1)}, "PASS, within noise"},
		{"over, every pair over", []quot{ranged(2.5, 2.1, 2.9)}, "MISS"},
		{"over, a pair within", []quot{ranged(2.5, 1.9, 2.9)}, "MISS, within noise"},
		{"over, one sample: no range to tell by", []quot{{v: 2.5, ok: true}}, "MISS"},
		{"one firmly over, one over by noise", []quot{ranged(2.5, 1.9, 2.9), ranged(2.5, 2.2, 2.9)}, "MISS"},
		{"over by noise, and a shaky pass", []quot{ranged(2.5, 1.9, 2.9), ranged(1.5, 1.2, 2.1)}, "MISS, within noise"},
		{"missing figures do not count", []quot{{}, ranged(1.5, 1.2, 1.9)}, "PASS"},
	}
	for _, tt := range tests {
		var j judge
		for i, q := range tt.figs {
			j.add(fmt.Sprint("figure ", i), q, 2)
		}
		if got := j.target("t").verdict; got != tt.want {
			t.Errorf("%s: verdict %q; want %q", tt.name, got, tt.want)
		}
	}
}

// TestKeyedTarget checks that target 6 is judged on the SubscribeKeys
// channel with the other keyed readers' own verdicts beside it, and on the
// first of the others when the channel's rows are missing.
func TestKeyedTarget(t *testing.T) {
	const base = "BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how="
	keys := base + "keys/S=1-2 100 100 ns/op\n" + base + "keys/S=1000-2 100 120 ns/op\n" + base + "keys/S=10000-2 100 300 ns/op\n"
	lazy := base + "lazy/S=1-2 100 100 ns/op\n" + base + "lazy/S=1000-2 100 110 ns/op\n" + base + "lazy/S=10000-2 100 140 ns/op\n"
	part := base + "part/S=1-2 100 200 ns/op\n" + base + "part/S=1000-2 100 240 ns/op\n" + base + "part/S=10000-2 100 320 ns/op\n"
	lazypart := base + "lazypart/S=1-2 100 100 ns/op\n" + base + "lazypart/S=1000-2 100 105 ns/op\n" + base + "lazypart/S=10000-2 100 130 ns/op\n"
	tests := []struct{ input, want string }{
		{keys + lazy,
			"MISS (SubscribeKeys channel); lazy keyed reader (NotifyKeys, State.KeyUpdatesSince): PASS: " +
				"SubscribeKeys channel: S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 3.00×; " +
				"lazy keyed reader (NotifyKeys, State.KeyUpdatesSince): S=1,000 ÷ S=1 1.10×, S=10,000 ÷ S=1 1.40×"},
		{keys + lazy + part,
			"MISS (SubscribeKeys channel); lazy keyed reader (NotifyKeys, State.KeyUpdatesSince): PASS; a partition each (PartitionBy, Partitions.Subscribe): MISS: " +
				"SubscribeKeys channel: S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 3.00×; " +
				"lazy keyed reader (NotifyKeys, State.KeyUpdatesSince): S=1,000 ÷ S=1 1.10×, S=10,000 ÷ S=1 1.40×; " +
				"a partition each (PartitionBy, Partitions.Subscribe): S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 1.60×"},
		{part + lazy,
			"PASS (lazy keyed reader (NotifyKeys, State.KeyUpdatesSince)); a partition each (PartitionBy, Partitions.Subscribe): MISS: " +
				"lazy keyed reader (NotifyKeys, State.KeyUpdatesSince): S=1,000 ÷ S=1 1.10×, S=10,000 ÷ S=1 1.40×; " +
				"a partition each (PartitionBy, Partitions.Subscribe): S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 1.60×"},
		{keys,
			"MISS: SubscribeKeys channel: S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 3.00×"},
		{keys + part + lazypart,
			"MISS (SubscribeKeys channel); a partition each (PartitionBy, Partitions.Subscribe): MISS; a lazy partition reader each (Partitions.Notify, Partitions.State): PASS: " +
				"SubscribeKeys channel: S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 3.00×; " +
				"a partition each (PartitionBy, Partitions.Subscribe): S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 1.60×; " +
				"a lazy partition reader each (Partitions.Notify, Partitions.State): S=1,000 ÷ S=1 1.05×, S=10,000 ÷ S=1 1.30×"},
		{base + "lazy/S=1-2 100 100 ns/op\n" + base + "lazy/S=10000-2 100 160 ns/op\n",
			"MISS: lazy keyed reader (NotifyKeys, State.KeyUpdatesSince): S=10,000 ÷ S=1 1.60×; not measured: S=1,000 ÷ S=1"},
		// Samples that took the one subscriber's Stores alongside their
		// own are divided by those, not by the S=1 run.
		{base + "keys/S=1-2 100 100 ns/op\n" +
			base + "keys/S=1000-2 100 240 ns/op 200 S1-ns/op\n" +
			base + "keys/S=10000-2 100 300 ns/op 150 S1-ns/op\n" +
			base + "keys/S=10000-2 100 330 ns/op 300 S1-ns/op\n",
			"PASS, within noise: SubscribeKeys channel: S=1,000 ÷ S=1 1.20×, S=10,000 ÷ S=1 1.40× (1.10–2.00)"},
		// So is SubscribeSubset's figure beside them: 6,000 ÷ 200, not
		// ÷ 100.
		{base + "keys/S=1-2 100 100 ns/op\n" +
			base + "keys/S=1000-2 100 120 ns/op\n" +
			base + "subset/S=1-2 100 100 ns/op\n" +
			base + "subset/S=1000-2 100 6000 ns/op 200 S1-ns/op\n",
			"PASS: SubscribeKeys channel: S=1,000 ÷ S=1 1.20×; not measured: S=10,000 ÷ S=1 (SubscribeSubset: S=1,000 ÷ S=1 30.0×)"},
	}
	for _, tt := range tests {
		tg := keyedTarget(mustParse(t, tt.input))
		if got := tg.verdict + ": " + tg.measured; got != tt.want {
			t.Errorf("keyedTarget(%q) =\n%q, want\n%q", tt.input, got, tt.want)
		}
	}
}
