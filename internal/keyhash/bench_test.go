package keyhash

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// BenchmarkHash compares this package's hashes with maphash's for the
// keys it hashes itself.
func BenchmarkHash(b *testing.B) {
	s := maphash.MakeSeed()
	var sink uint64
	b.Run("int/keyhash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += Of(s, i)
			i++
		}
	})
	b.Run("int/maphash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += maphash.Comparable(s, i)
			i++
		}
	})
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%08d", i)
	}
	b.Run("string/keyhash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += Of(s, keys[i%len(keys)])
			i++
		}
	})
	b.Run("string/maphash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += maphash.Comparable(s, keys[i%len(keys)])
			i++
		}
	})
	_ = sink
}
