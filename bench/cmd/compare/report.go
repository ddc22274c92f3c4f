package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

const (
	ours = "switchyard"
	peer = "peer"
)

// table holds results by scenario (the name without lib=) and library, and
// remembers the order scenarios first appeared in. A benchmark run with
// -count has several samples.
type table struct {
	byScenario map[string]map[string][]result
	order      []string
}

func newTable(results []result) *table {
	t := &table{byScenario: map[string]map[string][]result{}}
	for _, r := range results {
		lib, scenario := r.lib()
		if t.byScenario[scenario] == nil {
			t.byScenario[scenario] = map[string][]result{}
			t.order = append(t.order, scenario)
		}
		t.byScenario[scenario][lib] = append(t.byScenario[scenario][lib], r)
	}
	return t
}

// skipped returns why lib's scenario was skipped, if none of its samples
// has figures.
func (t *table) skipped(scenario, lib string) string {
	why := ""
	for _, r := range t.byScenario[scenario][lib] {
		if r.Skipped == "" {
			return ""
		}
		why = r.Skipped
	}
	return why
}

// metric returns the median over the samples of one metric of lib in
// scenario.
func (t *table) metric(scenario, lib, unit string) (float64, bool) {
	var vs []float64
	for _, r := range t.byScenario[scenario][lib] {
		if v, ok := r.Metrics[unit]; ok && r.Skipped == "" {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

// scenarios returns the scenarios of one benchmark function, in order.
func (t *table) scenarios(bench string) []string {
	var out []string
	for _, s := range t.order {
		if s == bench || strings.HasPrefix(s, bench+"/") {
			out = append(out, s)
		}
	}
	return out
}

// section is one table of the report: the scenarios of one benchmark
// function, with the metrics worth showing for it.
type section struct {
	title, about string
	bench        string
	units        []string
	// peerBench, when set, is the benchmark whose peer results stand
	// against ours (the peer has no State, so its LoadAll does).
	peerBench string
}

var sections = []section{
	{
		title: "Store",
		about: "The publisher's cost of one Store into a map of N entries while S subscribers read every snapshot as fast as they can. " +
			"B/op and allocs/op count every goroutine, so they include the peer's per-subscriber copies of the map.",
		bench: "BenchmarkStore", units: []string{"ns/op", "B/op", "allocs/op"},
	},
	{
		title: "Store-to-subscriber latency",
		about: "One Store, then wait until the subscriber's goroutine finds the new value in a snapshot.",
		bench: "BenchmarkLatency", units: []string{"ns/op", "B/op"},
	},
	{
		title: "Bursts",
		about: "1,000 Stores on 100 keys while one subscriber spends 1 ms (sleeping) on every snapshot. " +
			"ns/op is one burst until the subscriber has the last Store; publish-ns/op the publisher's time alone. " +
			"Fewer snapshots with more updates each is coalescing at work; those two rows are not better or worse by ratio.",
		bench: "BenchmarkBurst", units: []string{"ns/op", "publish-ns/op", "snapshots/op", "updates/snapshot", "B/op"},
	},
	{
		title: "A subscriber that never reads",
		about: "Publisher throughput without (idle=0) and with (idle=1) one subscriber that never reads its channel. " +
			"retained-MB is how much more live heap (after a full GC) the map holds after the run's Stores than before them: " +
			"with a never-reading subscriber, switchyard keeps at most one pending update per key, the peer one per Store, without bound " +
			"(compare it with the run's iteration count in the commands below).",
		bench: "BenchmarkIdleSubscriber", units: []string{"ns/op", "retained-MB"},
	},
	{
		title: "Memory",
		about: "Live heap after a full GC: N entries, S subscribers each keeping its latest snapshot after 100 further Stores.",
		bench: "BenchmarkMemory", units: []string{"heap-MB"},
	},
	{
		title: "Load",
		about: "Load of one key (a deep copy of a Kubernetes-style object).",
		bench: "BenchmarkLoad", units: []string{"ns/op", "B/op", "allocs/op"},
	},
	{
		title: "LoadAll",
		about: "LoadAll: a deep copy of every entry.",
		bench: "BenchmarkLoadAll", units: []string{"ns/op", "B/op"},
	},
	{
		title: "A consistent view of the whole map",
		about: "switchyard's State (O(1), copies nothing) against the peer's LoadAll, the peer's only way to a consistent view.",
		bench: "BenchmarkState", units: []string{"ns/op", "B/op"}, peerBench: "BenchmarkLoadAll",
	},
	{
		title: "Consuming a subscription",
		about: "Stores into a map of 10,000 entries while one consumer handles every update delivered; one op is one Store, until the consumer has the last. " +
			"switchyard's consumer is message.HandleSubscription; the peer's is the loop its users write (range over snapshots, then over updates). " +
			"handled/op below 1 means snapshots coalesced several Stores.",
		bench: "BenchmarkHandleSubscription", units: []string{"ns/op", "B/op", "handled/op"},
	},
	{
		title: "A chain of three translators",
		about: "Head-to-tail latency of three stages over 10,000 keys, each mapping every entry to its value plus one: one Store at the head until a subscriber of the tail sees it. " +
			"switchyard's stages are translator.Derive runners; the peer's are goroutines that subscribe to their input and Store every update into their output.",
		bench: "BenchmarkChain", units: []string{"ns/op", "B/op", "allocs/op"},
	},
}

// writeReport writes the whole report: t holds the side-by-side results,
// solo those of the switchyard-only packages.
func writeReport(w io.Writer, t *table, solo []result, e env) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Benchmarks: switchyard and telepresenceio/watchable side by side\n\n")
	p("Generated by `go run ./bench/cmd/compare` on %s in %s. Do not edit by hand: run it again.\n\n", e.Date, e.Elapsed)
	if e.Quick {
		p("**Quick run (-quick): every benchmark ran once, the side-by-side ones at N=100. These figures check the suite; they measure nothing.**\n\n")
	}
	p("| | |\n|---|---|\n")
	p("| CPU | %s, %d cores |\n| OS | %s |\n| Go | %s |\n", e.CPU, e.Cores, e.OS, e.GoVersion)
	if e.Commit != "" {
		p("| Commit | %s |\n", e.Commit)
	}
	if e.Peer == "" {
		e.Peer = "github.com/telepresenceio/watchable"
	}
	p("| Peer | %s |\n\n", e.Peer)
	p("Each scenario runs the same code on the same inputs for both libraries (bench/lib.go adapts them). " +
		"Values are `int`, `k8s` (a Kubernetes-style object with a hand-written DeepCopy, bench/values.go) " +
		"or `proto` (a `structpb.Struct` message). **×** is peer ÷ switchyard: above 1, switchyard is faster or smaller. " +
		"The last sections, Service registry and Pipeline gateway, measure switchyard alone: the peer has neither.\n\n")

	writeTargets(w, t)
	for _, s := range sections {
		writeSection(w, t, s)
	}
	for _, s := range soloSections {
		writeSoloSection(w, solo, s, e.Commands)
	}

	p("## How these figures were taken\n\n")
	p("Every run has a fixed iteration count, so every report does the same work. " +
		"The peer runs fewer iterations than switchyard where one of its Stores copies the whole map for every subscriber " +
		"(N=10,000 and N=100,000, and LoadAll at large N); its per-op figures are averages over those iterations all the same. " +
		"Where a run takes several samples (-count), the tables show their median (for p50 and p99, the median of the samples' percentiles). " +
		"Each package's benchmark binary was built once with `go test -c` and run as:\n\n```\n")
	for _, c := range e.Commands {
		p("%s\n", c.Line)
	}
	p("```\n\n")
	p("To reproduce the whole report, from the repository root:\n\n```\ngo run ./bench/cmd/compare -o docs/benchmarks.md -raw bench.txt\n```\n\n")
	writeBenchstatHelp(w)
}

func writeSection(w io.Writer, t *table, s section) {
	scenarios := t.scenarios(s.bench)
	if len(scenarios) == 0 {
		return
	}
	fmt.Fprintf(w, "## %s\n\n%s\n\n", s.title, s.about)
	header, rule := "| scenario |", "|---|"
	for _, u := range s.units {
		header += fmt.Sprintf(" ours %s | peer %s | × |", u, u)
		rule += "---:|---:|---:|"
	}
	fmt.Fprintf(w, "%s\n%s\n", header, rule)
	for _, sc := range scenarios {
		peerScenario := sc
		if s.peerBench != "" {
			peerScenario = s.peerBench + strings.TrimPrefix(sc, s.bench)
		}
		row := "| " + label(sc) + " |"
		for _, u := range s.units {
			o, okO := t.metric(sc, ours, u)
			q, okP := t.metric(peerScenario, peer, u)
			row += fmt.Sprintf(" %s | %s | %s |", cell(t, sc, ours, u, o, okO), cell(t, peerScenario, peer, u, q, okP), ratio(q, okP, o, okO))
		}
		fmt.Fprintln(w, row)
	}
	fmt.Fprintln(w)
}

// label turns "BenchmarkStore/val=int/N=10000/S=8" into "int, N=10000, S=8".
func label(scenario string) string {
	parts := strings.Split(scenario, "/")[1:]
	for i, p := range parts {
		parts[i] = strings.TrimPrefix(p, "val=")
	}
	return strings.Join(parts, ", ")
}

func cell(t *table, scenario, lib, unit string, v float64, ok bool) string {
	if !ok {
		if why := t.skipped(scenario, lib); why != "" {
			if strings.Contains(why, "blocked") {
				return "blocks"
			}
			return "skipped"
		}
		return "—"
	}
	return format(v, unit)
}

func ratio(peerV float64, okP bool, oursV float64, okO bool) string {
	if !okP || !okO {
		return "—"
	}
	if oursV <= 0 || peerV < 0 {
		if peerV > 0 && oursV == 0 {
			return "∞"
		}
		return "—"
	}
	return formatRatio(peerV / oursV)
}

func formatRatio(r float64) string {
	switch {
	case r >= 1e5:
		return fmt.Sprintf("%.1e×", r)
	case r >= 100:
		return fmt.Sprintf("%.0f×", r)
	case r >= 10:
		return fmt.Sprintf("%.1f×", r)
	default:
		return fmt.Sprintf("%.2f×", r)
	}
}

// format prints v in the unit's natural scale, to three significant digits.
func format(v float64, unit string) string {
	switch {
	case strings.HasPrefix(unit, "ns/") || strings.HasPrefix(unit, "publish-ns/"):
		return scaled(v, []string{"ns", "µs", "ms", "s"}, 1000)
	case unit == "B/op" || unit == "retained-B/op":
		return scaled(v, []string{"B", "kB", "MB", "GB"}, 1000)
	case unit == "heap-MB" || unit == "retained-MB":
		return scaled(v*1e6, []string{"B", "kB", "MB", "GB"}, 1000)
	case isRate(unit):
		return grouped(v)
	default:
		if ns, ok := timeToNs(v, unit); ok {
			return scaled(ns, []string{"ns", "µs", "ms", "s"}, 1000)
		}
		return sig3(v)
	}
}

func scaled(v float64, names []string, step float64) string {
	i := 0
	for math.Abs(v) >= step && i < len(names)-1 {
		v /= step
		i++
	}
	return sig3(v) + " " + names[i]
}

// sig3 prints v with three significant digits and no exponent.
func sig3(v float64) string {
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// A target from the benchmark issue, judged from the table.
type target struct {
	name, measured string
	verdict        string // PASS, MISS or "n/a" when a figure is missing
}

func judged(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func targets(t *table) []target {
	var out []target
	for _, val := range []string{"int", "proto", "k8s"} {
		sc := "BenchmarkStore/val=" + val + "/N=10000/S=8"
		tg := target{name: fmt.Sprintf("Store at N=10,000, S=8 (%s): ≥100× faster and ≥100× fewer bytes than the peer", val), verdict: "n/a"}
		oT, ok1 := t.metric(sc, ours, "ns/op")
		pT, ok2 := t.metric(sc, peer, "ns/op")
		oB, ok3 := t.metric(sc, ours, "B/op")
		pB, ok4 := t.metric(sc, peer, "B/op")
		if ok1 && ok2 && ok3 && ok4 && oT > 0 && oB > 0 {
			tg.measured = fmt.Sprintf("%s faster, %s fewer bytes", formatRatio(pT/oT), formatRatio(pB/oB))
			tg.verdict = judged(pT/oT >= 100 && pB/oB >= 100)
		}
		out = append(out, tg)
	}

	lat := target{name: "Store-to-subscriber latency at N=100,000 within 2× of N=100 (int)", verdict: "n/a"}
	small, ok1 := t.metric("BenchmarkLatency/val=int/N=100", ours, "ns/op")
	large, ok2 := t.metric("BenchmarkLatency/val=int/N=100000", ours, "ns/op")
	if ok1 && ok2 && small > 0 {
		lat.measured = fmt.Sprintf("%s (%s → %s)", formatRatio(large/small), format(small, "ns/op"), format(large, "ns/op"))
		if ps, ok := t.metric("BenchmarkLatency/val=int/N=100", peer, "ns/op"); ok && ps > 0 {
			if pl, ok := t.metric("BenchmarkLatency/val=int/N=100000", peer, "ns/op"); ok {
				lat.measured += fmt.Sprintf("; peer %s (%s → %s)", formatRatio(pl/ps), format(ps, "ns/op"), format(pl, "ns/op"))
			}
		}
		lat.verdict = judged(large/small <= 2)
	}
	out = append(out, lat)

	for _, val := range []string{"k8s", "int"} {
		sc := "BenchmarkMemory/val=" + val + "/N=100000/S=8"
		tg := target{name: fmt.Sprintf("Heap with S=8 at N=100,000 (%s): ≤ 1/5 of the peer's", val), verdict: "n/a"}
		o, ok1 := t.metric(sc, ours, "heap-MB")
		q, ok2 := t.metric(sc, peer, "heap-MB")
		if ok1 && ok2 && o > 0 {
			tg.measured = fmt.Sprintf("%s vs %s: 1/%s", format(o, "heap-MB"), format(q, "heap-MB"), sig3(q/o))
			tg.verdict = judged(q/o >= 5)
		}
		out = append(out, tg)
	}

	idle := target{name: "A never-reading subscriber costs the publisher ≤ 10% throughput (int, N=10,000)", verdict: "n/a"}
	if cost, ok := idleCost(t, ours, 10000); ok {
		idle.measured = fmt.Sprintf("%+.1f%%", cost*100)
		if pc, ok := idleCost(t, peer, 10000); ok {
			idle.measured += fmt.Sprintf("; peer %+.1f%%", pc*100)
		} else if strings.Contains(t.skipped("BenchmarkIdleSubscriber/val=int/N=10000/idle=1", peer), "blocked") {
			idle.measured += "; peer blocks"
		}
		idle.verdict = judged(cost <= 0.10)
	}
	out = append(out, idle)
	return out
}

// idleCost returns how much slower lib's Stores are with a never-reading
// subscriber than without: 0.1 is 10%.
func idleCost(t *table, lib string, n int) (float64, bool) {
	base := fmt.Sprintf("BenchmarkIdleSubscriber/val=int/N=%d/idle=", n)
	without, ok1 := t.metric(base+"0", lib, "ns/op")
	with, ok2 := t.metric(base+"1", lib, "ns/op")
	if !ok1 || !ok2 || without <= 0 {
		return 0, false
	}
	return with/without - 1, true
}

func writeTargets(w io.Writer, t *table) {
	fmt.Fprintf(w, "## Targets\n\n| target | measured | |\n|---|---|---|\n")
	for _, tg := range targets(t) {
		measured := tg.measured
		if measured == "" {
			measured = "not measured in this run"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", tg.name, measured, tg.verdict)
	}
	fmt.Fprintln(w)
}

func writeBenchstatHelp(w io.Writer) {
	fmt.Fprint(w, `## Comparing before and after a change, with benchstat

The benchmark names carry the library as a key (`+"`lib=switchyard`, `lib=peer`"+`), so
[benchstat](https://pkg.go.dev/golang.org/x/perf/cmd/benchstat) can compare our own changes or pivot on the library.
Take several samples of the scenarios you care about on the old and the new code, on a quiet machine:

`+"```"+`
git stash   # or check out the old commit
go test -run '^$' -bench '/lib=switchyard/' -benchmem -count 10 ./bench > old.txt
git stash pop
go test -run '^$' -bench '/lib=switchyard/' -benchmem -count 10 ./bench > new.txt
go run golang.org/x/perf/cmd/benchstat@latest old.txt new.txt
`+"```"+`

To see the two libraries as columns of one run (the raw output of the compare command works too):

`+"```"+`
go run ./bench/cmd/compare -raw bench.txt
go run golang.org/x/perf/cmd/benchstat@latest -col /lib bench.txt
`+"```"+`

Add `+"`-sizes=100,10000`"+` after the package to skip N=100,000, and `+"`-short`"+` to also skip S=64.
CI runs every benchmark once (`+"`-benchtime=1x`"+`) so they keep compiling and running; it never judges a figure.
`)
}
