// Package translator derives watchable maps from other watchable maps. The
// user writes a pure transformation; the translator owns everything else: it
// subscribes to the inputs, calls the transformation only for what changed,
// publishes the results as one batch per change, deletes outputs that are no
// longer produced, and reports failures without losing the last good output.
//
// There are two shapes:
//
//   - Derive maps each entry of one input map to any number of entries of an
//     output map, with a function of one key and value. When an input entry
//     changes, only that entry is translated again; when it is deleted, its
//     outputs are deleted.
//   - Compute rebuilds a whole output map from any number of input maps, with
//     a function that reads the inputs' States. A burst of changes across the
//     inputs causes one recomputation.
//
// Both return a runner.Runner (also a runner.Readier) to run with the rest of
// the program, for example in a runner group. A translator assumes it is the
// only writer of its output map: it deletes keys it wrote and no longer
// produces, and on start makes the output exactly what it produces, so give
// each translator a map of its own.
//
// A chain of translators (a provider's map, derived into a second map,
// derived into a third) passes a change from the head to the tail in
// microseconds: each stage reads only the changed keys and writes only the
// changed outputs. See BenchmarkChainLatency.
package translator
