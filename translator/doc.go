// Package translator derives watchable maps from other watchable maps. The
// user writes a pure transformation; the translator owns everything else: it
// subscribes to the inputs, calls the transformation only for what changed,
// publishes the results as one batch per change, deletes outputs that are no
// longer produced, and reports failures without losing the last good output.
//
// There are three shapes, by how outputs relate to inputs:
//
//   - Derive, one input entry to its own outputs: a function of one key and
//     value returns any number of output entries (none is fine). When an
//     input entry changes, only it is translated again; when it is deleted,
//     its outputs are deleted. Use it when each output comes from exactly
//     one input entry (a route per listener, a URL per service).
//   - GroupBy, many input entries to one output: a key function names each
//     input entry's group, and a build function makes a group's value from
//     all its members. The translator keeps the membership, builds again
//     only the groups that gained, lost or changed a member, and deletes a
//     group when its last member leaves. Use it to collect or aggregate (the
//     endpoints of a service from its instances).
//   - Compute, whole state to whole state: a function reads any number of
//     input maps through their States and returns the complete output. A
//     burst of changes across the inputs causes one recomputation. Use it
//     for joins across maps, or when the output is small or cheap to make
//     again; its cost grows with the whole input, not with the change.
//
// Derive and GroupBy take their input as a watchable.View; Compute takes
// any number of Inputs (every *watchable.Map and watchable.View is one). For
// Derive and GroupBy, WithInputEqual lets changes the outputs ignore (a
// heartbeat's timestamp) skip the work; it is typed by the input's values,
// so a mismatch does not compile.
//
// A chain of translators (a provider's map, derived into a second map,
// derived into a third) passes a change from the head to the tail in
// microseconds: each stage reads only the changed keys and writes only the
// changed outputs. See BenchmarkChainLatency.
//
// # Ownership
//
// Each translator creates its output map and is its only writer. Output
// returns a read-only watchable.View of it, available as soon as the
// translator is made, so a program wires its translators (one's Output as
// another's input) before anything runs, and nobody can write to an output
// by mistake. The output outlives Run: it keeps the last published contents
// and is never closed.
//
// Each shape returns a concrete type (*Derivation, *Grouping,
// *Computation) with Name, Run, Ready and Output: a runner.Runner and a
// runner.Readier, to run with the rest of the program in a runner group.
//
// # Readiness
//
// Readiness follows the data (see watchable.Map.RegisterInitializer). A
// translator registers an initializer on its output when it is made, and
// finishes it once every input is initialized and the first output computed
// from the initialized inputs has been published; Ready is the output's
// Initialized channel. Derive and GroupBy publish translations of an
// uninitialized input as they come (the output is partial until then, and
// its snapshots say so); Compute does not call its function at all before
// every input is initialized. A chain of translators over a provider's map
// thus becomes ready when the provider has loaded and the chain has carried
// the load to its end, with no ordering by hand, and a consumer waiting on
// an output's Initialized never acts on a partial picture.
//
// # Failures
//
// A failing transformation keeps its last good output. Failures are
// reported through runner.HealthOf(ctx) under the translator's own key,
// "translator " + name, as one problem summarizing the current failures,
// cleared when they are resolved; a transformation that reports problems of
// its own through the same Health, under its own keys, keeps them. Failures
// are also logged, to slog.Default() unless WithLogger says otherwise, and
// passed to WithErrorHandler.
package translator
