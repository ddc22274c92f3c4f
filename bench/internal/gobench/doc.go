// Package gobench reads the output of `go test -bench`: the benchmark
// lines with their figures, and the benchmarks that skipped with their
// reasons. The commands under bench/cmd share it, so that the report
// (compare) and the A/B comparison (ab) read a run the same way.
package gobench
