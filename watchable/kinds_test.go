package watchable_test

import (
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchyard-go/switchyard/watchable"
)

// TestValueKinds runs the map's rules over each kind of value it accepts:
// values are copied in and out, equal stores are no-ops, and subscribers
// get the newest value and, on delete, the last value they saw.
func TestValueKinds(t *testing.T) {
	t.Run("DeepCopy method", func(t *testing.T) {
		checkValueKind(t,
			func() *item { return &item{Name: "a", Tags: []string{"x"}} },
			func() *item { return &item{Name: "b"} },
			func(v *item) { v.Tags[0] = "mutated" })
	})
	t.Run("proto message", func(t *testing.T) {
		msg := func(s string) func() *structpb.Struct {
			return func() *structpb.Struct {
				v, err := structpb.NewStruct(map[string]any{"name": s, "list": []any{1.0}})
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		checkValueKind(t, msg("a"), msg("b"),
			func(v *structpb.Struct) { v.Fields["name"] = structpb.NewStringValue("mutated") })
	})
	t.Run("plain struct", func(t *testing.T) {
		checkValueKind(t,
			func() plain { return plain{Name: "a", Port: 1} },
			func() plain { return plain{Name: "b", Port: 2} },
			nil)
	})
	t.Run("value with a pointer DeepCopy method", func(t *testing.T) {
		checkValueKind(t,
			func() meta { return meta{Name: "a", Labels: map[string]string{"k": "v"}} },
			func() meta { return meta{Name: "b"} },
			func(v meta) { v.Labels["k"] = "mutated" })
	})
	t.Run("interface", func(t *testing.T) {
		checkValueKind(t,
			func() any { return &item{Name: "a", Tags: []string{"x"}} },
			func() any { return 42 },
			func(v any) { v.(*item).Tags[0] = "mutated" })
	})
}

// checkValueKind checks one kind of value. first and second make fresh,
// different values; mutate (nil for values that cannot be changed through a
// copy) changes a value made by first in place.
func checkValueKind[V any](t *testing.T, first, second func() V, mutate func(V)) {
	t.Helper()
	same := func(what string, got, want V) {
		t.Helper()
		if !watchable.DeepEqual(got, want) {
			t.Fatalf("%s = %+v; want %+v", what, got, want)
		}
	}
	var m watchable.Map[string, V]
	mine := first()
	m.Store("k", mine)
	if mutate != nil {
		mutate(mine)
		loaded, _ := m.Load("k")
		same("value after the caller mutated its own", loaded, first())
		mutate(loaded)
		stored, _ := m.State().Get("k")
		same("value after the caller mutated a loaded copy", stored, first())
		all := m.LoadAll()
		mutate(all["k"])
		stored, _ = m.State().Get("k")
		same("value after the caller mutated LoadAll's copy", stored, first())
	}

	ch := m.Subscribe(t.Context())
	s := next(t, ch)
	if len(s.Updates) != 1 || s.Updates[0].Key != "k" || s.Updates[0].Delete {
		t.Fatalf("first Updates = %+v", s.Updates)
	}
	same("first update", s.Updates[0].Value, first())

	m.Store("k", first()) // deep-equal: nothing happens
	if m.Revision() != 1 {
		t.Fatalf("storing an equal value made revision %d", m.Revision())
	}
	nothingPending(t, ch)

	m.Store("k", second())
	s = next(t, ch)
	if len(s.Updates) != 1 || s.Updates[0].Delete {
		t.Fatalf("Updates = %+v", s.Updates)
	}
	same("update", s.Updates[0].Value, second())

	m.Store("k", first())
	m.Delete("k") // unread in between: a delete of the value last read
	s = next(t, ch)
	if len(s.Updates) != 1 || !s.Updates[0].Delete {
		t.Fatalf("Updates = %+v", s.Updates)
	}
	same("deleted value", s.Updates[0].Value, second())
	if s.State.Len() != 0 {
		t.Fatalf("State after delete has %d entries", s.State.Len())
	}
}
