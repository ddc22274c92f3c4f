//go:build !amd64 || purego

package mvcc

import "unsafe"

// prefetch does nothing here: see prefetch_amd64.go.
func prefetch(unsafe.Pointer) {}
