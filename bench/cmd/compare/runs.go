package main

import (
	"fmt"
	"io"
	"strings"
)

// One run of the suite decides a verdict near its limit by the machine's
// mood: on this project's 2-core machine, two runs an hour apart have put
// the same code's latency quotient at 1.75 and 3.10. So -from takes the raw
// files of several runs of one commit and judges each run on its own
// figures, the quotients paired within it as in a single run; the Targets
// table then counts, for every target, the runs that pass. The other tables
// show the first run: medians pooled over runs would pair figures taken
// minutes apart, which is what the plan avoids (plan_test.go).

// suiteRun is one run of the whole suite: its results, and where and how
// it ran.
type suiteRun struct {
	name    string // the raw file it was read from, for errors
	results []result
	env     env
}

// otherRun is a run judged beside the one the report's tables show.
type otherRun struct {
	t *table
	e env
}

// checkPoolable returns an error unless runs can be judged side by side:
// none is a -quick run, and all ran one commit's side-by-side package. A
// run alone is rendered as it is, a -quick one too: that is the report
// -quick printed.
func checkPoolable(runs []suiteRun) error {
	if len(runs) == 1 {
		return nil
	}
	for _, r := range runs {
		if r.env.Quick {
			return fmt.Errorf("%s is a -quick run, which measures nothing: it cannot be judged beside other runs", r.name)
		}
	}
	first := runs[0]
	large := func(r suiteRun) bool {
		side, _ := splitByPkg(r.results, r.env.Side)
		return measuredLarge(newTable(side))
	}
	for _, r := range runs[1:] {
		switch {
		case large(r) != large(first):
			return fmt.Errorf("%s and %s differ in -large (one has the million-entry Kubernetes-style and proto Stores, the other not): judge together only runs of one suite", first.name, r.name)
		case r.env.Commit != first.env.Commit:
			return fmt.Errorf("%s ran commit %q and %s commit %q: judge together only runs of one commit", first.name, first.env.Commit, r.name, r.env.Commit)
		case r.env.Side != first.env.Side:
			return fmt.Errorf("%s ran the side-by-side package %q and %s %q: judge together only runs of one suite", first.name, first.env.Side, r.name, r.env.Side)
		}
	}
	return nil
}

// tally counts the runs whose verdict on one target passes, among those
// that measured it, and lists each run's verdict in the order they ran:
// "2 of 3 PASS: PASS · MISS, within noise · PASS".
func tally(verdicts []string) string {
	var shown []string
	measured, passed := 0, 0
	for _, v := range verdicts {
		short := headline(v)
		shown = append(shown, short)
		if short == "n/a" {
			continue
		}
		measured++
		if strings.HasPrefix(short, "PASS") {
			passed++
		}
	}
	if measured == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%d of %d PASS: %s", passed, measured, strings.Join(shown, " · "))
}

// headline is the judged part of a verdict, without what is shown beside
// it: target 6's "PASS (SubscribeKeys channel); lazy keyed reader: MISS"
// is a PASS.
func headline(verdict string) string {
	if i := strings.Index(verdict, " ("); i >= 0 {
		verdict = verdict[:i]
	}
	return verdict
}

// writeRuns lists the runs a pooled report judges.
func writeRuns(w io.Writer, e env, others []otherRun) {
	fmt.Fprintf(w, "This report judges %d runs of the suite, each on its own figures (the Targets table counts the runs that pass each target); "+
		"every other table shows the first run. A run's quotients pair figures it took seconds apart, as a single run's do: "+
		"pooling samples over runs would pair figures taken minutes apart.\n\n", len(others)+1)
	fmt.Fprintf(w, "| run | date | took | CPU |\n|---:|---|---|---|\n")
	fmt.Fprintf(w, "| 1 | %s | %s | %s |\n", e.Date, e.Elapsed, e.CPU)
	for i, o := range others {
		fmt.Fprintf(w, "| %d | %s | %s | %s |\n", i+2, o.e.Date, o.e.Elapsed, o.e.CPU)
	}
	fmt.Fprintln(w)
}
