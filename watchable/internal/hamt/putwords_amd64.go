//go:build !race && !purego

package hamt

// releaseWords stores each put's val into its word, skipping puts without
// one, with plain moves: see storeWords.
//
//go:noescape
func releaseWords(puts []Put)
