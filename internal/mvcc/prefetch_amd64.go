//go:build !purego

package mvcc

import "unsafe"

// prefetch asks the processor to bring the cache line at p into its
// caches, and returns without waiting: a hint, which never faults and
// which neither the race detector nor Go's memory model sees, for it
// reads nothing the program uses. A writer that knows the slots it will
// probe next prefetches them, so that their cache misses overlap (see
// Table.Prefetch). On amd64 it is PREFETCHT0 (prefetch_amd64.s); with
// the purego build tag and on other processors it does nothing
// (prefetch_other.go).
//
//go:noescape
func prefetch(p unsafe.Pointer)
