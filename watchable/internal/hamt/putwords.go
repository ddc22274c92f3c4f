package hamt

// putWordsChunk bounds how many stores one call of releaseWords makes. The
// assembly loop on amd64 cannot be preempted, so a batch of a million
// overwrites is made in calls of a few microseconds each, with a chance to
// stop the goroutine between them.
const putWordsChunk = 1 << 12

// storeWords makes the stores of puts, each of which replaces a word
// without pointers (shapeWord) or nothing. It is Put.apply for a whole
// change of many stores at once, and has the same guarantees: every word is
// stored whole, and all of them are visible to any goroutine that then
// observes the compare-and-swap that ends the change (version.finish).
//
// On amd64, outside the race detector, releaseWords makes them with plain
// moves (putwords_amd64.s) rather than sync/atomic's stores. Each of those
// is an XCHG, a locked instruction that waits for the store buffer to
// drain: about 5 ns, a tenth of what a Store in a batch of overwrites
// costs. The plain moves are enough here. An aligned 8-byte move is stored
// whole; amd64 makes a core's stores visible in the order it makes them,
// so no goroutine sees the end of the change before its stores; and the
// compiler moves no memory access across a call into assembly. The words
// hold no pointers, so no write barrier is skipped, and readers still load
// them with sync/atomic. (Go's memory model does not describe assembly;
// this relies on the processor's model, as the runtime's own release
// stores do.) A Freeze that makes the same stores at the same time
// (version.freeze) stores the same values, so the order in which the two
// land does not matter.
//
// Elsewhere, with the purego build tag, and under the race detector (so
// that it sees every store), releaseWords is a loop of atomic.StoreUint64.
func storeWords(puts []Put) {
	for len(puts) > 0 {
		n := min(len(puts), putWordsChunk)
		releaseWords(puts[:n])
		puts = puts[n:]
	}
}
