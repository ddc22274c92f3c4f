package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

const (
	ours  = "switchyard"
	peer  = "peer"
	floor = "floor" // a Go map under a mutex storing the same deep copies
)

// table holds results by scenario (the name without lib=) and library, and
// remembers the order scenarios first appeared in. A benchmark run with
// -count has several samples.
type table struct {
	byScenario map[string]map[string][]result
	order      []string
	// divided lists the operands of every quotient taken, so that
	// plan_test.go can check that the plan measures both in one invocation.
	divided [][2]operand
}

// operand is one figure a quotient divides: lib's median in scenario.
type operand struct{ scenario, lib string }

func newTable(results []result) *table {
	t := &table{byScenario: map[string]map[string][]result{}}
	for _, r := range results {
		lib, scenario := libOf(r)
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

// samples returns one metric of lib in scenario, sample by sample in the
// order they ran.
func (t *table) samples(scenario, lib, unit string) []float64 {
	var vs []float64
	for _, r := range t.byScenario[scenario][lib] {
		if v, ok := r.Metrics[unit]; ok && r.Skipped == "" {
			vs = append(vs, v)
		}
	}
	return vs
}

// metric returns the median over the samples of one metric of lib in
// scenario.
func (t *table) metric(scenario, lib, unit string) (float64, bool) {
	vs := t.samples(scenario, lib, unit)
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
	// noPeer drops the peer's columns: the scenarios are switchyard's
	// alone, or against the floor only.
	noPeer bool
	// floor adds, for ns/op, the floor's figure and ours divided by it.
	floor bool
	// floorEach adds, beside each of ours, the floor's figure in the same
	// scenario, without a quotient: for figures such as a share of cycles,
	// which is 0 for both when all is well.
	floorEach bool
	// floorUnit, when set, is the unit the floor's column shows instead
	// of ns/op, and its figure is the floor's at the scenario's own S
	// rather than at S=0.
	floorUnit string
	// floorPaired, when a scenario of ours has it, is the floor's figure
	// that each of its samples took too, alongside ours: the floor's
	// column shows it instead of the floor's own scenario.
	floorPaired string
	// relative adds, for ns/op, ours divided by ours in the scenario of
	// the same name but with the last key's value replaced by base.
	relative, base string
	// baseUnit, when a scenario has it, is the base's figure that each of
	// its samples took too, alongside its own: relative divides by that
	// instead.
	baseUnit string
}

var sections = []section{
	{
		title: "Store",
		about: "The publisher's cost of one Store into a map of N entries while S subscribers read every snapshot as fast as they can; " +
			"the keys are cycled over the whole map, so at large N every Store meets cold memory. " +
			"Kubernetes-style values are timed over whole garbage-collection cycles (-gccycles, bench/cycles_test.go), so that each Store pays its share of the collection its garbage causes, as in a writer that keeps writing; " +
			"their iteration count is the least number of Stores, and the figures are per Store of the span. " +
			"B/op and allocs/op count every goroutine, so they include the peer's per-subscriber copies of the map. " +
			"**floor** is a Go map under a mutex storing the same deep-copied value (bench/lib.go), and its figure in this table is without subscribers: " +
			"÷ floor divides ours by it, at any S: for Kubernetes-style values both run in one invocation, the floor's Stores at each N right after ours (bench/store_test.go runs each N's libraries in turn: the peer, switchyard, the floor); " +
			"for the others, in separate ones. For Kubernetes-style values the floor also runs with eight subscribers that are told of each Store and read nothing: " +
			"what eight readers on these cores cost a plain map's writer, shown under target 3 (up to N=100,000: no target reads it at a million entries, where the report leaves it out to save time).",
		bench: "BenchmarkStore", units: []string{"ns/op", "B/op", "allocs/op"}, floor: true,
	},
	{
		title: "Batch",
		about: "10,000 Stores into a map of 100,000 integers, applied together: switchyard's Batch, the floor's writes under one hold of its lock, " +
			"and the peer, which has no batches, with 10,000 Stores. One op is the whole batch; there are no subscribers. " +
			"Every Store overwrites a key present, so switchyard's batch is made in place; with held=State a State of the map " +
			"is taken before each batch, as a reader would, and the batch keeps what it replaces for that State (the floor and the peer have no States). " +
			"The floor's figure is taken alongside ours: each sample makes the same batches into a floor map of its own, four at a time taking turns with ours, " +
			"each map read whole (a Load of every key, not timed) before its turn, so that both meet their batches as warm as they would alone (bench/batch_test.go); " +
			"÷ floor divides the two, as target 2 does.",
		bench: "BenchmarkBatch", units: []string{"ns/op", "B/op", "allocs/op"}, floor: true, floorPaired: floorPairedUnit,
	},
	{
		title: "Store-to-subscriber latency",
		about: "One Store, then wait until the subscriber's goroutine finds the new value in a snapshot; keys cycled over the whole map. " +
			"ns/op is the mean; p50 and p99 are over the run's Stores. " +
			"switchyard's Stores are timed over whole garbage-collection cycles (-gccycles), as the Kubernetes-style Stores above are; " +
			"the peer's, which copy the map for the subscriber, meet many collections in any run. " +
			"**floor** is a Go map under a mutex storing the same deep-copied values, whose subscriber is told of each Store and reads the key from the map itself, under the lock (bench/lib.go): " +
			"it has no snapshots to make, and shows how much of the growth with N any map of these values pays. Its Stores run in the same invocation as ours, timed the same way; ÷ floor divides the means. " +
			"It runs Kubernetes-style values only: its Stores of integers allocate nothing, so timing them over collection cycles is not possible.",
		bench: "BenchmarkLatency", units: []string{"ns/op", "p50-ns", "p99-ns", "B/op"}, floor: true,
	},
	{
		title: "Keyed subscriptions",
		about: "A Store when S subscribers each watch one key of a map of 10,000 integers, every Store changing a watched key (so it concerns exactly one subscriber, whatever S), " +
			"400,000 Stores a run, so that each of 10,000 subscribers sees 20 and the figure is the steady state rather than each subscription's first write (how=subset, whose Stores cost tens of microseconds with 1,000 subscribers, 4,000 a run, in an invocation of its own). " +
			"With S above one, half the run's Stores go to a second map with one subscriber of the same kind, in blocks of 1,000 alternating with the S subscribers' (bench/keyed_test.go): ns/op is the S subscribers' Stores, S1-ns/op the one subscriber's, measured over the same seconds, and ÷ S=1 divides the two, as target 6 does. " +
			"This machine runs everything at one speed for seconds and then at about half of it, and samples of S=1 and S=10,000 taken seconds apart put the quotient anywhere from 1.2 to 2.4. " +
			"The subscribers never read, so the figure is the writer's work alone. how=keys is SubscribeKeys, indexed by key; " +
			"how=lazy is a lazy keyed reader, a NotifyKeys registration with its signal pending, holding the State it took last (as a reader of State.KeyUpdatesSince does between reads); how=part is one PartitionBy whose partition function gives each key a partition of its own, and a Partitions.Subscribe per subscriber (the per-node fan-out, with a node per key); how=lazypart is that index followed lazily, a Partitions.Notify registration per subscriber with its signal pending, holding the partition's State it took last (Partitions.State); how=subset is SubscribeSubset with a predicate per subscriber, " +
			"which every Store asks of every subscriber; how=none makes the same Stores with no subscription, a control for what cycling over S keys costs the map itself. " +
			"The S=1 rows are a run of their own; a run from before the paired samples divides by them. switchyard only.",
		bench: "BenchmarkKeyedSubscribers", units: []string{"ns/op", pairedUnit, "B/op", "allocs/op"}, noPeer: true, relative: "S", base: "1", baseUnit: pairedUnit,
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
		about: "Publisher throughput without (idle=0) and with (idle=1) one subscriber that never reads its channel, and, for switchyard, " +
			"with one lazy reader that never reads (idle=lazy: a Notify registration holding the State it took first, as a reader of State.UpdatesSince does between reads). " +
			"retained-MB is how much more live heap (after a full GC) the map holds after the run's Stores than before them: " +
			"with a never-reading subscriber, switchyard keeps at most one pending update per key, the peer one per Store, without bound " +
			"(compare it with the run's iteration count in the commands below). " +
			"With a reader, each sample also makes the same Stores into a second map of the library without one, in blocks of 1,000 taking turns " +
			"(bench/idle_test.go), half the run's Stores each: ns/op is the reader's map's, idle0-ns/op the other's, taken over the same fraction of a second, " +
			"and ÷ idle=0 divides the two, as target 5 does.",
		bench: "BenchmarkIdleSubscriber", units: []string{"ns/op", idlePairedUnit, "retained-MB"}, relative: "idle", base: "0", baseUnit: idlePairedUnit,
	},
	{
		title: "Memory",
		about: "Live heap after a full GC: N entries, S subscribers each keeping its latest snapshot after 100 further Stores (10 from N=100,000 on, where each of the peer's copies the map for each subscriber, and ten leave the same heap). heap-B/entry is the heap divided by N.",
		bench: "BenchmarkMemory", units: []string{"heap-MB", "heap-B/entry"},
	},
	{
		title: "Memory after every value was replaced",
		about: "Live heap after a full GC: a map of 100,000 Kubernetes-style entries after one Store to every key while S subscribers read every snapshot, each keeping the latest, which holds the last Store. " +
			"Every value was replaced under a snapshot a subscriber held: a map that kept the replaced values until it learned the snapshots were gone would hold them all here. " +
			"**floor** is a Go map under a mutex storing the same deep-copied values, whose subscribers are told of each Store and read nothing: it holds the map alone; ÷ floor divides the heaps. " +
			"The peer is left out: each of its Stores copies the map for each subscriber.",
		bench: "BenchmarkMemoryAfterPass", units: []string{"heap-MB", "heap-B/entry"}, noPeer: true, floor: true, floorUnit: "heap-B/entry",
	},
	{
		title: "Memory after long churn",
		about: "Live heap after a full GC: a map of 100 integer keys after a million writes cycled over them, each a change, with one reader of each kind: " +
			"none; subscribe, a Subscribe channel read as fast as it can be; lazy, a Notify reader taking the newest State and its UpdatesSince at each signal; " +
			"state, the writer taking the newest State after every write. Each holds what it read last until it reads again. " +
			"heap-MB is what the map and its reader hold once the reader has read the last write; growth-B/write is how much that heap grew from the first 100,000 writes to the end, divided by the writes in between: " +
			"about nothing for a map that keeps what its readers hold and no more. The collector runs every 10,000 writes, as it would in a program that allocates (bench/churn_test.go). " +
			"A guard against memory kept for good: before round forty-four the table's record blocks chained each other alive, and these readers grew the heap by 0.35, 0.59 and 2.2 bytes a write. switchyard only.",
		bench: "BenchmarkMemoryAfterChurn", units: []string{"heap-MB", "growth-B/write"}, noPeer: true,
	},
	{
		title: "Heap marked cycle by cycle",
		about: "The heap each garbage-collection cycle marks (/gc/heap/live:bytes, read as the cycle ends) while a writer Stores Kubernetes-style values, keys cycled over a map of 10,000 entries, " +
			"and eight subscribers read every snapshot as fast as they can; one op is one cycle, and the run's iteration count, in the commands below, is how many cycles it read (bench/marked_test.go). " +
			"median-MB and max-MB are the median and the largest heap a cycle marked (10^6 bytes), max÷median their quotient, and spikes-% the share of the cycles that marked more than 1.3 times the median. " +
			"A map whose replaced values die in the cycle that finds their snapshots gone marks about the same heap every cycle: a spike is a cycle in which the writer brought dead values back to life. " +
			"A guard against that: until round forty-five a trim that met a marking cycle made strong pointers of keep blocks that had lost their snapshots (internal/mvcc, collector.go), and in two runs of 150 cycles 7.3 and 9.3% of them spiked, the largest to twice the median. " +
			"**floor** is a Go map under a mutex storing the same deep-copied values, whose eight subscribers are told of each Store and read nothing: it keeps no older values, so its figures are the collector's own variation. " +
			"The peer is left out.",
		bench: "BenchmarkMarkedHeap", units: []string{"median-MB", "max-MB", "max÷median", "spikes-%"}, noPeer: true, floorEach: true,
	},
	{
		title: "Load",
		about: "Load of one key, a deep copy of its value, keys cycled over the whole map: integers (whose copy is free: the lookup is all there is) and Kubernetes-style objects. " +
			"The floor is a Go map lookup under a mutex plus the same copy.",
		bench: "BenchmarkLoad", units: []string{"ns/op", "B/op", "allocs/op"}, floor: true,
	},
	{
		title: "Reading every entry",
		about: "One pass over every entry of a map of N integers: switchyard's State().All() against the floor's range over its Go map. " +
			"The peer has no way to read its map without copying it (LoadAll, below). " +
			"fill=batch is switchyard's map filled by one Batch, as in every other scenario, which lays the trie out in memory in about the order All reads it; " +
			"fill=stores is it filled by one Store after another, which scatters the nodes over the heap as a long-churned map ends up, and which at a million entries reads memory far slower. " +
			"The floor's map is filled by one Store after another in both rows.",
		bench: "BenchmarkRange", units: []string{"ns/op", "B/op"}, noPeer: true, floor: true,
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
// solo those of the switchyard-only packages, e where they were taken.
// others are further runs of the same suite, which only the Targets table
// judges (runs.go).
func writeReport(w io.Writer, t *table, solo []result, e env, others ...otherRun) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("# Benchmarks: switchyard and telepresenceio/watchable side by side\n\n")
	p("Generated by `go run ./bench/cmd/compare` on %s in %s. Do not edit by hand: run it again.\n\n", e.Date, e.Elapsed)
	if e.Quick {
		p("**Quick run (-quick): every benchmark ran once, the side-by-side ones at N=100. These figures check the suite; they measure nothing.**\n\n")
	} else if measuredLarge(t) {
		p("This run measured everything, with -large: that includes %s.\n\n", strings.TrimSuffix(largeRows, ": -large runs them"))
	} else {
		p("**Without -large**, this run left out %s.\n\n", largeRows)
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

	if len(others) > 0 {
		writeRuns(w, e, others)
	}
	writeTargets(w, t, others)
	for _, s := range sections {
		writeSection(w, t, s)
	}
	for _, s := range soloSections {
		if slices.Contains(e.Unbuilt, s.pkg) {
			p("## %s\n\nNot measured in this run: the benchmarks of %s did not build.\n\n", s.title, s.pkg)
			continue
		}
		writeSoloSection(w, solo, s, e.Commands)
	}

	p("## How these figures were taken\n\n")
	p("Every run has a fixed iteration count, so every report does the same work; " +
		"a run with -gccycles=K goes on past its count to the end of the K-th garbage-collection cycle, starting where one ends, and reports per Store of that span; on a map just filled, the span starts after one whole untimed cycle, the one that grows the heap into fresh memory once, which costs a writer that keeps writing nothing more. " +
		"The peer runs fewer iterations than switchyard where one of its Stores copies the whole map for every subscriber " +
		"(N=10,000 and N=100,000, LoadAll at large N, and a consumer of its subscription); its per-op figures are averages over those iterations all the same. " +
		"Its proto Stores with subscribers at N=100,000 are not run: its eight subscribers' first snapshots clone 800,000 messages, a quarter of a minute of the report for a figure no target reads. " +
		"Where a run takes several samples (-count), the tables show their median (for p50 and p99, the median of the samples' percentiles); " +
		"a run in rounds (a shell loop below) takes one sample of each of its benchmarks a round, and the tables show the median over the rounds. " +
		"Each package's benchmark binary was built once with `go test -c` and run as:\n\n```\n")
	for _, c := range inRounds(e.Commands) {
		p("%s\n", c.Line)
	}
	p("```\n\n")
	p("To reproduce the whole report, from the repository root (without -large, which leaves out the million-entry Kubernetes-style and proto Stores, it takes about three minutes on two cores):\n\n```\ngo run ./bench/cmd/compare -large -o docs/benchmarks.md -raw bench.txt\n```\n\n")
	p("A change to how the report is written, not to what it measures, needs no new run: `-from` renders the report again from the raw file of the run that took the figures.\n\n```\ngo run ./bench/cmd/compare -from bench.txt -o docs/benchmarks.md\n```\n\n")
	p("One run can pass or miss a target near its limit by the machine's noise. To judge several runs of one commit, keep each run's raw file and give them all to `-from`: " +
		"the Targets table then counts the runs that pass each target, and the other tables show the first run.\n\n" +
		"```\nfor i in 1 2 3; do go run ./bench/cmd/compare -large -o /dev/null -raw bench$i.txt; done\n" +
		"go run ./bench/cmd/compare -from bench1.txt -from bench2.txt -from bench3.txt -o docs/benchmarks.md\n```\n\n")
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
		header += fmt.Sprintf(" ours %s |", unitHeader(u))
		rule += "---:|"
		if !s.noPeer {
			header += fmt.Sprintf(" peer %s | × |", unitHeader(u))
			rule += "---:|---:|"
		}
		if s.floorEach {
			header += fmt.Sprintf(" floor %s |", unitHeader(u))
			rule += "---:|"
		}
	}
	if s.floor {
		header += fmt.Sprintf(" floor %s | ÷ floor |", unitHeader(s.floorOf()))
		rule += "---:|---:|"
	}
	if s.relative != "" {
		header += fmt.Sprintf(" ÷ %s=%s |", s.relative, s.base)
		rule += "---:|"
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
			row += fmt.Sprintf(" %s |", cell(t, sc, ours, u, o, okO))
			if !s.noPeer {
				q, okP := t.metric(peerScenario, peer, u)
				row += fmt.Sprintf(" %s | %s |", cell(t, peerScenario, peer, u, q, okP), ratio(q, okP, o, okO))
			}
			if s.floorEach {
				f, okF := t.metric(sc, floor, u)
				row += fmt.Sprintf(" %s |", cell(t, sc, floor, u, f, okF))
			}
		}
		if s.floor {
			u, fs := s.floorOf(), sc
			if s.floorUnit == "" {
				fs = floorScenario(sc)
			}
			o, okO := t.metric(sc, ours, u)
			fl, fu := floor, u
			if _, ok := t.metric(sc, ours, s.floorPaired); ok && s.floorPaired != "" {
				fs, fl, fu = sc, ours, s.floorPaired
			}
			f, okF := t.metric(fs, fl, fu)
			row += fmt.Sprintf(" %s | %s |", cell(t, fs, fl, fu, f, okF), ratio(o, okO, f, okF))
		}
		fmt.Fprintln(w, row+relativeCell(t, s, sc))
	}
	fmt.Fprintln(w)
}

// relativeCell is the cell of a section's relative column for scenario sc,
// or nothing if the section has none.
func relativeCell(t *table, s section, sc string) string {
	if s.relative == "" {
		return ""
	}
	o, okO := t.metric(sc, ours, "ns/op")
	b, okB := t.metric(sc, ours, s.baseUnit)
	if !okB {
		b, okB = t.metric(withKey(sc, s.relative, s.base), ours, "ns/op")
	}
	return fmt.Sprintf(" %s |", ratio(o, okO, b, okB))
}

// floorOf is the unit of the section's floor column.
func (s section) floorOf() string {
	if s.floorUnit != "" {
		return s.floorUnit
	}
	return "ns/op"
}

// floorScenario is the floor's scenario for ours: the floor runs without
// subscribers, so S=anything becomes S=0.
func floorScenario(scenario string) string {
	return withKey(scenario, "S", "0")
}

// withKey returns scenario with the value of its key set to value, if it
// has that key.
func withKey(scenario, key, value string) string {
	parts := strings.Split(scenario, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, key+"=") {
			parts[i] = key + "=" + value
		}
	}
	return strings.Join(parts, "/")
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
	case strings.HasPrefix(unit, "ns/") || strings.HasSuffix(unit, "-ns/op"):
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

// targets judges the issue's targets (issue 14, performance round two),
// then the earlier ones the suite still measures. A target whose figures
// are all missing is "n/a"; one with some missing is judged on the rest and
// says which were not measured.
func targets(t *table) []target {
	return append(issueTargets(t), earlierTargets(t)...)
}

// issueTargets judges the targets of issue 14.
func issueTargets(t *table) []target {
	var out []target
	for _, val := range []string{"int", "k8s", "proto"} {
		out = append(out, storeAlone(t, val))
	}
	out = append(out, batchTarget(t), storeWithSubscribers(t), latencyTarget(t))
	out = append(out, idleTarget(t))
	out = append(out, keyedTarget(t))
	return append(out, loadTarget(t), rangeTarget(t), heapTarget(t))
}

// judge checks each of a target's figures: ok reports whether it is within
// its limit, and what it says. Missing figures are listed apart.
type judge struct {
	parts   []string
	missing []string
	fail    bool
	any     bool
	// firm reports that a figure over its limit had every pair of samples
	// over it too (or had one sample); shaky, that a figure within its
	// limit had a pair of samples over it. See verdict.
	firm, shaky bool
}

func (j *judge) add(what string, q quot, limit float64) {
	if !q.ok {
		j.missing = append(j.missing, what)
		return
	}
	j.any = true
	j.parts = append(j.parts, fmt.Sprintf("%s %s", what, q))
	switch {
	case q.v > limit:
		j.fail = true
		if !q.ranged || q.lo > limit {
			j.firm = true
		}
	case q.ranged && q.hi > limit:
		j.shaky = true
	}
}

// withinNoise marks a verdict that the samples of this run could have
// reversed: another run can give the other one.
const withinNoise = ", within noise"

// verdict is the judge's verdict. A MISS is within noise when every
// figure over its limit had a pair of samples within it; a PASS, when some
// figure had a pair of samples over its limit.
func (j *judge) verdict() string {
	switch {
	case j.fail && !j.firm, !j.fail && j.shaky:
		return judged(!j.fail) + withinNoise
	}
	return judged(!j.fail)
}

func (j *judge) target(name string) target {
	tg := target{name: name, verdict: "n/a"}
	if !j.any {
		return tg
	}
	tg.measured = strings.Join(j.parts, ", ")
	if len(j.missing) > 0 {
		tg.measured += "; not measured: " + strings.Join(j.missing, ", ")
	}
	tg.verdict = j.verdict()
	return tg
}

// quot is a quotient of two medians, with the lowest and highest of the
// quotients of the samples paired in the order they ran (the first of a
// with the first of b, and so on): how far the figure moved within the run.
type quot struct {
	v, lo, hi float64
	ok        bool
	ranged    bool // at least two pairs of samples
}

// String formats the quotient, and its range when there is one:
// "3.06× (2.41–3.30)".
func (q quot) String() string {
	if !q.ranged {
		return formatRatio(q.v)
	}
	return fmt.Sprintf("%s (%s–%s)", formatRatio(q.v), strings.TrimSuffix(formatRatio(q.lo), "×"), strings.TrimSuffix(formatRatio(q.hi), "×"))
}

// quotient returns a/b for two metrics: lib la's median in scenario sa over
// lib lb's in sb.
func quotient(t *table, sa, la, sb, lb, unit string) quot {
	return quotientOf(t, sa, la, unit, sb, lb, unit)
}

// quotientOf is quotient for figures of different units: la's ua in
// scenario sa over lb's ub in sb.
func quotientOf(t *table, sa, la, ua, sb, lb, ub string) quot {
	t.divided = append(t.divided, [2]operand{{sa, la}, {sb, lb}})
	a, ok1 := t.metric(sa, la, ua)
	b, ok2 := t.metric(sb, lb, ub)
	if !ok1 || !ok2 || b <= 0 {
		return quot{}
	}
	q := quot{v: a / b, ok: true}
	as, bs := t.samples(sa, la, ua), t.samples(sb, lb, ub)
	for i := range min(len(as), len(bs)) {
		if bs[i] <= 0 {
			return q
		}
		r := as[i] / bs[i]
		if i == 0 || r < q.lo {
			q.lo = r
		}
		if i == 0 || r > q.hi {
			q.hi = r
		}
	}
	q.ranged = min(len(as), len(bs)) >= 2
	return q
}

var bigSizes = []int{100, 10000, 100000, 1000000}

// measuredLarge reports whether t holds figures of the runs only -large
// makes (run.large).
func measuredLarge(t *table) bool {
	for _, val := range []string{"k8s", "proto"} {
		if _, ok := t.metric(fmt.Sprintf("BenchmarkStore/val=%s/N=1000000/S=0", val), ours, "ns/op"); ok {
			return true
		}
	}
	return false
}

func storeAlone(t *table, val string) target {
	var j judge
	for _, n := range bigSizes {
		sc := fmt.Sprintf("BenchmarkStore/val=%s/N=%d/S=0", val, n)
		q := quotient(t, sc, ours, sc, peer, "ns/op")
		limit := 1.5
		if n > 10000 {
			limit = 2
		}
		j.add(fmt.Sprintf("N=%s", grouped(float64(n))), q, limit)
	}
	return j.target(fmt.Sprintf("1. Store with no subscriber (%s): ≤ 1.5× the peer at N ≤ 10,000, ≤ 2× at 100,000 and 1,000,000 (ours ÷ peer)", val))
}

// floorPairedUnit is the floor's figure that each sample of
// BenchmarkBatch takes alongside the library's (see bench/batch_test.go).
const floorPairedUnit = "floor-ns/op"

// batchTarget judges target 2 on the floor's batches that each sample took
// alongside ours (floorPairedUnit); a run from before those divides by the
// floor's own scenario.
func batchTarget(t *table) target {
	var j judge
	sc := "BenchmarkBatch/val=int/N=100000/k=10000"
	q := quotientOf(t, sc, ours, "ns/op", sc, ours, floorPairedUnit)
	if !q.ok {
		q = quotient(t, sc, ours, sc, floor, "ns/op")
	}
	j.add("ours ÷ floor", q, 2)
	return j.target("2. Batch of 10,000 Stores into a 100,000-entry map (int): ≤ 2× the floor")
}

// storeWithSubscribers judges target 3 and shows beside it what eight
// readers cost the floor itself: its writer with eight subscribers told of
// each Store, divided by it without them (see floor in bench/lib.go).
func storeWithSubscribers(t *table) target {
	var j judge
	for _, n := range bigSizes {
		for _, s := range []int{1, 8} {
			sc := fmt.Sprintf("BenchmarkStore/val=k8s/N=%d/S=%d", n, s)
			q := quotient(t, sc, ours, floorScenario(sc), floor, "ns/op")
			j.add(fmt.Sprintf("N=%s S=%d", grouped(float64(n)), s), q, 3)
		}
	}
	tg := j.target("3. Store with 1 to 8 reading subscribers (k8s pointer values, keys cycled over the map): ≤ 3× the floor at every N up to 1,000,000")
	var plain []string
	for _, n := range bigSizes {
		if n >= 1000000 {
			break // the plan does not run the floor with subscribers there
		}
		sc := fmt.Sprintf("BenchmarkStore/val=k8s/N=%d/S=8", n)
		if q := quotient(t, sc, floor, floorScenario(sc), floor, "ns/op"); q.ok {
			plain = append(plain, fmt.Sprintf("N=%s %s", grouped(float64(n)), q))
		}
	}
	if len(plain) > 0 && tg.measured != "" {
		tg.measured += "; not judged: the floor with eight subscribers told of each Store ÷ the floor, " + strings.Join(plain, ", ")
	}
	return tg
}

func latencyTarget(t *table) target {
	tg := target{name: "4. Store-to-subscriber latency (k8s) at N=100,000 ≤ 2× N=100, by median and by mean", verdict: "n/a"}
	small, large := "BenchmarkLatency/val=k8s/N=100", "BenchmarkLatency/val=k8s/N=100000"
	med := quotient(t, large, ours, small, ours, "p50-ns")
	mean := quotient(t, large, ours, small, ours, "ns/op")
	if !med.ok || !mean.ok {
		return tg
	}
	p := func(sc, unit string) string { v, _ := t.metric(sc, ours, unit); return format(v, unit) }
	tg.measured = fmt.Sprintf("median %s (%s → %s), mean %s (%s → %s); p99 %s → %s",
		med, p(small, "p50-ns"), p(large, "p50-ns"), mean, p(small, "ns/op"), p(large, "ns/op"),
		p(small, "p99-ns"), p(large, "p99-ns"))
	var j judge
	j.add("median", med, 2)
	j.add("mean", mean, 2)
	tg.verdict = j.verdict()
	fmed := quotient(t, large, floor, small, floor, "p50-ns")
	fmean := quotient(t, large, floor, small, floor, "ns/op")
	if fmed.ok && fmean.ok {
		f := func(sc, unit string) string { v, _ := t.metric(sc, floor, unit); return format(v, unit) }
		tg.measured += fmt.Sprintf("; not judged: the floor, a Go map whose subscriber is told of each Store, median %s (%s → %s), mean %s",
			fmed, f(small, "p50-ns"), f(large, "p50-ns"), fmean)
	}
	return tg
}

func idleTarget(t *table) target {
	idle := target{name: "5. A never-reading subscriber with 10,000 pending keys costs writers ≤ 10% (int, N=10,000)", verdict: "n/a"}
	lazyQ := idleQuot(t, ours, 10000, "lazy")
	lazy, okLazy := lazyQ.v-1, lazyQ.ok
	ch, okCh := idleCost(t, ours, 10000, "1")
	var parts []string
	if okLazy {
		parts = append(parts, fmt.Sprintf("lazy reader (Notify, State.UpdatesSince) %+.1f%%", lazy*100))
		var j judge
		j.add("lazy", lazyQ, 1.10)
		idle.verdict = j.verdict()
	}
	if okCh {
		parts = append(parts, fmt.Sprintf("Subscribe channel %+.1f%%", ch*100))
	}
	if pc, ok := idleCost(t, peer, 10000, "1"); ok {
		parts = append(parts, fmt.Sprintf("peer %+.1f%%", pc*100))
	} else if strings.Contains(t.skipped("BenchmarkIdleSubscriber/val=int/N=10000/idle=1", peer), "blocked") {
		parts = append(parts, "peer blocks")
	}
	if len(parts) > 0 && (okLazy || okCh) {
		idle.measured = strings.Join(parts, "; ")
	}
	return idle
}

// pairedUnit is the figure of one subscriber that each sample of
// BenchmarkKeyedSubscribers with more takes, in blocks alternating with its
// own Stores (see bench/keyed_test.go).
const pairedUnit = "S1-ns/op"

// keyedTarget judges target 6 on the SubscribeKeys channel, which keeps
// every delivery guarantee of Subscribe as the target asks, and shows the
// other keyed readers beside it, each with its own verdict: the lazy keyed
// reader (NotifyKeys, then State.KeyUpdatesSince) and partition
// subscriptions. A report without the channel's rows judges the first of
// the others it has. Each quotient divides a sample's Stores by the one
// subscriber's it took alongside (pairedUnit); the figures of a run from
// before those are divided by the S=1 run's.
func keyedTarget(t *table) target {
	const name = "6. Keyed subscriptions, each on its own key: Store with 1,000 and with 10,000 subscribers ≤ 1.5× Store with one"
	const sc = "BenchmarkKeyedSubscribers/val=int/N=10000/how="
	readers := []struct{ how, name string }{
		{"keys", "SubscribeKeys channel"},
		{"lazy", "lazy keyed reader (NotifyKeys, State.KeyUpdatesSince)"},
		{"part", "a partition each (PartitionBy, Partitions.Subscribe)"},
		{"lazypart", "a lazy partition reader each (Partitions.Notify, Partitions.State)"},
	}
	var tg target
	judged, named := "", false
	for _, r := range readers {
		var j judge
		for _, s := range []int{1000, 10000} {
			many := fmt.Sprintf("%s%s/S=%d", sc, r.how, s)
			q := quotientOf(t, many, ours, "ns/op", many, ours, pairedUnit)
			if !q.ok { // a run from before the paired samples
				q = quotient(t, many, ours, sc+r.how+"/S=1", ours, "ns/op")
			}
			j.add(fmt.Sprintf("S=%s ÷ S=1", grouped(float64(s))), q, 1.5)
		}
		if !j.any {
			continue
		}
		rt := j.target(name)
		switch {
		case judged == "":
			tg, judged = rt, r.name
			tg.measured = r.name + ": " + rt.measured
		case !named:
			tg.verdict += " (" + judged + ")"
			named = true
			fallthrough
		default:
			tg.measured += "; " + r.name + ": " + rt.measured
			tg.verdict += "; " + r.name + ": " + rt.verdict
		}
	}
	subset := sc + "subset/S=1000"
	q := quotientOf(t, subset, ours, "ns/op", subset, ours, pairedUnit)
	if !q.ok { // a run from before the paired samples
		q = quotient(t, subset, ours, sc+"subset/S=1", ours, "ns/op")
	}
	if q.ok && tg.measured != "" {
		tg.measured += fmt.Sprintf(" (SubscribeSubset: S=1,000 ÷ S=1 %s)", formatRatio(q.v))
	}
	return tg
}

func loadTarget(t *table) target {
	var j judge
	for _, n := range bigSizes {
		sc := fmt.Sprintf("BenchmarkLoad/val=int/N=%d", n)
		q := quotient(t, sc, ours, sc, floor, "ns/op")
		j.add(fmt.Sprintf("N=%s", grouped(float64(n))), q, 1.5)
	}
	return j.target("7a. Load (int) ≤ 1.5× a Go map lookup plus the deep copy (ours ÷ floor)")
}

// rangeTarget judges the map filled by one Batch, as every scenario's map
// is, and shows beside the verdict the map filled by one Store after
// another, whose nodes lie scattered (see BenchmarkRange).
func rangeTarget(t *table) target {
	var j judge
	sc := "BenchmarkRange/val=int/N=1000000/fill=batch"
	q := quotient(t, sc, ours, sc, floor, "ns/op")
	j.add("N=1,000,000, filled by one Batch", q, 2)
	tg := j.target("7b. State().All() over 1,000,000 entries ≤ 2× ranging a Go map (ours ÷ floor)")
	st := "BenchmarkRange/val=int/N=1000000/fill=stores"
	if q := quotient(t, st, ours, st, floor, "ns/op"); q.ok && tg.measured != "" {
		tg.measured += fmt.Sprintf("; not judged: filled by one Store after another, as a long-churned map is laid out, %s", formatRatio(q.v))
	}
	return tg
}

func heapTarget(t *table) target {
	var j judge
	for _, n := range []int{100000, 1000000} {
		sc := fmt.Sprintf("BenchmarkMemory/val=int/N=%d/S=0", n)
		q := quotient(t, sc, ours, sc, peer, "heap-MB")
		what := fmt.Sprintf("N=%s", grouped(float64(n)))
		if o, ok1 := t.metric(sc, ours, "heap-B/entry"); ok1 {
			if p, ok2 := t.metric(sc, peer, "heap-B/entry"); ok2 {
				what += fmt.Sprintf(" (%s vs %s B/entry)", sig3(o), sig3(p))
			}
		}
		j.add(what, q, 1.25)
	}
	return j.target("8. Heap with no subscribers (int) ≤ 1.25× the peer's at N=100,000 and 1,000,000 (ours ÷ peer)")
}

// earlierTargets are the targets of the first benchmark issue, which the
// suite still checks.
func earlierTargets(t *table) []target {
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
	return out
}

// idleCost returns how much slower lib's Stores are with a never-reading
// reader of the kind idle (see BenchmarkIdleSubscriber) than without: 0.1
// is 10%.
func idleCost(t *table, lib string, n int, idle string) (float64, bool) {
	q := idleQuot(t, lib, n, idle)
	return q.v - 1, q.ok
}

// idlePairedUnit is the figure without a reader that each sample of
// BenchmarkIdleSubscriber with one takes alongside its own, in blocks
// taking turns (see bench/idle_test.go).
const idlePairedUnit = "idle0-ns/op"

// idleQuot is idleCost as a quotient of times: 1.1 is 10% slower. It
// divides each sample by the figure it took alongside (idlePairedUnit); a
// run from before those divides by the idle=0 scenario.
func idleQuot(t *table, lib string, n int, idle string) quot {
	base := fmt.Sprintf("BenchmarkIdleSubscriber/val=int/N=%d/idle=", n)
	if q := quotientOf(t, base+idle, lib, "ns/op", base+idle, lib, idlePairedUnit); q.ok {
		return q
	}
	return quotient(t, base+idle, lib, base+"0", lib, "ns/op")
}

// writeTargets writes the Targets table of t's run and, with others, a
// column that counts the runs passing each target.
func writeTargets(w io.Writer, t *table, others []otherRun) {
	fmt.Fprintf(w, "## Targets\n\nThe targets of issue 14 (numbered as there), then those of the first benchmark issue. "+
		"Each figure is a quotient of medians from this run. For the targets of issue 14, both medians come from one "+
		"invocation of the benchmarks, seconds apart, because the machine's speed drifts over minutes (plan_test.go "+
		"in bench/cmd/compare checks the plan for it); for targets 5, 6 and 7a and target 1's integers up to 100,000 entries, whose samples last a fraction of a second, "+
		"from five rounds of one invocation, each taking one sample of both figures, so that a block of samples of one "+
		"figure cannot fall in a faster minute than the block of the other. Targets 2, 5 and 6 pair them closer still: each of their "+
		"samples takes both figures, in blocks taking turns (see Batch, A subscriber that never reads, and Keyed subscriptions below). The sections below give the figures themselves. "+
		"In parentheses, where both figures have several samples: the lowest and the highest quotient of the samples "+
		"paired in the order they ran (first with first, and so on), which shows how far the figure moved within "+
		"this run. A verdict is taken on the quotient of medians; where the range spans the limit, another run can "+
		"give the other verdict, and from one run to the next a quotient moves by 10–20%% on a shared machine. "+
		"A verdict is marked *within noise* when the samples could have reversed it: a MISS whose every figure over "+
		"its limit had a pair of samples within it, a PASS with a figure that had a pair over its limit.\n\n")
	shown := targets(t)
	if len(others) == 0 {
		fmt.Fprintf(w, "| target | measured | |\n|---|---|---|\n")
		for _, tg := range shown {
			fmt.Fprintf(w, "| %s | %s | %s |\n", tg.name, measuredOrNot(tg), tg.verdict)
		}
		fmt.Fprintln(w)
		return
	}
	// Every run judges the same targets in the same order.
	verdicts := make([][]string, len(shown))
	for i, tg := range shown {
		verdicts[i] = append(verdicts[i], tg.verdict)
	}
	for _, o := range others {
		for i, tg := range targets(o.t) {
			verdicts[i] = append(verdicts[i], tg.verdict)
		}
	}
	fmt.Fprintf(w, "The last column judges each of the %d runs in turn and counts those that pass, among the runs that measured the target.\n\n", len(others)+1)
	fmt.Fprintf(w, "| target | measured in run 1 | run 1 | every run |\n|---|---|---|---|\n")
	for i, tg := range shown {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", tg.name, measuredOrNot(tg), tg.verdict, tally(verdicts[i]))
	}
	fmt.Fprintln(w)
}

func measuredOrNot(tg target) string {
	if tg.measured == "" {
		return "not measured in this run"
	}
	return tg.measured
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

Two cautions for small differences. A change anywhere in a package moves the code of its unchanged paths, and that
alone has moved a Store of tens of nanoseconds by 5–15 ns (round thirty-nine: a Store with no subscriber, 65 → 77 ns,
with a change on another path and with a copy of it that did nothing): a gain that small is better shown within one
binary, comparing the states the change is about. And this machine runs at about half speed for seconds at a time,
so alternate the old and new binaries, several rounds, rather than running one after the other. `+"`bench/cmd/ab`"+` does
that: it builds both revisions' benchmark binaries (the old one from a temporary git worktree), runs them in rounds
whose order alternates, and reports each side's median, the quotient of the medians and the range of the quotients
of each round's pair. `+"`-quotient`"+` compares a figure divided by the reference its benchmark times alongside,
and `+"`-pivot lib=peer`"+` ours divided by the peer's of the same run, which hold still where each figure drifts:

`+"```"+`
go run ./bench/cmd/ab -base HEAD~1 -bench '^BenchmarkBatch$/lib=switchyard/' -rounds 12 -quotient ns/op,floor-ns/op -- -test.benchtime=40x
go run ./bench/cmd/ab -base HEAD~1 -bench '^BenchmarkStore$/^lib=(switchyard|peer)$/^val=int$/N=100$/^S=0$' -rounds 10 -pivot lib=peer -- -test.benchtime=2000000x -sizes=100
`+"```"+`

To see the two libraries as columns of one run (the raw output of the compare command works too):

`+"```"+`
go run ./bench/cmd/compare -raw bench.txt
go run golang.org/x/perf/cmd/benchstat@latest -col /lib bench.txt
`+"```"+`

Add `+"`-sizes=100,10000`"+` after the package to skip N=100,000, and `+"`-short`"+` to also skip S=64.
Add `+"`-gccycles=1`"+` to time Stores and latencies over a whole garbage-collection cycle a sample (or K with -gccycles=K), as the report does for Kubernetes-style Stores and for our latencies: without it, a run that allocates less than the live heap (20,000 Stores into 100,000 entries) meets no collection, and its figures leave out the collection its garbage causes.
CI runs every benchmark once (`+"`-benchtime=1x`"+`) so they keep compiling and running; it never judges a figure.
`)
}
