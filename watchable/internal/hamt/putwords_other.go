//go:build !amd64 || race || purego

package hamt

import "sync/atomic"

// releaseWords stores each put's val into its word, skipping puts without
// one: see storeWords.
func releaseWords(puts []Put) {
	for i := range puts {
		if w := puts[i].word; w != nil {
			atomic.StoreUint64(w, puts[i].val)
		}
	}
}
