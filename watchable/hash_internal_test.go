package watchable

import (
	"strings"
	"testing"

	"github.com/switchyard-go/switchyard/internal/mvcc"
	"github.com/switchyard-go/switchyard/watchable/internal/hamt"
)

// TestTableAndTriesHashKeysAlike checks that the hash the table finds a
// key by (mvcc.Ref.Hash), which a write hands to its subscribers'
// windows, views and key indexes in place of hashing the key again, is
// hamt.Hash's, which they built themselves by, for keys of every kind:
// negative narrow integers (whose bits are zero-extended either way) and
// types that go to maphash (whose seed is keyhash's either way) included.
func TestTableAndTriesHashKeysAlike(t *testing.T) {
	type nodeName string
	type narrow int8
	type pair struct {
		a string
		b int
	}
	x := 7
	sameHash(t, "short string", "node-1")
	sameHash(t, "long string", strings.Repeat("node", 10))
	sameHash(t, "named string", nodeName("node-1"))
	sameHash(t, "int", -3)
	sameHash(t, "int64", int64(-3))
	sameHash(t, "int32", int32(-70000))
	sameHash(t, "int16", int16(-300))
	sameHash(t, "int8", int8(-3))
	sameHash(t, "named int8", narrow(-5))
	sameHash(t, "uint8", uint8(250))
	sameHash(t, "uint64", uint64(1)<<63)
	sameHash(t, "uintptr", uintptr(12))
	sameHash(t, "float64", -0.5)
	sameHash(t, "bool", true)
	sameHash(t, "struct", pair{"a", -1})
	sameHash(t, "array", [2]int{-1, 2})
	sameHash(t, "pointer", &x)
}

func sameHash[K comparable](t *testing.T, name string, k K) {
	t.Helper()
	var m Map[K, int]
	m.Store(k, 1)
	var c mvcc.Ref[K, int]
	m.tab.Find(k, &c)
	if _, ok := c.Value(); !ok {
		t.Fatalf("%s: the table does not find the key it stored", name)
	}
	if got, want := c.Hash(), hamt.Hash(k); got != want {
		t.Errorf("%s: the table found the key by hash %#x; hamt.Hash is %#x", name, got, want)
	}
}
