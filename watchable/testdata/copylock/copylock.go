// Package copylock copies a watchable.Map by value, which go vet's
// copylocks check must report (see TestVetCatchesCopies).
package copylock

import "github.com/switchyard-go/switchyard/watchable"

func byValue(m watchable.Map[string, int]) int { return m.Len() }

func assigned(m *watchable.Map[string, int]) int {
	c := *m
	return byValue(c)
}
