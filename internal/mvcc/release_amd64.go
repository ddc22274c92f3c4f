//go:build !race && !purego

package mvcc

// storeRelease stores v at p with release order: a goroutine that reads v
// at p with atomic.LoadUint64 also sees every store that this goroutine
// made before it. Unlike atomic.StoreUint64 it does not order the store
// before this goroutine's later loads, which a write that publishes data
// does not need.
//
// On amd64 it is a plain move (release_amd64.s): the processor makes
// stores visible in program order, and the call keeps the compiler from
// moving loads and stores across it. atomic.StoreUint64 is an XCHG
// there, a locked instruction that also waits for the store buffer to
// drain; two of them per slot were about a tenth of a Batch of integers.
// Go's memory model does not describe assembly: this relies on the
// processor's model, as the runtime's own release stores do. With the
// race detector, which sees only sync/atomic, with the purego build tag,
// and on other processors, it is atomic.StoreUint64 (release_other.go);
// CI runs the packages that use it both ways.
//
//go:noescape
func storeRelease(p *uint64, v uint64)
