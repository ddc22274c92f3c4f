package keyhash

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestStringSpreadsKeys checks String on families of keys that differ in
// a few bytes, of every length path (short, 4–7, 8–16 and longer): no two
// keys of a family share a hash, and both the high bits, which choose a
// key's slot, and the low ones, which make its tag, fall evenly into
// buckets. The limits are six standard deviations of the chi-square
// statistic above its mean, so a good hash fails them about once in a
// billion runs; a hash that ignored some bytes, or mixed them poorly, fails
// them at once.
func TestStringSpreadsKeys(t *testing.T) {
	const n = 100_000
	families := map[string]func(int) string{
		"decimal":        func(i int) string { return fmt.Sprint(i) },
		"node-N":         func(i int) string { return fmt.Sprintf("node-%d", i) },
		"ns-N/svc-NNNNN": func(i int) string { return fmt.Sprintf("ns-%d/svc-%06d", i%20, i) },
		"key-NNNNNNNN":   func(i int) string { return fmt.Sprintf("key-%08d", i) },
		"long":           func(i int) string { return fmt.Sprintf("namespace-%d/service-name-%d", i%7, i) },
		"every length": func(i int) string {
			return strings.Repeat("x", i%17) + string(rune('a'+i/17%26)) + fmt.Sprint(i/(17*26))
		},
	}
	for name, key := range families {
		t.Run(name, func(t *testing.T) { checkSpread(t, n, key, String) })
	}
}

// checkSpread hashes the first n keys of a family with hash, and fails t
// if two distinct keys share a hash, if the family has fewer than nine
// tenths of n distinct keys, or if the high byte or the low five bits of
// the hashes are uneven (see checkEven).
func checkSpread[K comparable](t *testing.T, n int, key func(int) K, hash func(K) uint64) {
	t.Helper()
	seen := make(map[uint64]K, n)
	var high [256]int
	var low [32]int
	for i := range n {
		k := key(i)
		h := hash(k)
		if other, ok := seen[h]; ok {
			if other != k {
				t.Fatalf("%v and %v have the same hash %#x", other, k, h)
			}
			continue // a key the family repeats counts once
		}
		seen[h] = k
		high[h>>56]++
		low[h&31]++
	}
	if len(seen) < n*9/10 {
		t.Fatalf("the family has only %d distinct keys", len(seen))
	}
	checkEven(t, "high byte", high[:], len(seen))
	checkEven(t, "low five bits", low[:], len(seen))
}

// checkEven fails t if counts, of total draws into len(counts) buckets,
// are further from even than chance allows (see TestStringSpreadsKeys).
func checkEven(t *testing.T, what string, counts []int, total int) {
	t.Helper()
	want := float64(total) / float64(len(counts))
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - want
		chi += d * d / want
	}
	dof := float64(len(counts) - 1)
	if limit := dof + 6*math.Sqrt(2*dof); chi > limit {
		t.Errorf("%s: chi-square %.1f over %d buckets, above %.1f: %v", what, chi, len(counts), limit, counts)
	}
}

// TestStringIsTheKeys checks that equal keys hash alike, wherever their
// bytes are, and that no byte is lost to the length.
func TestStringIsTheKeys(t *testing.T) {
	for _, k := range []string{"", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh", "0123456789abcdef", "0123456789abcdefg"} {
		b := []byte("!" + k)
		if got, want := String(string(b[1:])), String(k); got != want {
			t.Errorf("String(%q) is %#x at one address and %#x at another", k, got, want)
		}
	}
	if String("") == String("\x00") {
		t.Error(`"" and "\x00" hash alike`)
	}
}

// TestUint64SpreadsKeys checks Uint64 as TestStringSpreadsKeys checks
// String, on families of integers that differ in a few bits: low ones,
// high ones, negatives, and multiples of a power of two.
func TestUint64SpreadsKeys(t *testing.T) {
	const n = 100_000
	families := map[string]func(int) uint64{
		"0..n":         func(i int) uint64 { return uint64(i) },
		"negative":     func(i int) uint64 { return uint64(-i - 1) },
		"i<<40":        func(i int) uint64 { return uint64(i) << 40 },
		"i*1024":       func(i int) uint64 { return uint64(i) * 1024 },
		"i<<56|i":      func(i int) uint64 { return uint64(i)<<56 | uint64(i) },
		"byte | i<<32": func(i int) uint64 { return uint64(uint8(i)) | uint64(i>>8)<<32 },
	}
	for name, key := range families {
		t.Run(name, func(t *testing.T) { checkSpread(t, n, key, Uint64) })
	}
}

type named int

// nodeName and narrow are a string and a narrow integer type of their own.
type (
	nodeName string
	narrow   int16
)

type pair struct {
	a string
	b int
}

// TestOfIsTheTypesHash checks that Of gives strings String's hash and
// integers of every predeclared type Uint64's, string and integer types of
// a name of their own the hash of their kind, and that equal keys of other
// types hash alike.
func TestOfIsTheTypesHash(t *testing.T) {
	if got, want := Of("node-1"), String("node-1"); got != want {
		t.Errorf("Of(string) = %#x, want String's %#x", got, want)
	}
	const v = -3
	neg := int64(v)
	for _, c := range []struct {
		name string
		got  uint64
		bits uint64 // v's bits in the type, zero-extended
	}{
		{"int", Of(int(v)), uint64(neg)}, {"int64", Of(int64(v)), uint64(neg)},
		{"int32", Of(int32(v)), uint64(uint32(neg))}, {"int16", Of(int16(v)), uint64(uint16(neg))},
		{"int8", Of(int8(v)), uint64(uint8(neg))},
	} {
		if want := Uint64(c.bits); c.got != want {
			t.Errorf("Of(%s(%d)) = %#x, want Uint64's %#x", c.name, v, c.got, want)
		}
	}
	for _, c := range []struct {
		name string
		got  uint64
		x    uint64
	}{
		{"uint", Of(uint(7)), 7}, {"uint64", Of(uint64(7)), 7}, {"uint32", Of(uint32(7)), 7},
		{"uint16", Of(uint16(7)), 7}, {"uint8", Of(uint8(7)), 7}, {"uintptr", Of(uintptr(7)), 7},
	} {
		if want := Uint64(c.x); c.got != want {
			t.Errorf("Of(%s(%d)) = %#x, want Uint64's %#x", c.name, c.x, c.got, want)
		}
	}
	n1, n2 := named(5), named(5)
	p1, p2 := pair{"a", 1}, pair{"a", 1}
	if Of(n1) != Of(n2) || Of(p1) != Of(p2) {
		t.Error("equal keys of a named type or a struct hash differently")
	}
	if got, want := Of(n1), Uint64(5); got != want {
		t.Errorf("Of(named(5)) = %#x, want Uint64's %#x", got, want)
	}
	if got, want := Of(narrow(-5)), Uint64(0xfffb); got != want {
		t.Errorf("Of(narrow(-5)) = %#x, want Uint64(0xfffb)'s %#x", got, want)
	}
	if got, want := Of(nodeName("node-1")), String("node-1"); got != want {
		t.Errorf("Of(nodeName(node-1)) = %#x, want String's %#x", got, want)
	}
	if Of(pair{"a", 1}) == Of(pair{"a", 2}) {
		t.Error("pair{a, 1} and pair{a, 2} hash alike")
	}
}

// TestOfDoesNotAllocate checks that strings and integers hash without
// allocating, also with the purego build tag, under which maphash.Comparable
// allocates on every call.
func TestOfDoesNotAllocate(t *testing.T) {
	key := strings.Repeat("k", 40) // over 16 bytes: maphash.String
	var sink uint64
	n := testing.AllocsPerRun(100, func() {
		sink += Of("node-1") + Of(key) + Of(123456789) + Of(int64(-5)) + Of(uint32(9))
	})
	if n != 0 {
		t.Errorf("hashing strings and integers allocates %v times", n)
	}
	_ = sink
}

// TestOfNamedKeysDoNotAllocate checks that string and integer types of a
// name of their own hash without allocating, also with the purego build
// tag, under which maphash.Comparable would.
func TestOfNamedKeysDoNotAllocate(t *testing.T) {
	var sink uint64
	n := testing.AllocsPerRun(100, func() {
		sink += Of(nodeName("node-1")) + Of(named(123456789)) + Of(narrow(-5))
	})
	if n != 0 {
		t.Errorf("hashing named strings and integers allocates %v times", n)
	}
	_ = sink
}
