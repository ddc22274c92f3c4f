//go:build !amd64 || race || purego

package mvcc

import "sync/atomic"

// storeRelease stores v at p with release order: a goroutine that reads v
// at p with atomic.LoadUint64 also sees every store that this goroutine
// made before it. Here (the race detector, the purego build tag, or a
// processor other than amd64) it is atomic.StoreUint64; see
// release_amd64.go.
func storeRelease(p *uint64, v uint64) {
	atomic.StoreUint64(p, v)
}
