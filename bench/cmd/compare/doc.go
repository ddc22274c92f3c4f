// Command compare runs the side-by-side benchmarks of package bench against
// github.com/telepresenceio/watchable and prints a markdown report: for each
// scenario switchyard's figure, the peer's, and their ratio, then the
// project's performance targets with PASS or MISS, the machine, the Go
// version and the exact commands that produced it. The same run measures
// what only switchyard does, with the benchmarks that live next to that
// code: the service registry (provider/registry: heartbeat throughput and
// change-to-watcher latency) and the pipeline's gateway (examples/pipeline:
// requests direct and through the gateway, and registration to first routed
// request); those sections have no peer column.
//
// Run it from the repository root:
//
//	go run ./bench/cmd/compare -large -o docs/benchmarks.md -raw bench.txt
//
// It builds each package's benchmark binary once and runs each scenario with
// a fixed iteration count (-benchtime=Nx), smaller for the peer where it is
// slow, so that every run does the same work. -large adds the Stores of
// Kubernetes-style and proto values at a million entries (targets 1 and 3
// at that size), and docs/benchmarks.md is a -large report: its three
// runs of round forty-seven took 3m55s-4m15s on a 2-core AMD EPYC (round
// forty-four's, with one sample at a million entries where there are now
// two, 3m17s-3m58s), those of round forty-two 4m23s-4m42s on a 2-core
// Intel Xeon, inside the five minutes issue 14 allows. Without -large, the report says what it left
// out and its targets list that size as not measured. Stores of values that allocate
// kilobytes, and switchyard's latencies, run with -gccycles, which times whole
// garbage-collection cycles from the end of one to the end of another, so
// that their figures include the collection their garbage causes
// (bench/cycles_test.go says why).
//
// -raw keeps the unprocessed benchmark output of every package, which
// benchstat reads, with a comment line after each invocation (its package,
// command and duration) and one at the end (the machine). -from renders the
// report again from such a file, measuring nothing: a change to how the
// report is written needs no new run. Given several raw files of one
// commit (-from a.txt -from b.txt ...), it judges each run's targets on
// that run's own figures and counts, for every target, the runs that pass,
// since one run can pass or miss a target near its limit by the machine's
// noise; the other tables show the first run. -quick runs every benchmark
// once (the side-by-side ones at N=100), to check that the suite and the
// report work, not to measure.
package main
