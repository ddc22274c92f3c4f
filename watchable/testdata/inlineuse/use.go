// Package inlineuse instantiates a Map as a user's package does, for
// TestTrieHelpersInlined: the trie's generic code is compiled here.
package inlineuse

import "github.com/switchyard-go/switchyard/watchable"

// Load reads one key.
func Load(m *watchable.Map[string, int], key string) (int, bool) {
	return m.Load(key)
}

// Store writes one key.
func Store(m *watchable.Map[string, int], key string, value int) {
	m.Store(key, value)
}
