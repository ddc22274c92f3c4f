package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/bench/internal/gobench"
)

// run is one invocation of a package's benchmark binary.
type run struct {
	pkg       string // the package directory; empty for the side-by-side package (-pkg)
	bench     string // the -bench pattern
	benchtime string // the -benchtime, always a fixed count
	count     int    // the -count: samples per benchmark; the report shows their median
	sizes     string // the -sizes of the side-by-side package, when not its default
	skip      string // the -skip pattern: what bench selects but must not run
	gcCycles  int    // the -gccycles of the side-by-side package: time whole collection cycles (bench/cycles_test.go)
	// large marks the runs of Kubernetes-style and proto Stores at a
	// million entries, which took three of the report's eight and a half
	// minutes: only -large runs them (see largeRows).
	large bool
	// rounds, when more than one, runs the invocation that many times in
	// turn, each taking count samples of every benchmark it selects: the
	// samples of two benchmarks a quotient divides then alternate, a
	// round's taken a fraction of a second apart, where count samples of
	// one benchmark in a row and then of the other took seconds, long
	// enough for this machine to change speed between the two (see the
	// comment above the idle subscriber's line).
	rounds int
}

// large is the -sizes of the runs at a million entries.
const large = "1000000"

// largeRows says what a run without -large leaves out, and why: the issue
// asks for N=1,000,000 where it fits in a report of five minutes, and
// these rows take close to two (two fills of a million messages, three of
// a million Kubernetes-style objects, each followed by whole collection
// cycles of a 1.5 GB heap: 1m41s-1m58s in round forty-seven's runs,
// 2m15s-2m46s in round fifty-one's, 1m41s-1m43s once the fills made their
// values beside in round fifty-two). The million-entry rows of integers,
// cheap to fill, run either way.
const largeRows = "the Stores of Kubernetes-style and proto values at N=1,000,000 (targets 1 and 3 at that size), which take under two minutes: -large runs them"

// plan is the full suite. The peer gets fewer iterations and samples where
// one of its Stores copies 10,000 or more entries per subscriber; the
// report says so. Cheap runs take several samples, so that one disturbed
// sample on a shared machine does not decide a figure.
var plan = []run{
	// Stores without subscribers cost 0.1-10 µs: a sample of 2,000 of them
	// lasts a fraction of a millisecond, and its median moved by half
	// between runs (the floor's too), so they get long samples, and five.
	// Integers' samples last 20-40 ms: five in a row of one library, then
	// five of the next, put target 1's samples at N=10,000 anywhere from
	// 0.71 to 1.73 times the peer's in one run (round forty-one), so they
	// run in rounds, as the idle subscriber below, each taking one sample
	// of the peer, ours and the floor at each N in turn.
	{bench: `^BenchmarkStore$/^lib=(switchyard|floor|peer)$/^val=int$//^S=0$`, benchtime: "200000x", count: 1, rounds: 5},
	// A proto Store costs 5-20 µs, so a sample of 20,000 lasts a tenth of
	// a second or more: three of them (five took 16-20 s of the report).
	{bench: `^BenchmarkStore$/^lib=(switchyard|floor|peer)$/^val=proto$//^S=0$`, benchtime: "20000x", count: 3},
	// Target 3 divides ours with subscribers by the floor without them, so
	// both run in one invocation, seconds apart: the machine's speed drifts
	// by tens of percent over minutes, and a quotient of figures taken
	// minutes apart moved with it (plan_test.go checks every target's
	// pairs). Within it, each N runs the peer, ours and the floor in turn
	// (BenchmarkStore), so the floor's samples follow ours at the same N
	// rather than every other N's. The peer's subscribed Stores need fewer
	// iterations (below).
	// Each Store of a k8s value allocates more than a kilobyte, so each
	// sample spans whole collection cycles (bench/cycles_test.go): 20,000
	// Stores after testing's forced collection met none at N=100,000, and
	// measured Stores without the collection they cause. One cycle a
	// sample: at N=100,000 a cycle is 80,000-300,000 Stores, half a second
	// or more, and three a sample made this line 2m14s of the report. In
	// four rounds alternating the two (round thirty-seven), the medians of
	// one-cycle samples were within the spread of three-cycle ones: ours
	// with eight subscribers 9.08 vs 9.58 µs, ours without 5.42 vs 5.22,
	// the floor 5.04 vs 4.26, whose samples ranged 3.31-5.22 either way.
	{bench: `^BenchmarkStore$/^lib=(switchyard|floor|peer)$/^val=k8s$//^S=[018]$`, skip: `^BenchmarkStore$/^lib=peer$///^S=[1-9]`, benchtime: "20000x", count: 5, gcCycles: 1},
	// Ours with subscribers, integers and protos: no target of issue 14
	// reads them, and the peer's beside them are 100-2,000 times slower;
	// 10,000 Stores a sample (15 s of the report at 20,000).
	{bench: `^BenchmarkStore$/^lib=switchyard$/^val=(int|proto)$//^S=[1-9]`, benchtime: "10000x", count: 3},
	{bench: `^BenchmarkStore$/^lib=peer$//^N=100$/^S=[1-9]`, benchtime: "2000x", count: 3},
	{bench: `^BenchmarkStore$/^lib=peer$//^N=10000$/^S=[18]$`, benchtime: "200x", count: 1},
	{bench: `^BenchmarkStore$/^lib=peer$//^N=10000$/^S=64$`, benchtime: "50x", count: 1},
	// Not the peer's proto messages with subscribers at 100,000 entries:
	// its eight subscribers' first snapshots clone 800,000 messages, 16 s
	// of this report for a figure no target reads (the int and k8s rows
	// show the same copying). Each of these Stores copies the map for each
	// subscriber, 30 ms to 1.2 s a Store: a few of them give its figure to
	// a few percent, and no target reads it.
	{bench: `^BenchmarkStore$/^lib=peer$//^N=100000$/^S=[18]$`, skip: `^BenchmarkStore$/^lib=peer$/^val=proto$`, benchtime: "5x", count: 1},
	{bench: `^BenchmarkStore$/^lib=peer$//^N=100000$/^S=64$`, benchtime: "2x", count: 1},
	// The millionth-entry rows run apart, so that the smaller scenarios
	// share one filled map (see filled in bench/main_test.go).
	{bench: `^BenchmarkStore$/^lib=(switchyard|floor|peer)$/^val=int$//^S=0$`, benchtime: "200000x", count: 5, sizes: large},
	// Two samples of one whole collection cycle each: a cycle there is
	// half a million to a million Stores (the live heap is 1.5 GB), so a
	// sample lasts 2-7 s after as long again reaching a cycle's end, and
	// the first sample of each library as long again before that, for the
	// warm-up cycle after the fill (bench/cycles_test.go). With one sample,
	// target 3's quotient there, ours with eight subscribers over the
	// floor, was one cycle of each, and moved from 1.7 to 4.3 between
	// processes of one build (round forty-seven); the second sample
	// gives the report a range to judge it by, and took the line from 40
	// to 62 s on a quiet machine (round forty-seven). The peer's
	// subscribed Stores skip there by themselves, but testing forced a
	// collection of the million entries before each, so -skip names them.
	// The floor with eight subscribers is skipped too: no target reads it
	// (target 3 divides by the floor without them), it was 1.00-1.11 times
	// the floor without them at this size in round fifty-two's reports,
	// and its two samples took about 9 s of this line.
	{bench: `^BenchmarkStore$/^lib=(switchyard|floor|peer)$/^val=k8s$//^S=[018]$`, skip: `^BenchmarkStore$/^lib=(peer|floor)$///^S=[1-9]`, benchtime: "20000x", count: 2, sizes: large, gcCycles: 1, large: true},
	// Proto messages at a million entries are for target 1 only, which
	// compares with the peer: the floor would add a third fill of a
	// million messages (about 12 s). One long sample: before b.Loop (see
	// bench/main_test.go) each sample cost two forced collections of the
	// million messages (about 5 s) for a fraction of a second of Stores.
	{bench: `^BenchmarkStore$/^lib=(switchyard|peer)$/^val=proto$//^S=0$`, benchtime: "60000x", count: 1, sizes: large, large: true},
	// Target 2 divides ours by the floor's batches that each sample takes
	// alongside (bench/batch_test.go). Five samples of 100 batches: with
	// three of 20 (about 20 ms of our batches a sample), one report's
	// samples ran from 1.55 to 3.60 times the floor, and three reports of
	// one build gave 2.51, 3.01 and 2.02 where alternated samples of 400
	// gave 1.98 (round forty-nine). The line takes about 8 s, 5 more.
	{bench: `^BenchmarkBatch$`, benchtime: "100x", count: 5},
	// Target 4 divides ours at N=100,000 by ours at N=100: at 100 the heap
	// is small and 20,000 k8s Stores met several collections (7 in a run
	// with -gccycles), at 100,000 none, so both are timed over whole cycles,
	// one a sample as for the Stores above. Three samples: a cycle at
	// 100,000 entries is over 100,000 Stores, each waiting for the
	// subscriber, a second or two, and five samples made this line 27-41 s
	// of the report. Its quotients moved between 1.2 and 2.5 by median
	// from run to run (against 2), with the machine's cache, and so did
	// the floor's, shown beside it, which runs in the same invocation.
	{bench: `^BenchmarkLatency$/^lib=(switchyard|floor)$`, benchtime: "20000x", count: 3, gcCycles: 1},
	{bench: `^BenchmarkLatency$/^lib=peer$//^N=100$`, benchtime: "20000x", count: 5},
	{bench: `^BenchmarkLatency$/^lib=peer$//^N=10000$`, benchtime: "200x", count: 1},
	{bench: `^BenchmarkLatency$/^lib=peer$//^N=100000$`, benchtime: "20x", count: 1},
	// With 1,000 subset subscribers a Store asks 1,000 predicates, tens
	// of microseconds: at the keyed runs' Stores a sample (200,000 then),
	// those five samples took 27 of the line's 33 s. The subset runs
	// apart, shorter; its figures are divided only by each other.
	// Target 6 divides S=10,000 by S=1, both taken in each sample (see
	// bench/keyed_test.go), whose Stores go half to each; in rounds, as the
	// idle subscriber below.
	{bench: `^BenchmarkKeyedSubscribers$`, skip: `^BenchmarkKeyedSubscribers$////^how=subset$`, benchtime: "400000x", count: 1, rounds: 5},
	{bench: `^BenchmarkKeyedSubscribers$////^how=subset$`, benchtime: "4000x", count: 3},
	{bench: `^BenchmarkBurst$`, benchtime: "20x", count: 3},
	// Target 5 divides the Stores with a never-reading reader by those
	// without, samples of 15-30 ms. Five of one in a row and then five of
	// the other put the lazy reader's cost at +77%, +5% and +23% in three
	// runs of one commit (round thirty-five), while samples alternated one
	// by one put it at 0-10%: this machine changes speed for seconds at a
	// time, and a block of samples can fall in one speed and the next in
	// the other. Five rounds of one sample each pair samples taken a
	// fraction of a second apart. Even so, the idle=0 and idle=lazy
	// samples of one round, 20 ms apart, gave quotients from 0.9 to 2.7
	// (round forty-one), and since round forty-two each sample with a
	// reader takes the figure without one alongside, in blocks of 1,000
	// Stores taking turns (bench/idle_test.go): half its Stores go to each
	// map, hence twice the Stores of those rounds.
	{bench: `^BenchmarkIdleSubscriber$`, benchtime: "200000x", count: 1, rounds: 5},
	{bench: `^BenchmarkMemory$`, benchtime: "1x", count: 1},
	{bench: `^BenchmarkMemory$/^lib=(switchyard|peer)$/^val=int$`, benchtime: "1x", count: 1, sizes: large},
	// A pass of 100,000 Stores under eight readers: about two seconds a
	// scenario, fill included.
	{bench: `^BenchmarkMemoryAfterPass$`, benchtime: "1x", count: 1},
	// A million writes into 100 keys under each kind of reader, the heap
	// measured after the first tenth and at the end: about six seconds.
	{bench: `^BenchmarkMemoryAfterChurn$`, benchtime: "1x", count: 1},
	// An op is a whole collection cycle of 10,000 Kubernetes-style values,
	// 30-60 ms: 50 cycles of ours and 50 of the floor took 4.4-5.6 s in
	// five runs, fill included, 60 took 6.3 s and 100 took 11 s. One
	// sample of 50, where a cycle is 2% of spikes-%: before round
	// forty-five 7-9% of the cycles spiked, about four of 50.
	{bench: `^BenchmarkMarkedHeap$`, benchtime: "50x", count: 1},
	// Loads of integers cost tens of nanoseconds: long samples, as for the
	// Stores above, which also cycle at least once over every key. Target
	// 7a divides ours by the floor's: in rounds, as the idle subscriber
	// above. (Not at a million entries, where each round would fill two
	// maps of a million again.)
	{bench: `^BenchmarkLoad$//^val=int$`, benchtime: "200000x", count: 1, rounds: 5},
	{bench: `^BenchmarkLoad$//^val=k8s$`, benchtime: "20000x", count: 3},
	{bench: `^BenchmarkLoad$//^val=int$`, benchtime: "200000x", count: 5, sizes: large},
	{bench: `^BenchmarkRange$`, benchtime: "20x", count: 3},
	{bench: `^BenchmarkRange$`, benchtime: "10x", count: 5, sizes: large},
	// LoadAll copies every entry, 45 ms at 10,000 and 0.6 s at 100,000,
	// alike for both libraries: a few copies give the figure.
	{bench: `^BenchmarkLoadAll$///^N=100$`, benchtime: "2000x", count: 3},
	{bench: `^BenchmarkLoadAll$///^N=10000$`, benchtime: "20x", count: 1},
	{bench: `^BenchmarkLoadAll$///^N=100000$`, benchtime: "2x", count: 1},
	{bench: `^BenchmarkState$`, benchtime: "20000x", count: 3},
	// The peer's consumer takes 100-300 µs a Store, against under a
	// microsecond: 20,000 of them took 11 s.
	{bench: `^BenchmarkHandleSubscription$/^lib=switchyard$`, benchtime: "20000x", count: 3},
	{bench: `^BenchmarkHandleSubscription$/^lib=peer$`, benchtime: "2000x", count: 3},
	{bench: `^BenchmarkChain$/^lib=switchyard$`, benchtime: "2000x", count: 3},
	{bench: `^BenchmarkChain$/^lib=peer$`, benchtime: "100x", count: 1},
}

// soloPlan runs the switchyard-only benchmarks of other packages. The
// -bench patterns are the ones the report's tables select by (solo.go),
// so a benchmark added to one of these families is both run and shown.
// Their ops take 50 µs to 25 ms (a change reaching 100 watchers), and
// their counts keep each sample under three seconds: these four
// lines took 42 s of a report the issue wants under five minutes.
var soloPlan = []run{
	{pkg: registryPkg, bench: heartbeatBench, benchtime: "10000x", count: 3},
	{pkg: registryPkg, bench: changeBench, benchtime: "100x", count: 3},
	{pkg: pipelinePkg, bench: gatewayBench, benchtime: "10000x", count: 3},
	{pkg: pipelinePkg, bench: registrationBench, benchtime: "250x", count: 3},
}

// suite returns the runs of a report: the plan, without its large runs
// unless large, then soloPlan.
func suite(large bool) []run {
	var runs []run
	for _, r := range plan {
		if !r.large || large {
			runs = append(runs, r)
		}
	}
	return append(runs, soloPlan...)
}

func main() {
	out := flag.String("o", "", "write the markdown report to this file instead of standard output")
	raw := flag.String("raw", "", "also write the raw benchmark output, for benchstat, to this file")
	pkg := flag.String("pkg", "./bench", "the side-by-side benchmark package")
	quick := flag.Bool("quick", false, "run every benchmark once (N=100 for the side-by-side ones): checks the suite, measures nothing")
	large := flag.Bool("large", false, "also run "+largeRows)
	var from []string
	flag.Func("from", "render the report from this raw file (see -raw) of an earlier run, measuring nothing; the file names the side-by-side package. "+
		"Repeat it to judge several runs of one commit: the Targets table counts the runs that pass each target, the other tables show the first run",
		func(path string) error { from = append(from, path); return nil })
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch {
	case len(from) > 0 && (*raw != "" || *quick || *large):
		err = errors.New("-from renders a report from raw files, measuring nothing: it cannot be combined with -raw, -quick or -large")
	case *quick && *large:
		err = errors.New("-quick runs every benchmark once at N=100: it cannot be combined with -large")
	case len(from) > 0:
		err = fromRaw(from, *out)
	default:
		err = compare(ctx, *pkg, *out, *raw, *quick, *large)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func compare(ctx context.Context, pkg, out, raw string, quick, large bool) error {
	results, e, rawOut, err := measure(ctx, pkg, quick, large)
	if err != nil {
		return err
	}
	if raw != "" {
		if err := os.WriteFile(raw, rawOut, 0o644); err != nil {
			return fmt.Errorf("writing raw output: %w", err)
		}
	}
	return render([]suiteRun{{results: results, env: e}}, out)
}

// fromRaw renders the report from the raw files that earlier runs wrote
// (see raw.go), measuring nothing: the first run's, judging the others
// beside it (runs.go).
func fromRaw(paths []string, out string) error {
	var runs []suiteRun
	for _, path := range paths {
		r, err := readRawFile(path)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	if err := checkPoolable(runs); err != nil {
		return err
	}
	return render(runs, out)
}

func readRawFile(path string) (suiteRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return suiteRun{}, fmt.Errorf("reading the raw file: %w", err)
	}
	defer f.Close()
	results, e, err := readRaw(f, path)
	if err != nil {
		return suiteRun{}, err
	}
	return suiteRun{name: path, results: results, env: e}, nil
}

// measure runs the suite (see suite, or one run of everything with quick)
// and returns the results, each with the package it ran in, the
// environment, and the raw file's contents.
func measure(ctx context.Context, pkg string, quick, large bool) ([]result, env, []byte, error) {
	dir, err := os.MkdirTemp("", "compare")
	if err != nil {
		return nil, env{}, nil, fmt.Errorf("making a temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)

	runs := suite(large)
	if quick {
		runs = []run{{bench: ".", benchtime: "1x", count: 1}, {pkg: registryPkg, bench: ".", benchtime: "1x", count: 1}, {pkg: pipelinePkg, bench: ".", benchtime: "1x", count: 1}}
	}
	bins := map[string]string{} // package directory → its test binary
	var unbuilt []string
	for i := range runs {
		if runs[i].pkg == "" {
			runs[i].pkg = pkg
		}
		p := runs[i].pkg
		if _, ok := bins[p]; ok {
			continue
		}
		bins[p] = filepath.Join(dir, fmt.Sprintf("%d.test", len(bins)))
		if err := goCmd(ctx, os.Stderr, "test", "-c", "-o", bins[p], p); err != nil {
			if p == pkg {
				return nil, env{}, nil, fmt.Errorf("building the benchmarks of %s: %w", p, err)
			}
			// A switchyard-only package that does not build leaves its
			// section out, rather than the whole report.
			fmt.Fprintf(os.Stderr, "compare: leaving out %s, whose benchmarks do not build: %v\n", p, err)
			unbuilt = append(unbuilt, p)
			bins[p] = ""
		}
	}

	start := time.Now()
	var rawOut rawWriter
	var results []result
	var commands []command
	for _, r := range runs {
		if bins[r.pkg] == "" {
			continue
		}
		for range max(r.rounds, 1) {
			rs, done, out, err := invoke(ctx, bins[r.pkg], r, pkg, quick)
			if err != nil {
				return nil, env{}, nil, err
			}
			commands = append(commands, done)
			if err := rawOut.ran(out, done); err != nil {
				return nil, env{}, nil, err
			}
			results = append(results, rs...)
		}
	}
	elapsed := time.Since(start)

	e := environment(ctx)
	e.Elapsed = elapsed.Round(time.Second)
	e.Commands = commands
	e.Quick = quick
	e.Unbuilt = unbuilt
	e.Side = pkg
	data, err := rawOut.finish(e)
	if err != nil {
		return nil, env{}, nil, err
	}
	return results, e, data, nil
}

// invoke runs r once with the test binary bin, and returns its results, the
// command as the report shows it, and its output. pkg is the side-by-side
// package, which quick runs at N=100 only.
func invoke(ctx context.Context, bin string, r run, pkg string, quick bool) ([]result, command, []byte, error) {
	args := []string{"-test.run", "^$", "-test.bench", r.bench, "-test.benchtime", r.benchtime,
		"-test.benchmem", "-test.count", fmt.Sprint(r.count), "-test.timeout", "30m"}
	cmd := fmt.Sprintf("go test -run '^$' -bench '%s' -benchtime %s -count %d -benchmem %s", r.bench, r.benchtime, r.count, r.pkg)
	sizes := r.sizes
	if quick && r.pkg == pkg {
		sizes = "100"
	}
	if sizes != "" {
		args = append(args, "-sizes="+sizes)
		cmd += " -sizes=" + sizes
	}
	if r.skip != "" {
		args = append(args, "-test.skip", r.skip)
		cmd += fmt.Sprintf(" -skip '%s'", r.skip)
	}
	if r.gcCycles > 0 {
		args = append(args, fmt.Sprintf("-gccycles=%d", r.gcCycles))
		cmd += fmt.Sprintf(" -gccycles=%d", r.gcCycles)
	}
	fmt.Fprintln(os.Stderr, "+", cmd)
	began := time.Now()
	var runOut bytes.Buffer
	c := exec.CommandContext(ctx, bin, args...)
	c.Dir = r.pkg
	c.Stdout = io.MultiWriter(&runOut, &gobench.Progress{W: os.Stderr})
	c.Stderr = os.Stderr
	if err := c.Run(); err != nil {
		return nil, command{}, nil, fmt.Errorf("running %s: %w", cmd, err)
	}
	done := command{Pkg: r.pkg, Line: cmd + timeSep + time.Since(began).Round(time.Second).String()}
	out := slices.Clone(runOut.Bytes())
	rs, err := invocationResults(&runOut, done)
	if err != nil {
		return nil, command{}, nil, err
	}
	return rs, done, out, nil
}

// render writes the report of runs (the first, and the others judged
// beside it) to the file out, keeping the file's hand-written tail (see
// handWritten), or to standard output when out is empty.
func render(runs []suiteRun, out string) error {
	first := runs[0]
	side, solo := splitByPkg(first.results, first.env.Side)
	var others []otherRun
	for _, r := range runs[1:] {
		s, _ := splitByPkg(r.results, r.env.Side)
		others = append(others, otherRun{t: newTable(s), e: r.env})
	}
	var report bytes.Buffer
	writeReport(&report, newTable(side), solo, first.env, others...)
	if out == "" {
		_, err := os.Stdout.Write(report.Bytes())
		return err
	}
	if old, err := os.ReadFile(out); err == nil {
		report.Write(handWritten(old))
	}
	if err := os.WriteFile(out, report.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

// invocationResults returns the results in the output of the invocation c,
// each with c's package, and an error if the output does not parse or
// measured nothing (see measuredSome).
func invocationResults(output io.Reader, c command) ([]result, error) {
	rs, err := parse(output)
	if err != nil {
		return nil, fmt.Errorf("parsing the output of %s: %w", c.Line, err)
	}
	if err := measuredSome(c.Line, rs); err != nil {
		return nil, err
	}
	for i := range rs {
		rs[i].Pkg = c.Pkg
	}
	return rs, nil
}

// measuredSome returns an error naming the command cmd if its results rs
// hold no measurement: a pattern that selects nothing, or only benchmarks
// that skip, is a mistake in the plan, and the report would otherwise
// leave the figures out, or take them from another run, without a word.
// (go test matches each slash-separated element of -bench against one
// level of a benchmark's name, so an element at the wrong level selects
// nothing.)
func measuredSome(cmd string, rs []result) error {
	for _, r := range rs {
		if r.Skipped == "" {
			return nil
		}
	}
	if len(rs) == 0 {
		return fmt.Errorf("%s measured nothing: its -bench pattern selects no benchmark (each element of the pattern matches one level of a name)", cmd)
	}
	return fmt.Errorf("%s measured nothing: all %d benchmarks its -bench pattern selects skipped", cmd, len(rs))
}

// handMarker opens the part of a report file written by hand, which the
// compare command keeps when it writes the file again.
const handMarker = "<!-- Everything above this line is generated by bench/cmd/compare"

// handWritten returns the hand-written tail of a report file: from the rule
// before handMarker to the end, or nothing if it has no such part.
func handWritten(report []byte) []byte {
	i := bytes.Index(report, []byte(handMarker))
	if i < 0 {
		return nil
	}
	if j := bytes.LastIndex(report[:i], []byte("\n---\n")); j >= 0 {
		i = j
	}
	return report[i:]
}

// splitByPkg returns the results of the side-by-side package pkg, and
// the others. Only pkg's results go into the side-by-side tables, so a
// benchmark elsewhere that shares a name cannot mix in.
func splitByPkg(results []result, pkg string) (side, solo []result) {
	for _, r := range results {
		if r.Pkg == pkg {
			side = append(side, r)
		} else {
			solo = append(solo, r)
		}
	}
	return side, solo
}

// progress echoes result lines to standard error while the suite runs.

func goCmd(ctx context.Context, stdout io.Writer, args ...string) error {
	c := exec.CommandContext(ctx, "go", args...)
	c.Stdout = stdout
	c.Stderr = os.Stderr
	return c.Run()
}

// command is one benchmark invocation as the report shows it.
type command struct {
	Pkg  string // the package directory it ran in
	Line string // the go test command line, and how long it took
}

// timeSep separates a command's line from how long it took.
const timeSep = "   # "

// inRounds returns commands with each series of invocations of one command
// in a row, the rounds of a plan line, shown as one shell loop that runs
// it as many times, followed by how long each round took.
func inRounds(commands []command) []command {
	var out []command
	for i := 0; i < len(commands); {
		c := commands[i]
		line, took, _ := strings.Cut(c.Line, timeSep)
		j := i + 1
		times := []string{took}
		for ; j < len(commands); j++ {
			l, t, _ := strings.Cut(commands[j].Line, timeSep)
			if commands[j].Pkg != c.Pkg || l != line {
				break
			}
			times = append(times, t)
		}
		if n := j - i; n > 1 {
			c.Line = fmt.Sprintf("for i in $(seq %d); do %s; done%s%s", n, line, timeSep, strings.Join(times, ", "))
		}
		out = append(out, c)
		i = j
	}
	return out
}

// env describes where and how the figures were taken.
type env struct {
	CPU       string
	Cores     int
	GoVersion string
	OS        string
	Commit    string
	Peer      string // module path and version
	Date      string
	Elapsed   time.Duration
	Commands  []command `json:"-"` // in the raw file, each after its output (raw.go)
	Quick     bool
	Unbuilt   []string // packages left out because their benchmarks did not build
	Side      string   // the side-by-side package (-pkg); the others are switchyard's alone
}

func environment(ctx context.Context) env {
	e := env{
		CPU:   cpuModel(),
		Cores: runtime.NumCPU(),
		OS:    runtime.GOOS + "/" + runtime.GOARCH,
		Date:  time.Now().UTC().Format("2006-01-02"),
	}
	var b bytes.Buffer
	if goCmd(ctx, &b, "env", "GOVERSION") == nil {
		e.GoVersion = strings.TrimSpace(b.String())
	} else {
		e.GoVersion = runtime.Version()
	}
	b.Reset()
	if goCmd(ctx, &b, "list", "-m", "github.com/telepresenceio/watchable") == nil {
		e.Peer = strings.TrimSpace(b.String())
	}
	if c, err := exec.CommandContext(ctx, "git", "describe", "--always", "--dirty").Output(); err == nil {
		e.Commit = strings.TrimSpace(string(c))
	}
	return e
}

// cpuModel returns the CPU's model name from /proc/cpuinfo, where there is one.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
