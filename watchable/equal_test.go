package watchable_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/watchable"
)

// beat is an instance whose Equal ignores when it was last seen, as a
// registry's instances do: heartbeats must not wake watchers.
type beat struct {
	Addr     string
	LastSeen int
}

func (b beat) Equal(o beat) bool { return b.Addr == o.Addr }

func TestEqualStoreKeepsTheNewValueSilently(t *testing.T) {
	var m watchable.Map[string, beat]
	m.Store("a", beat{Addr: "x", LastSeen: 1})
	sub := m.Subscribe(t.Context())
	next(t, sub)
	before := m.State()
	rev := m.Revision()

	m.Store("a", beat{Addr: "x", LastSeen: 2})

	if got := m.Revision(); got != rev {
		t.Fatalf("Revision after an equal Store = %d; want %d", got, rev)
	}
	nothingPending(t, sub)
	if v, _ := m.Load("a"); v.LastSeen != 2 {
		t.Fatalf("Load after an equal Store = %+v; want the new value", v)
	}
	if v, _ := m.State().Get("a"); v.LastSeen != 2 {
		t.Fatalf("State after an equal Store holds %+v; want the new value", v)
	}
	if v, _ := before.Get("a"); v.LastSeen != 1 {
		t.Fatalf("a State taken before the equal Store changed to %+v", v)
	}
	if s := next(t, m.Subscribe(t.Context())); s.State.Len() != 1 || s.Updates[0].Value.LastSeen != 2 {
		t.Fatalf("a new subscriber's first snapshot = %+v; want the new value", s)
	}

	// The next effective write shows the existing subscriber the new value
	// in its State, with an Update only for what changed.
	m.Store("b", beat{Addr: "y"})
	s := next(t, sub)
	if diff := cmp.Diff([]watchable.Update[string, beat]{{Key: "b", Value: beat{Addr: "y"}}}, s.Updates); diff != "" {
		t.Fatalf("Updates (-want +got):\n%s", diff)
	}
	if v, _ := s.State.Get("a"); v.LastSeen != 2 {
		t.Fatalf("the subscriber's next State holds %+v; want the new value", v)
	}
}

func TestEqualWritesThroughEveryPath(t *testing.T) {
	cases := []struct {
		name  string
		write func(m *watchable.Map[string, beat]) bool // reports what the write returned, if anything
	}{
		{"Store", func(m *watchable.Map[string, beat]) bool { m.Store("a", beat{"x", 2}); return true }},
		{"CompareAndSwap", func(m *watchable.Map[string, beat]) bool {
			return m.CompareAndSwap("a", beat{"x", 99}, beat{"x", 2})
		}},
		{"Batch", func(m *watchable.Map[string, beat]) bool {
			m.Batch(func(b *watchable.Batch[string, beat]) { b.Store("a", beat{"x", 2}) })
			return true
		}},
		{"Replace", func(m *watchable.Map[string, beat]) bool {
			m.Replace(map[string]beat{"a": {"x", 2}})
			return true
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m watchable.Map[string, beat]
			m.Store("a", beat{"x", 1})
			sub := m.Subscribe(t.Context())
			next(t, sub)
			if !c.write(&m) {
				t.Fatal("the write reported false")
			}
			if v, _ := m.Load("a"); v.LastSeen != 2 || m.Revision() != 1 {
				t.Fatalf("after an equal write: %+v at revision %d; want LastSeen 2 at revision 1", v, m.Revision())
			}
			nothingPending(t, sub)
		})
	}
}

func TestEqualStoreOfAnExactTypeChangesNothing(t *testing.T) {
	var m watchable.Map[string, *item]
	m.Store("a", &item{Name: "x", Tags: []string{"t"}})
	st := m.State()
	m.Store("a", &item{Name: "x", Tags: []string{"t"}})
	if m.Revision() != 1 {
		t.Fatalf("Revision = %d; want 1", m.Revision())
	}
	// Nothing distinguishes the values, so the map kept its version.
	a, _ := st.Get("a")
	b, _ := m.State().Get("a")
	if a != b {
		t.Fatal("an equal Store of a type compared field by field replaced the stored value")
	}
}

// An include that looks at a field Equal ignores sees a silent write as a
// real change, and its subscriber is told, at a new revision.
func TestSilentWriteThatMovesASubsetEntryIsEffective(t *testing.T) {
	var m watchable.Map[string, beat]
	m.Store("a", beat{"x", 1})
	recent := m.SubscribeSubset(t.Context(), func(_ string, b beat) bool { return b.LastSeen >= 2 })
	whole := m.Subscribe(t.Context())
	if s := next(t, recent); s.State.Len() != 0 {
		t.Fatalf("subset's first State = %v; want empty", s.State.Map())
	}
	next(t, whole)

	m.Store("a", beat{"x", 2})
	if m.Revision() != 2 {
		t.Fatalf("Revision = %d; want 2: the write moved an entry into a subset", m.Revision())
	}
	s := next(t, recent)
	if diff := cmp.Diff([]watchable.Update[string, beat]{{Key: "a", Value: beat{"x", 2}}}, s.Updates); diff != "" {
		t.Fatalf("subset Updates (-want +got):\n%s", diff)
	}
	if s.Revision != 2 {
		t.Fatalf("subset snapshot Revision = %d; want 2", s.Revision)
	}
	// For the whole-map subscriber the value is equal: nothing to tell.
	nothingPending(t, whole)

	// An equal write that keeps the entry in the subset is silent again,
	// and the subset's State holds the new value afterwards.
	m.Store("a", beat{"x", 3})
	nothingPending(t, recent)
	m.Store("b", beat{"y", 5})
	s = next(t, recent)
	if v, _ := s.State.Get("a"); v.LastSeen != 3 {
		t.Fatalf("subset State holds %+v; want LastSeen 3", v)
	}
}

// probe counts the calls of its Equal method.
type probe struct{ calls *int }

func (p probe) Equal(o probe) bool {
	*p.calls++
	return true
}

// TestDeepEqualComparesNearFieldsFirst checks that a struct's fields held in
// the value itself are compared before those that need more reading: a
// difference in an integer declared last is found without calling the
// Equal method of a field declared first.
func TestDeepEqualComparesNearFieldsFirst(t *testing.T) {
	type obj struct {
		P    probe
		Name string
		N    int
	}
	calls := 0
	a := obj{P: probe{&calls}, Name: "a", N: 1}
	b := obj{P: probe{&calls}, Name: "a", N: 2}
	if watchable.DeepEqual(a, b) {
		t.Fatal("DeepEqual of values whose N differ = true")
	}
	if calls != 0 {
		t.Fatalf("Equal of the first field called %d times before the last field's difference was seen", calls)
	}
	b.N = 1
	if !watchable.DeepEqual(a, b) || calls != 1 {
		t.Fatalf("DeepEqual of equal values: want true after one Equal call, got %d calls", calls)
	}
}
