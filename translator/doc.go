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
//   - Group, many input entries to one output: a key function names each
//     input entry's group, and a build function makes a group's value from
//     all its members. The translator keeps the membership, builds again
//     only the groups that gained, lost or changed a member, and deletes a
//     group when its last member leaves. Use it to collect or aggregate (the
//     endpoints of a service from its instances). WithInputEqual lets
//     changes the outputs ignore (a heartbeat's timestamp) skip the rebuild.
//   - Compute, whole state to whole state: a function reads any number of
//     input maps through their States and returns the complete output. A
//     burst of changes across the inputs causes one recomputation. Use it
//     for joins across maps, or when the output is small or cheap to make
//     again; its cost grows with the whole input, not with the change.
//
// Each returns a runner.Runner (also a runner.Readier) to run with the rest of
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
