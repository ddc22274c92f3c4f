// Command compare runs the side-by-side benchmarks of package bench against
// github.com/telepresenceio/watchable and prints a markdown report: for each
// scenario switchyard's figure, the peer's, and their ratio, then the
// project's performance targets with PASS or MISS, the machine, the Go
// version and the exact commands that produced it.
//
// Run it from the repository root:
//
//	go run ./bench/cmd/compare -o docs/benchmarks.md -raw bench.txt
//
// It builds the benchmark binary once and runs each scenario with a fixed
// iteration count (-benchtime=Nx), smaller for the peer where it is slow, so
// the whole suite takes a few minutes on a 2-core machine and every run does
// the same work. -raw keeps the unprocessed benchmark output, which
// benchstat reads. -quick runs every benchmark once at N=100, to check that
// the suite and the report work, not to measure.
package main
