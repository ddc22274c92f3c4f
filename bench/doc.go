// Package bench measures switchyard's watchable.Map side by side with
// github.com/telepresenceio/watchable, the library it models, on identical
// inputs.
//
// Every scenario is a Go benchmark whose sub-benchmark names carry the
// library as a key, lib=switchyard or lib=peer, so benchstat can pivot on it:
//
//	go test -run '^$' -bench . -benchmem ./bench > new.txt
//	benchstat -col /lib new.txt
//
// The files hold one scenario each: store (publisher cost with subscribers
// reading), latency (one Store until a subscriber has it), burst (a slow
// subscriber under a burst of writes), idle (a subscriber that never reads),
// memory (live heap with subscribers attached, and after every value was
// replaced under their snapshots), reads (Load, LoadAll,
// State) and framework (message.HandleSubscription, and a chain of three
// translator.Derive stages, each against what a peer user writes by hand). values.go holds the realistic value types: a Kubernetes-style
// object with a hand-written DeepCopy and a protobuf message.
//
// Two references that are not libraries run beside them. lib=floor, in
// the scenarios whose targets are set against it, is a Go map under a
// mutex storing the same deep copies, whose subscribers are told of each
// Store and read the map itself. Where a target's quotient must pair its
// figures closer than one sub-benchmark after another can, each sample
// takes the other figure too, in blocks taking turns, and reports it
// under a unit of its own: the floor's batches in BenchmarkBatch
// (floor-ns/op), the Stores without a reader in BenchmarkIdleSubscriber
// (idle0-ns/op), the one subscriber's in BenchmarkKeyedSubscribers
// (S1-ns/op). lib=mvcc, only with -model, is the
// multi-version table modelled in internal/mvcc, for the comparison in
// docs/design.md.
//
// bench/cmd/compare runs the whole suite with fixed iteration counts and
// prints the markdown report committed as docs/benchmarks.md.
//
// Nothing imports this package; it exists for its benchmarks.
package bench
