package keyhash

import (
	"fmt"
	"hash/maphash"
	"testing"
)

// BenchmarkHash compares this package's hashes with maphash's for the
// keys it hashes itself. Each case spells its loop out with its key type,
// as a table of that type calls Of, rather than sharing a generic helper:
// through one, the calls go by the shape's dictionary, a few percent
// slower for ints (2.9 against 2.8 ns), and the figures docs/design.md
// quotes are the direct calls'.
func BenchmarkHash(b *testing.B) {
	s := maphash.MakeSeed()
	var sink uint64
	b.Run("int/keyhash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += Of(i)
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
			sink += Of(keys[i%len(keys)])
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
	named := make([]nodeName, len(keys))
	for i, k := range keys {
		named[i] = nodeName(k)
	}
	b.Run("named-string/keyhash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += Of(named[i%len(named)])
			i++
		}
	})
	b.Run("named-string/maphash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += maphash.Comparable(s, named[i%len(named)])
			i++
		}
	})
	b.Run("named-int/keyhash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += Of(narrow(i))
			i++
		}
	})
	b.Run("named-int/maphash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += maphash.Comparable(s, narrow(i))
			i++
		}
	})
	b.Run("struct/keyhash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += Of(pair{"a", i})
			i++
		}
	})
	b.Run("struct/maphash", func(b *testing.B) {
		i := 0
		for b.Loop() {
			sink += maphash.Comparable(s, pair{"a", i})
			i++
		}
	})
	_ = sink
}
