package watchable_test

import (
	"testing"

	"github.com/switchyard-go/switchyard/watchable"
)

// century is an integer whose pointer-receiver Equal compares centuries.
type century int

func (c *century) Equal(o *century) bool { return *c/100 == *o/100 }

// TestPlainKindsHonourPointerEqual checks that integers and strings are
// compared with == only when neither the type nor its pointer has an Equal
// method: Store and State.UpdatesSince must decide as DeepEqual does, which
// honours Equal(*T) bool on *T.
func TestPlainKindsHonourPointerEqual(t *testing.T) {
	// caseless (copyplan_test.go) ignores case in (*caseless).Equal.
	checkPointerEqual[caseless](t, "Foo", "foo", "bar")
	checkPointerEqual[century](t, 1901, 1999, 2001)
}

// checkPointerEqual stores a, then b, which DeepEqual finds equal to a,
// then c, which it does not.
func checkPointerEqual[V any](t *testing.T, a, b, c V) {
	t.Helper()
	if !watchable.DeepEqual(a, b) || watchable.DeepEqual(a, c) {
		t.Fatalf("DeepEqual ignores %T's Equal method", a)
	}
	var m watchable.Map[string, V]
	ch := m.Subscribe(t.Context())
	<-ch
	m.Store("k", a)
	<-ch
	rev, before := m.Revision(), m.State()
	m.Store("k", b) // equal: not a change
	if m.Revision() != rev {
		t.Errorf("%T: storing an equal value made revision %d, was %d", a, m.Revision(), rev)
	}
	select {
	case s := <-ch:
		t.Errorf("%T: storing an equal value delivered %+v", a, s.Updates)
	default:
	}
	if got := m.State().UpdatesSince(before); len(got) != 0 {
		t.Errorf("%T: UpdatesSince lists %+v for an equal value", a, got)
	}
	m.Store("k", c)
	if got := m.State().UpdatesSince(before); len(got) != 1 || !watchable.DeepEqual(got[0].Value, c) {
		t.Errorf("%T: UpdatesSince lists %+v, want k=%v", a, got, c)
	}
}
