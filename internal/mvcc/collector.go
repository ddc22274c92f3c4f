package mvcc

import "runtime/metrics"

// The writer lets go of older values by clearing them from their keep
// blocks (see dropValue and relink), which it reaches through weak
// pointers. Making a strong pointer of a weak one while the collector is
// marking marks the object (runtime.makeStrongFromWeak shades it, as the
// write barrier would), and a keep block reaches every block kept after it
// (keepblock.go): had the block been left for dead, it is alive again for
// that cycle, and so is every value kept since. A trim that met a marking
// cycle did that with blocks that had lost their snapshots since the cycle
// before, and the cycle marked every value replaced since then. In a
// profile of 100,000 Kubernetes-style entries with eight subscribers, 5-13%
// of the cycles marked 1.6 times the heap of the others (247 MB against
// 152); at a million entries, 2.4 GB against 1.5.
//
// So the writer clears blocks only while the collector is quiet, and
// queues what it lets go of meanwhile. There is no API that says whether a
// cycle is under way; quiet tells from the heap instead. The pacer starts a
// cycle no earlier than 45/64 of the way from the heap the last cycle
// marked to its goal (runtime/mgcpacer.go, minTriggerRatioNum), and a
// cycle only ever adds to the heap until it ends, so a heap less than half
// of the way there is one no cycle is marking, unless runtime.GC or the
// memory limit started one. Reading the three figures costs 0.3-0.5 µs,
// once a trim. Should it be wrong, a value lives a cycle longer, as before;
// nothing reads a value it should not.

// gauge reads the heap figures quiet needs. Writer only: the samples are
// its own.
type gauge struct {
	samples []metrics.Sample
	// fake, when not nil, replaces the reading: tests set it.
	fake func() bool
}

// Indexes of gauge.samples.
const (
	heapMarked = iota // what the last cycle marked
	heapGoal          // where the next cycle should end
	heapInUse         // what the heap holds now, dead objects not yet swept included
)

// quiet reports whether the collector is surely not marking (see above).
func (g *gauge) quiet() bool {
	if g.fake != nil {
		return g.fake()
	}
	if g.samples == nil {
		g.samples = []metrics.Sample{
			heapMarked: {Name: "/gc/heap/live:bytes"},
			heapGoal:   {Name: "/gc/heap/goal:bytes"},
			heapInUse:  {Name: "/memory/classes/heap/objects:bytes"},
		}
	}
	metrics.Read(g.samples)
	var v [3]uint64
	for i, s := range g.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return true // a runtime without the figure: as before
		}
		v[i] = s.Value.Uint64()
	}
	return quietAt(v[heapMarked], v[heapGoal], v[heapInUse])
}

// quietAt reports whether a heap of inUse bytes is less than half of the
// way from marked to goal.
func quietAt(marked, goal, inUse uint64) bool {
	return goal > marked && inUse < marked+(goal-marked)/2
}
