// Package viewwrite writes through a watchable.View, which must not compile
// (see TestViewCannotWrite).
package viewwrite

import "github.com/switchyard-go/switchyard/watchable"

func write(v watchable.View[string, int]) {
	v.Store("a", 1)
	v.Delete("a")
	v.Batch(func(*watchable.Batch[string, int]) {})
	v.m.Store("a", 1)
}
