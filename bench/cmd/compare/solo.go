package main

import (
	"cmp"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// The switchyard-only benchmarks live next to the code they measure, in
// other packages. The peer has no registry and no gateway, so their tables
// have no peer column.
const (
	registryPkg = "./provider/registry"
	pipelinePkg = "./examples/pipeline"

	// -bench patterns, matched like go test matches them against the
	// top-level benchmark name: a benchmark added to a family, or renamed
	// within it, is still run and shown.
	heartbeatBench    = `Heartbeat`
	changeBench       = `Change|Watch`
	gatewayBench      = `Gateway|Direct|Proxy`
	registrationBench = `Regist`
)

// soloSection is a report section of switchyard-only figures from one
// package: a table per benchmark family, then any benchmark of the package
// no family claimed, then the commands that measured it.
type soloSection struct {
	title, about string
	pkg          string
	tables       []soloTable
}

// soloTable shows the benchmarks whose top-level name matches bench; a
// benchmark goes to the first table of its section that matches it. Its
// columns are the units the benchmarks report.
type soloTable struct {
	title, about string
	bench        string
	// overhead adds, for each scenario named gateway, a row dividing its
	// figures by those of the scenario named direct instead.
	overhead bool
}

var soloSections = []soloSection{
	{
		title: "Service registry",
		about: "provider/registry with 1,000 instances registered (10 services of 100) and 100 watchers: " +
			"Server-Sent Events streams of one service (`GET /v1/discovery/watch?serviceId=svc-0`), each read by its own goroutine. " +
			"The registry is served by an httptest server on 127.0.0.1; B/op and allocs/op count every goroutine, clients and server alike.",
		pkg: registryPkg,
		tables: []soloTable{
			{
				title: "Heartbeat throughput",
				about: "Heartbeat: `PUT /v1/services/{id}/heartbeat` over keep-alive connections from parallel clients, round the 1,000 instances. " +
					"HeartbeatInProcess: `Registry.Heartbeat` called directly, without HTTP.",
				bench: heartbeatBench,
			},
			{
				title: "Change-to-watcher latency",
				about: "One op registers an instance of svc-0 over HTTP, then deregisters it, while two clients heartbeat all 1,000 instances without pause. " +
					"Each of the two changes is timed from the start of its request until the last of the 100 watchers has received the snapshot with the change: " +
					"p50 and p99 are over those changes; heartbeats/s is the background heartbeat rate meanwhile.",
				bench: changeBench,
			},
		},
	},
	{
		title: "Pipeline gateway",
		about: "examples/pipeline: the gateway (an httputil reverse proxy subscribed to the route table) in front of a local backend, everything on 127.0.0.1 in one process.",
		pkg:   pipelinePkg,
		tables: []soloTable{
			{
				title: "Direct and through the gateway",
				about: "GET requests over keep-alive connections from parallel clients (one per core) to an httptest backend answering a small JSON body: " +
					"direct calls the backend, gateway goes through a static route to the same backend. " +
					"p50 and p99 are each request's latency; ns/op is wall time per request over all clients. " +
					"The overhead row divides the gateway's figure by the direct one (req/s the other way round): above 1 is what the gateway adds.",
				bench:    gatewayBench,
				overhead: true,
			},
			{
				title: "Registration to first routed request",
				about: "The whole pipeline in process (registry, routing translator, gateway), with a route to a service that has no instance. " +
					"One op registers a backend (`POST /v1/services`) and sends requests through the gateway until one reaches it; " +
					"deregistering it and waiting for the route to lose it are outside the timing. " +
					"p50 and p99 are over the ops; ns/op is their mean.",
				bench: registrationBench,
			},
		},
	},
}

// topLevel returns the benchmark function's name: the name up to the first
// slash.
func topLevel(name string) string {
	top, _, _ := strings.Cut(name, "/")
	return top
}

func writeSoloSection(w io.Writer, results []result, s soloSection, commands []command) {
	var mine []result
	for _, r := range results {
		if r.Pkg == s.pkg {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return
	}
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("## %s\n\n%s\n\n", s.title, s.about)
	claimed := make([]bool, len(mine))
	for _, tb := range s.tables {
		re := regexp.MustCompile(tb.bench)
		var rows []result
		for i, r := range mine {
			if !claimed[i] && re.MatchString(topLevel(r.Name)) {
				claimed[i] = true
				rows = append(rows, r)
			}
		}
		p("### %s\n\n%s\n\n", tb.title, tb.about)
		if len(rows) == 0 {
			p("Not measured in this run: no benchmark of %s matched `-bench '%s'`.\n\n", s.pkg, tb.bench)
			continue
		}
		writeSoloTable(w, rows, tb.overhead)
	}
	var rest []result
	for i, r := range mine {
		if !claimed[i] {
			rest = append(rest, r)
		}
	}
	if len(rest) > 0 {
		p("### Other benchmarks of %s\n\nNo table above describes these.\n\n", s.pkg)
		writeSoloTable(w, rest, false)
	}
	p("Measured with:\n\n```\n")
	for _, c := range inRounds(commands) {
		if c.Pkg == s.pkg {
			p("%s\n", c.Line)
		}
	}
	p("```\n\n")
}

// writeSoloTable writes one row per benchmark (the median of its samples)
// and one column per unit any of them reports.
func writeSoloTable(w io.Writer, rows []result, overhead bool) {
	t := newTable(rows)
	units := soloUnits(rows)
	header, rule := "| benchmark |", "|---|"
	for _, u := range units {
		header += " " + unitHeader(u) + " |"
		rule += "---:|"
	}
	fmt.Fprintf(w, "%s\n%s\n", header, rule)
	for _, sc := range t.order {
		row := "| " + strings.TrimPrefix(sc, "Benchmark") + " |"
		for _, u := range units {
			v, ok := t.metric(sc, "", u)
			row += " " + cell(t, sc, "", u, v, ok) + " |"
		}
		fmt.Fprintln(w, row)
	}
	if overhead {
		for _, pair := range gatewayPairs(t.order) {
			row := fmt.Sprintf("| overhead: %s ÷ %s |", strings.TrimPrefix(pair[0], "Benchmark"), strings.TrimPrefix(pair[1], "Benchmark"))
			for _, u := range units {
				g, okG := t.metric(pair[0], "", u)
				d, okD := t.metric(pair[1], "", u)
				if isRate(u) {
					row += " " + ratio(d, okD, g, okG) + " |"
				} else {
					row += " " + ratio(g, okG, d, okD) + " |"
				}
			}
			fmt.Fprintln(w, row)
		}
	}
	fmt.Fprintln(w)
}

// gatewayPairs returns each scenario whose name says gateway with the
// scenario named direct in its place, ignoring case:
// "BenchmarkGateway/gateway" with "BenchmarkGateway/direct".
func gatewayPairs(scenarios []string) [][2]string {
	byLower := map[string]string{}
	for _, sc := range scenarios {
		byLower[strings.ToLower(sc)] = sc
	}
	var out [][2]string
	for _, sc := range scenarios {
		lower := strings.ToLower(sc)
		i := strings.LastIndex(lower, "gateway")
		if i < 0 {
			continue
		}
		if direct, ok := byLower[lower[:i]+"direct"+lower[i+len("gateway"):]]; ok {
			out = append(out, [2]string{sc, direct})
		}
	}
	return out
}

var (
	percentileUnit = regexp.MustCompile(`^(p\d+(?:\.\d+)?)-(?:ns|µs|us|ms|s)$`)
	timeUnit       = regexp.MustCompile(`-(ns|µs|us|ms|s)$`)
)

// soloUnits returns every unit the results report: rates first, then
// percentiles, then the standard ns/op, B/op and allocs/op, then the rest.
func soloUnits(rows []result) []string {
	seen := map[string]bool{}
	var units []string
	for _, r := range rows {
		for u := range r.Metrics {
			if !seen[u] {
				seen[u] = true
				units = append(units, u)
			}
		}
	}
	rank := func(u string) int {
		switch {
		case isRate(u):
			return 0
		case percentileUnit.MatchString(u):
			return 1
		case u == "ns/op":
			return 2
		case u == "B/op":
			return 3
		case u == "allocs/op":
			return 4
		default:
			return 5
		}
	}
	slices.SortFunc(units, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	return units
}

func isRate(unit string) bool { return strings.HasSuffix(unit, "/s") }

// unitHeader names a column: "p99-µs" is "p99", its cells carry the unit.
func unitHeader(unit string) string {
	if m := percentileUnit.FindStringSubmatch(unit); m != nil {
		return m[1]
	}
	return unit
}

// timeToNs converts a value in a time-suffixed unit ("p50-µs") to
// nanoseconds.
func timeToNs(v float64, unit string) (float64, bool) {
	m := timeUnit.FindStringSubmatch(unit)
	if m == nil {
		return 0, false
	}
	scale := map[string]float64{"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}[m[1]]
	return v * scale, true
}

// grouped prints a rate with thousands separators: 16919 is "16,919".
func grouped(v float64) string {
	if v < 1000 {
		return sig3(v)
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
