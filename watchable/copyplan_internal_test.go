package watchable

import (
	"net/netip"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
)

type exactVersion struct{ N int }

func (v exactVersion) Equal(o exactVersion) bool { return v.N == o.N }

// TestExactEqual checks which types the map may skip equal Stores of
// altogether: those whose equal values nobody can tell apart.
func TestExactEqual(t *testing.T) {
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"int", exactEqual[int](), true},
		{"struct of slices, maps and pointers", exactEqual[*struct {
			S []string
			M map[string][]int
			P *netip.Addr
		}](), true},
		{"proto message", exactEqual[*structpb.Struct](), true},
		{"Equal method", exactEqual[exactVersion](), false},
		{"Equal method deep inside", exactEqual[map[string][]exactVersion](), false},
		{"time.Time, whose Equal ignores the location", exactEqual[struct{ At time.Time }](), false},
		{"interface", exactEqual[any](), false},
		{"error", exactEqual[struct{ Err error }](), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("exactEqual[%s] = %v; want %v", tt.name, tt.got, tt.want)
		}
	}
}

// TestPlanCopiesWithoutReflectionWhereItCan checks the plans chosen for
// common shapes: values needing no copy are returned as they are.
func TestPlanCopiesWithoutReflectionWhereItCan(t *testing.T) {
	type lease struct {
		Holder string
		Until  time.Time
		Addr   netip.AddrPort
	}
	if p := planOf[lease](); p.rootCopy != rootShallow {
		t.Errorf("a struct of strings, times and addresses is copied with %d; want assignment", p.rootCopy)
	}
	if p := planOf[*lease](); p.rootCopy != rootPointer {
		t.Errorf("a pointer is copied with %d; want rootPointer", p.rootCopy)
	}
	if p := planOf[struct{ N, M int }](); p.rootEq != rootOperator {
		t.Errorf("a struct of ints is compared with %d; want ==", p.rootEq)
	}
}

func TestMayRecur(t *testing.T) {
	type leaf struct {
		Name   string
		Labels map[string]string
		Ports  []struct{ Port int32 }
	}
	type shared struct{ A, B *leaf } // two paths to one type: no cycle
	type list struct {
		Next *list
		V    int
	}
	type viaSlice struct{ Kids []viaSlice }
	type holder struct{ X any }
	for _, tc := range []struct {
		t    reflect.Type
		want bool
	}{
		{reflect.TypeFor[int](), false},
		{reflect.TypeFor[*leaf](), false},
		{reflect.TypeFor[shared](), false},
		{reflect.TypeFor[map[string][]*leaf](), false},
		{reflect.TypeFor[*list](), true},
		{reflect.TypeFor[viaSlice](), true},
		{reflect.TypeFor[holder](), true},
		{reflect.TypeFor[map[string]any](), true},
		{reflect.TypeFor[[]error](), true},
	} {
		if got := mayRecur(tc.t, map[reflect.Type]bool{}); got != tc.want {
			t.Errorf("mayRecur(%v) = %v; want %v", tc.t, got, tc.want)
		}
	}
}
