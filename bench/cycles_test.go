package bench

import (
	"flag"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

var gcCyclesFlag = flag.Int("gccycles", 0,
	"when above 0, BenchmarkStore and BenchmarkLatency time whole garbage-collection cycles: at least the -benchtime's Stores, from the end of one cycle to the end of the gccycles-th after it or later, and report ns/op, B/op and allocs/op per Store of that span")

// Why whole cycles: a Store's cost includes collecting the garbage it
// leaves, and the collector runs once per heap's worth of allocation.
// testing forces a collection before each run, so a window of Stores that
// allocates less than the live heap meets no collection at all: at N=100,000
// and beyond, 20,000 Stores of the k8s value never did, and the figures
// measured Stores without their collection, for every library alike.
// Stretching the window over several cycles, and starting and ending it
// where a cycle ends, charges each Store its share of marking and sweeping,
// whatever the heap's size: the steady state of a writer that keeps
// writing.

// pollEvery is how many timed writes overCycles makes between looks at
// the collector: the look costs a fraction of one Store. (Untimed, it
// looks after every write.)
const pollEvery = 32

// overCycles gives up, failing the benchmark, after this many writes or
// this long: a scenario that allocates too little to finish its cycles
// would otherwise run on.
const (
	cycleStoreLimit = 50_000_000
	cycleTimeLimit  = 3 * time.Minute
)

// promptPercent is the GOGC overCycles waits under for a cycle to end
// before it starts timing.
const promptPercent = 10

var gcSample = []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}

// gcCount returns how many collection cycles have completed.
func gcCount() uint64 {
	metrics.Read(gcSample)
	return gcSample[0].Value.Uint64()
}

// overCycles is the loop of a write benchmark on m under -gccycles: it
// calls op with m's next write indexes (see ops), untimed until a collection
// cycle ends, then timed: the count b.Loop makes, then on until at least
// cycles more cycles have ended, stopping where the last one ends. It
// reports the span's time, bytes and allocations per write, which replace
// the per-b.N figures of testing, and the span's writes and cycles, and
// reserves the indexes it used on m, so that the next scenario's writes go
// on from there.
func overCycles(b *testing.B, m any, cycles int, op func(i int, timed bool)) {
	first := ops(m, 0)
	i := first
	defer func() { ops(m, i-first) }()
	began := time.Now()
	run := func(timed bool, writes int) {
		for range writes {
			op(i, timed)
			i++
		}
		if i-first > cycleStoreLimit || time.Since(began) > cycleTimeLimit {
			b.Fatalf("-gccycles %d: %d writes in %v did not finish the collection cycles: the scenario allocates too little for -gccycles", cycles, i-first, time.Since(began).Round(time.Second))
		}
	}

	// Untimed, once per filled map: write through a whole cycle at the
	// program's GOGC. A map just filled has a heap that never held more
	// than the map and its filling's garbage; the first cycle after that
	// grows it by a heap's worth, into memory the process never touched,
	// which each page's first write faults in (in one profile of a million
	// Kubernetes-style entries, 1.7 s of the span's 6.7 went to clearing
	// fresh spans). A writer that keeps writing pays that once, and every
	// library's first span paid it (its Stores were 15-40% slower than in
	// the spans after it on the same map, ours up to twice as slow, less
	// whatever part of it the process had already paid for an earlier
	// library), so the span starts after it.
	// Polling after every write, the wait ends where that cycle does.
	if !warmed(m) {
		for c := gcCount(); gcCount() == c; {
			run(false, 1)
		}
		setWarmed(m)
	}

	// Untimed, wait for a cycle to end. testing has just forced one, but a
	// forced collection sweeps the whole heap before it returns, so the
	// next cycle's Stores would not pay the sweeping a writer pays after a
	// collection of its own: the span must start where a cycle of the
	// collector's own ends. At GOGC's default that cycle comes a heap's
	// worth of allocation later (seconds at a million entries); a small
	// GOGC for the wait brings it within a tenth of that, and the pacer
	// sets the next cycle's goal and sweep pace from GOGC as it is
	// restored, as at the end of any cycle. Polling after every write
	// finds the cycle's end before the small GOGC can start another.
	gogc := debug.SetGCPercent(promptPercent)
	waiting := true
	defer func() { // b.Fatalf in the wait ends the goroutine
		if waiting {
			debug.SetGCPercent(gogc)
		}
	}()
	for c := gcCount(); gcCount() == c; {
		run(false, 1)
	}
	debug.SetGCPercent(gogc)
	waiting = false
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ReportAllocs()
	start, timed := gcCount(), i
	// b.Loop starts the clock (its first call resets it) and makes the
	// count asked for; the span then goes on, polling, to a cycle's end.
	for b.Loop() {
		op(i, true)
		i++
	}
	b.StartTimer()
	for last := gcCount(); ; {
		run(true, pollEvery)
		c := gcCount()
		if c >= start+uint64(cycles) && c != last {
			break
		}
		last = c
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)

	done := float64(i - timed)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/done, "ns/op")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/done, "B/op")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/done, "allocs/op")
	b.ReportMetric(done, "stores")
	b.ReportMetric(float64(gcCount()-start), "gc-cycles")
}

// warmed reports whether overCycles has written through a whole
// collection cycle of m since it was filled; a map that filled does not
// keep never has.
func warmed(m any) bool { return filledMap.m == m && filledMap.warm }

// setWarmed records that overCycles has written through a whole cycle of m.
func setWarmed(m any) {
	if filledMap.m == m {
		filledMap.warm = true
	}
}

// storeCycles is benchStore's loop under -gccycles.
func storeCycles[V any](b *testing.B, m kv[V], keys []string, ring []V, cycles int) {
	n := len(keys)
	overCycles(b, m, cycles, func(i int, _ bool) {
		m.Store(keys[i%n], ring[i%ringSize])
	})
}

// cycleTestSettings makes testing.Benchmark run b.N=200, far below a
// cycle's worth of Stores so that the cycles decide where a span ends, at
// GOGC=100, until t ends.
func cycleTestSettings(t *testing.T) {
	t.Helper()
	old := flag.Lookup("test.benchtime").Value.String()
	if err := flag.Set("test.benchtime", "200x"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set("test.benchtime", old) })
	gogc := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(gogc) })
}

// TestStoreCyclesSpansWholeCycles checks overCycles' accounting: the span
// holds at least b.N Stores and the cycles asked for, and its time per
// Store is the span's time over its Stores, not over b.N.
func TestStoreCyclesSpansWholeCycles(t *testing.T) {
	const n, cycles = 100, 2
	m := newKV[*Service](floorName)
	defer m.Close()
	fill(m, keysFor(n), services)
	cycleTestSettings(t)
	r := testing.Benchmark(func(b *testing.B) {
		storeCycles(b, m, keysFor(n), services.ring(), cycles)
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC is %d after the benchmark; want 100, as it was before: overCycles must restore what it sets while it waits", got)
	}
	if r.N != 200 {
		t.Fatalf("testing.Benchmark ran b.N=%d; want 200, from -test.benchtime", r.N)
	}
	stores, done := r.Extra["stores"], r.Extra["gc-cycles"]
	if stores <= float64(r.N) {
		t.Errorf("the span held %v Stores; want more than b.N=%d, to finish its cycles", stores, r.N)
	}
	if done < cycles {
		t.Errorf("the span held %v collection cycles; want at least %d", done, cycles)
	}
	perStore := float64(r.T.Nanoseconds()) / stores
	if got := r.Extra["ns/op"]; got < perStore*0.99 || got > perStore*1.01 {
		t.Errorf("ns/op is %v; want the span's %v over its %v Stores, %v", got, r.T, stores, perStore)
	}
	if got := r.Extra["B/op"]; got < 1000 {
		t.Errorf("B/op is %v; want the deep copy of each Store's value, over a kilobyte", got)
	}
}

// TestStoreCyclesWarmsAFilledMapOnce checks that the first span on a map
// that filled keeps starts after a whole untimed cycle more than the spans
// after it on the same map do.
func TestStoreCyclesWarmsAFilledMapOnce(t *testing.T) {
	const n = 100
	dropFilled()
	defer dropFilled()
	m := filled(floorName, services, n)
	cycleTestSettings(t)
	// untimed returns how many cycles one benchmark of Stores into m
	// completed outside its span: testing's forced collections, the
	// wait for a cycle's end, and a warm-up cycle if there was one.
	untimed := func() uint64 {
		before := gcCount()
		r := testing.Benchmark(func(b *testing.B) {
			storeCycles(b, m, keysFor(n), services.ring(), 1)
		})
		return gcCount() - before - uint64(r.Extra["gc-cycles"])
	}
	first := untimed()
	if !warmed(m) {
		t.Fatal("the filled map is not marked warm after a span on it")
	}
	second := untimed()
	if first != second+1 {
		t.Errorf("the first span on the filled map had %d untimed cycles around it, the second %d; want one more for the first, its warm-up", first, second)
	}
}
