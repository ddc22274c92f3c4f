// Command ab compares the benchmarks of two revisions of the code, base
// and head, by running their test binaries in alternation and dividing
// each round's figures: the way to tell whether a change made something
// faster on a machine whose speed will not hold still.
//
// On a shared machine, such as the 2-core VM the project's figures come
// from, speed drifts by 10-50% over minutes. Taking all of base's samples
// and then all of head's, as the usual benchstat recipe does, measures
// the drift as much as the change. So ab builds each side's test binary
// once and runs them in rounds, each round running both once, the order
// alternating (base then head, then head then base, ...) so that neither
// always runs first. Within a round the two samples are seconds apart, and
// the quotient head_i ÷ base_i mostly cancels the drift; the report shows
// the medians, the quotient of the medians, the range of the paired
// quotients and how many rounds head won.
//
// Run it from anywhere inside the repository:
//
//	go run ./bench/cmd/ab -base HEAD~1 -bench '^BenchmarkStore$/^lib=switchyard$/^val=int$/N=100$' -rounds 6 -- -test.benchtime=200000x -sizes=100
//
// -base is the old revision and -head the new one, the working tree as
// it is (uncommitted changes included) when left out; a revision is checked
// out into a temporary git worktree, removed at the end. -pkg is the
// package directory, relative to the repository's root (bench by
// default). Arguments after -- go to every run of both binaries: a fixed
// -test.benchtime=Nx makes every sample do the same work. Each run takes
// one sample, so -test.count is refused there (-rounds sets the number of
// samples), as are -test.run and -test.bench, which ab sets. -raw keeps
// every run's output, which benchstat reads, each followed by a comment
// line naming its side and round.
//
// -quotient num,den adds a figure to every sample that reports both
// units: num divided by den. Some benchmarks time a reference beside their
// own work, seconds apart (BenchmarkBatch's floor-ns/op, the idle
// subscriber's idle0-ns/op); their quotient holds still while each figure
// drifts, so comparing it between the sides shows the change more
// clearly than either figure does:
//
//	go run ./bench/cmd/ab -base HEAD~1 -bench '^BenchmarkBatch$/lib=switchyard/' -rounds 12 -quotient ns/op,floor-ns/op -- -test.benchtime=40x
//
// -pivot key=value does the same across benchmarks of one run: each
// benchmark whose name has an element key=... other than the pivot's is
// divided, unit by unit, by the benchmark of the same name with key=value
// in its place. The side-by-side benchmarks name the library as a key and
// time ours, the peer's and the floor's seconds apart, so
//
//	go run ./bench/cmd/ab -base HEAD~1 -bench '^BenchmarkStore$/^lib=(switchyard|peer)$/^val=int$/N=100$/^S=0$' -rounds 10 -pivot lib=peer -- -test.benchtime=2000000x -sizes=100
//
// compares ours ÷ the peer's between the revisions.
//
// The report, in markdown on standard output, names both sides and the
// command that reproduces it, then has a row per benchmark and unit. A
// benchmark only one side measured gets a line under the table.
package main
