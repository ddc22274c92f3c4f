package mvcc

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestStrHashSpreadsKeys checks strHash on families of keys that differ in
// a few bytes, of every length path (short, 4–7, 8–16 and longer): no two
// keys of a family share a hash, and both the high bits, which choose a
// key's slot, and the low ones, which make its tag, fall evenly into
// buckets. The limits are six standard deviations of the chi-square
// statistic above its mean, so a good hash fails them about once in a
// billion runs; a hash that ignored some bytes, or mixed them poorly, fails
// them at once.
func TestStrHashSpreadsKeys(t *testing.T) {
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
		t.Run(name, func(t *testing.T) {
			seen := make(map[uint64]string, n)
			var high [256]int
			var low [32]int
			for i := range n {
				k := key(i)
				h := strHash(k)
				if other, ok := seen[h]; ok && other != k {
					t.Fatalf("%q and %q have the same hash %#x", other, k, h)
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
		})
	}
}

// checkEven fails t if counts, of total draws into len(counts) buckets,
// are further from even than chance allows (see TestStrHashSpreadsKeys).
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

// TestStrHashIsTheKeys checks that equal keys hash alike, wherever their
// bytes are, and that the hash of a long key is maphash's.
func TestStrHashIsTheKeys(t *testing.T) {
	for _, k := range []string{"", "a", "ab", "abc", "abcd", "abcdefg", "abcdefgh", "0123456789abcdef", "0123456789abcdefg"} {
		b := []byte("!" + k)
		if got, want := strHash(string(b[1:])), strHash(k); got != want {
			t.Errorf("strHash(%q) is %#x at one address and %#x at another", k, got, want)
		}
	}
	if strHash("") == strHash("\x00") {
		t.Error(`"" and "\x00" hash alike`)
	}
}
