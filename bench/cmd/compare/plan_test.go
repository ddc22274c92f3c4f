package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// defaultSizes is the side-by-side package's -sizes default
// (bench/main_test.go): what a run without sizes measures.
const defaultSizes = "100,10000,100000"

// TestPlanMeasuresEachQuotientInOneRun checks that both figures of every
// quotient the issue's targets take come from one invocation of the plan,
// and from no other: the machine's speed drifts over minutes, so figures
// taken in different invocations make a quotient that drifts with it, and
// samples of one figure from two invocations would share a median.
func TestPlanMeasuresEachQuotientInOneRun(t *testing.T) {
	tb := newTable(nil)
	issueTargets(tb)
	if len(tb.divided) < 20 {
		t.Fatalf("the targets took %d quotients; want every figure they compare", len(tb.divided))
	}
	for _, d := range tb.divided {
		a, b := benchName(d[0]), benchName(d[1])
		ra, rb := runsOf(a), runsOf(b)
		if len(ra) != 1 || len(rb) != 1 || ra[0] != rb[0] {
			t.Errorf("%s is measured by plan runs %v and %s by %v; want both by the same one run", a, ra, b, rb)
		}
	}
}

// TestRunsOf checks the matching the test above relies on against cases
// whose answer is known from the plan.
func TestRunsOf(t *testing.T) {
	k8s := runsOf("BenchmarkStore/lib=floor/val=k8s/N=100/S=0")
	if len(k8s) != 1 {
		t.Fatalf("the floor's k8s Store at N=100 is measured by runs %v; want one", k8s)
	}
	tests := []struct {
		name string
		want bool // measured by the run that measures the floor's k8s Store
	}{
		{"BenchmarkStore/lib=switchyard/val=k8s/N=100000/S=8", true},
		{"BenchmarkStore/lib=peer/val=k8s/N=10000/S=0", true},
		{"BenchmarkStore/lib=peer/val=k8s/N=10000/S=8", false},         // skipped there
		{"BenchmarkStore/lib=switchyard/val=k8s/N=1000000/S=1", false}, // a size of its own
		{"BenchmarkStore/lib=switchyard/val=int/N=100/S=1", false},
		{"BenchmarkLoad/lib=floor/val=k8s/N=100", false},
	}
	for _, tt := range tests {
		runs := runsOf(tt.name)
		if got := slices.Contains(runs, k8s[0]); got != tt.want {
			t.Errorf("%s is measured by runs %v; by run %d: %v, want %v", tt.name, runs, k8s[0], got, tt.want)
		}
		if len(runs) != 1 {
			t.Errorf("%s is measured by runs %v; want exactly one", tt.name, runs)
		}
	}
}

// benchName is the benchmark's full name for an operand: lib= is its second
// level.
func benchName(o operand) string {
	top, rest, _ := strings.Cut(o.scenario, "/")
	return top + "/lib=" + o.lib + "/" + rest
}

// runsOf returns the indexes of the side-by-side runs of the plan that
// measure the benchmark name.
func runsOf(name string) []int {
	var out []int
	for i, r := range plan {
		if r.pkg == "" && measures(r, name) {
			out = append(out, i)
		}
	}
	return out
}

// measures reports whether go test, invoked as r says, runs the benchmark
// name: each level of the name matches the -bench pattern's element for
// it, not all the -skip pattern's elements match, and its N= level, if it
// has one, is among the run's sizes.
func measures(r run, name string) bool {
	levels := strings.Split(name, "/")
	if !matchLevels(r.bench, levels) {
		return false
	}
	if r.skip != "" && len(levels) >= len(strings.Split(r.skip, "/")) && matchLevels(r.skip, levels) {
		return false
	}
	sizes := r.sizes
	if sizes == "" {
		sizes = defaultSizes
	}
	for _, l := range levels {
		if n, ok := strings.CutPrefix(l, "N="); ok {
			return slices.Contains(strings.Split(sizes, ","), n)
		}
	}
	return true
}

// matchLevels reports whether every element of the slash-separated pattern
// that has a level in levels matches it, as go test's -bench and -skip do.
// The plan's patterns have no slash inside brackets or parentheses.
func matchLevels(pattern string, levels []string) bool {
	for i, p := range strings.Split(pattern, "/") {
		if i >= len(levels) {
			break
		}
		if !regexp.MustCompile(p).MatchString(levels[i]) {
			return false
		}
	}
	return true
}

// TestShortQuotientsRunInRounds checks that the figures of targets 5, 6
// and 7a, and of target 1's integers up to N=100,000, samples of a
// fraction of a second each, are taken in rounds that alternate them (see
// run.rounds).
func TestShortQuotientsRunInRounds(t *testing.T) {
	for _, name := range []string{
		"BenchmarkStore/lib=peer/val=int/N=10000/S=0",
		"BenchmarkIdleSubscriber/lib=switchyard/val=int/N=10000/idle=lazy",
		"BenchmarkKeyedSubscribers/lib=switchyard/val=int/N=10000/how=keys/S=10000",
		"BenchmarkLoad/lib=floor/val=int/N=100000",
	} {
		runs := runsOf(name)
		if len(runs) != 1 {
			t.Fatalf("%s is measured by plan runs %v; want one", name, runs)
		}
		if r := plan[runs[0]]; r.rounds < 3 || r.count != 1 {
			t.Errorf("%s is measured in %d rounds of %d samples; want 3 or more rounds of one", name, r.rounds, r.count)
		}
	}
}

// TestLargeRunsAreTheMillionEntryPointerStores checks that the runs only
// -large makes are exactly those measuring the Stores measuredLarge looks
// for, so that a report says rightly whether it has them, and that suite
// leaves them out without -large and keeps every other run.
func TestLargeRunsAreTheMillionEntryPointerStores(t *testing.T) {
	names := []string{
		"BenchmarkStore/lib=switchyard/val=k8s/N=1000000/S=0",
		"BenchmarkStore/lib=switchyard/val=proto/N=1000000/S=0",
	}
	for i, r := range plan {
		measuresLarge := false
		for _, name := range names {
			measuresLarge = measuresLarge || (r.pkg == "" && measures(r, name))
		}
		if r.large != measuresLarge {
			t.Errorf("plan run %d (%s, -sizes %q) is large: %v; want %v, whether it measures %v", i, r.bench, r.sizes, r.large, measuresLarge, names)
		}
	}
	all, short := suite(true), suite(false)
	if len(all) != len(plan)+len(soloPlan) {
		t.Errorf("suite(true) has %d runs; want the plan's %d and soloPlan's %d", len(all), len(plan), len(soloPlan))
	}
	for _, r := range short {
		if r.large {
			t.Errorf("suite(false) runs %s, a large run", r.bench)
		}
	}
	if want := len(all) - len(short); want < 2 {
		t.Errorf("suite(false) leaves out %d runs; want the two large ones at least", want)
	}
	if len(runsOf("BenchmarkStore/lib=switchyard/val=int/N=1000000/S=0")) != 1 {
		t.Error("the million-entry integer Stores are not measured by one run")
	}
}

// TestMarkedHeapRunsInOnePlanLine checks that the plan runs
// BenchmarkMarkedHeap, ours and the floor's in one invocation, without
// -large.
func TestMarkedHeapRunsInOnePlanLine(t *testing.T) {
	const base = "BenchmarkMarkedHeap/lib=%s/val=k8s/N=10000/S=8"
	ra, rb := runsOf(fmt.Sprintf(base, ours)), runsOf(fmt.Sprintf(base, floor))
	if len(ra) != 1 || len(rb) != 1 || ra[0] != rb[0] {
		t.Fatalf("ours is measured by plan runs %v and the floor by %v; want both by the same one run", ra, rb)
	}
	if plan[ra[0]].large {
		t.Errorf("plan run %d (%s) is large; want it in every report", ra[0], plan[ra[0]].bench)
	}
}
