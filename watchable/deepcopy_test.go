package watchable_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/switchyard-go/switchyard/watchable"
)

type plain struct {
	Name  string
	Port  int
	Ratio float64
	Pair  [2]int32
	When  struct{ Sec, Nsec int64 }
}

// version has an Equal method that ignores Note.
type version struct {
	N    int
	Note string
}

func (v version) Equal(o version) bool { return v.N == o.N }

func TestDeepCopyMethodIsUsed(t *testing.T) {
	in := &item{Name: "a", Tags: []string{"x"}}
	out := watchable.DeepCopy(in)
	if out == in || &out.Tags[0] == &in.Tags[0] {
		t.Fatal("DeepCopy shares memory with its input")
	}
	if !watchable.DeepEqual(in, out) {
		t.Fatalf("copy %+v differs from %+v", out, in)
	}
	var nilItem *item
	if watchable.DeepCopy(nilItem) != nil {
		t.Fatal("DeepCopy of a nil pointer is not nil")
	}
}

func TestDeepCopyProto(t *testing.T) {
	in, err := structpb.NewStruct(map[string]any{"name": "a", "list": []any{1.0, "two"}})
	if err != nil {
		t.Fatal(err)
	}
	out := watchable.DeepCopy(in)
	if out == in {
		t.Fatal("DeepCopy returned the same message")
	}
	if !watchable.DeepEqual(in, out) {
		t.Fatal("copy is not proto.Equal to the original")
	}
	out.Fields["name"] = structpb.NewStringValue("b")
	if in.Fields["name"].GetStringValue() != "a" {
		t.Fatal("mutating the copy changed the original")
	}
	if watchable.DeepEqual(in, out) {
		t.Fatal("DeepEqual missed a difference between messages")
	}

	var m watchable.Map[string, *durationpb.Duration]
	d := durationpb.New(time.Second)
	m.Store("d", d)
	d.Seconds = 99
	if got, _ := m.Load("d"); got.AsDuration() != time.Second {
		t.Fatalf("stored proto changed with the caller's: %v", got.AsDuration())
	}
	rev := m.Revision()
	m.Store("d", durationpb.New(time.Second))
	if m.Revision() != rev {
		t.Fatal("storing a proto.Equal message made a new revision")
	}
}

func TestDeepCopyPlainValues(t *testing.T) {
	in := plain{Name: "a", Port: 80, Ratio: 0.5, Pair: [2]int32{1, 2}}
	if out := watchable.DeepCopy(in); out != in {
		t.Fatalf("DeepCopy(%+v) = %+v", in, out)
	}
	if watchable.DeepCopy("s") != "s" || watchable.DeepCopy(42) != 42 {
		t.Fatal("DeepCopy of a basic value changed it")
	}
}

// TestDeepCopyCopiesReferences stores the kinds of value DeepCopy used to
// refuse: they are copied now, and the map keeps none of the caller's memory.
func TestDeepCopyCopiesReferences(t *testing.T) {
	type withSlice struct {
		Name  string
		Inner struct{ Items []string }
	}
	t.Run("slice", func(t *testing.T) {
		mine := []string{"a"}
		var m watchable.Map[int, []string]
		m.Store(1, mine)
		mine[0] = "mutated"
		if got, _ := m.Load(1); !slices.Equal(got, []string{"a"}) {
			t.Fatalf("Load = %q", got)
		}
	})
	t.Run("map", func(t *testing.T) {
		mine := map[string]int{"a": 1}
		var m watchable.Map[int, map[string]int]
		m.Store(1, mine)
		mine["a"] = 2
		if got, _ := m.Load(1); got["a"] != 1 {
			t.Fatalf("Load = %v", got)
		}
	})
	t.Run("pointer without DeepCopy", func(t *testing.T) {
		mine := &plain{Name: "a"}
		var m watchable.Map[int, *plain]
		m.Store(1, mine)
		mine.Name = "mutated"
		if got, _ := m.Load(1); got == mine || got.Name != "a" {
			t.Fatalf("Load = %p %+v; mine is %p", got, got, mine)
		}
	})
	t.Run("nested slice", func(t *testing.T) {
		mine := withSlice{Name: "a"}
		mine.Inner.Items = []string{"x"}
		var m watchable.Map[int, withSlice]
		m.Store(1, mine)
		mine.Inner.Items[0] = "mutated"
		if got, _ := m.Load(1); got.Inner.Items[0] != "x" {
			t.Fatalf("Load = %+v", got)
		}
	})
}

// TestDeepCopyRefusesFuncs checks that what cannot be copied is refused at
// the first Store, with a message naming the type and the path to the part,
// and that the map is left as it was.
func TestDeepCopyRefusesFuncs(t *testing.T) {
	type hook struct{ Fn func() }
	type service struct {
		Name  string
		Hooks []hook
	}
	var m watchable.Map[string, *service]
	defer func() {
		want := "watchable: cannot deep-copy *watchable_test.service: field .Hooks[].Fn is a func"
		if got := recover(); got != want {
			t.Fatalf("panic %q; want %q", got, want)
		}
		if m.Len() != 0 || m.Revision() != 0 {
			t.Fatalf("the map changed: %d entries, revision %d", m.Len(), m.Revision())
		}
	}()
	m.Store("a", &service{Name: "a"}) // no hooks, yet the type is refused
	t.Fatal("Store of a type holding a func did not panic")
}

// shape is an interface type whose implementations copy themselves.
type shape interface {
	DeepCopy() shape
	Area() int
}

type rect struct{ Sides []int }

func (r *rect) DeepCopy() shape { return &rect{Sides: append([]int(nil), r.Sides...)} }
func (r *rect) Area() int       { return r.Sides[0] * r.Sides[1] }

func TestDeepCopyInterfaceValues(t *testing.T) {
	t.Run("any holding a type with a DeepCopy method", func(t *testing.T) {
		var m watchable.Map[string, any]
		mine := &item{Name: "a", Tags: []string{"x"}}
		m.Store("k", mine)
		mine.Tags[0] = "mutated"
		got, _ := m.Load("k")
		if got.(*item).Tags[0] != "x" {
			t.Fatalf("Store kept the caller's memory: %+v", got)
		}
		m.Store("k", &item{Name: "a", Tags: []string{"x"}})
		if m.Revision() != 1 {
			t.Fatalf("storing an equal value made revision %d", m.Revision())
		}
	})
	t.Run("any holding plain values and nil", func(t *testing.T) {
		var m watchable.Map[string, any]
		m.Store("n", 42)
		m.Store("s", "str")
		m.Store("p", plain{Name: "x"})
		m.Store("nil", nil)
		m.Store("n", 42) // equal: no revision
		want := map[string]any{"n": 42, "s": "str", "p": plain{Name: "x"}, "nil": nil}
		if diff := cmp.Diff(want, m.LoadAll()); diff != "" || m.Revision() != 4 {
			t.Fatalf("revision %d, contents (-want +got):\n%s", m.Revision(), diff)
		}
	})
	t.Run("any holding a proto message", func(t *testing.T) {
		var m watchable.Map[string, any]
		d := durationpb.New(time.Second)
		m.Store("d", d)
		d.Seconds = 7
		if got, _ := m.Load("d"); got.(*durationpb.Duration).AsDuration() != time.Second {
			t.Fatalf("stored proto changed with the caller's: %v", got)
		}
	})
	t.Run("interface whose DeepCopy returns the interface", func(t *testing.T) {
		var m watchable.Map[string, shape]
		mine := &rect{Sides: []int{2, 3}}
		m.Store("r", mine)
		mine.Sides[0] = 100
		if got, _ := m.Load("r"); got.Area() != 6 {
			t.Fatalf("Area = %d; want 6", got.Area())
		}
	})
	t.Run("Kubernetes-style object interface", func(t *testing.T) {
		var m watchable.Map[string, object]
		mine := &meta{Name: "a", Labels: map[string]string{"app": "x"}}
		m.Store("o", mine)
		mine.Labels["app"] = "mutated"
		got, _ := m.Load("o")
		if app := got.(*meta).Labels["app"]; app != "x" {
			t.Fatalf("stored object changed with the caller's: app %q", app)
		}
	})
	t.Run("any holding a value whose pointer has DeepCopy", func(t *testing.T) {
		var m watchable.Map[string, any]
		mine := meta{Name: "a", Labels: map[string]string{"app": "x"}}
		m.Store("v", mine)
		mine.Labels["app"] = "mutated"
		got, _ := m.Load("v")
		if app := got.(meta).Labels["app"]; app != "x" {
			t.Fatalf("stored value changed with the caller's: app %q", app)
		}
	})
	t.Run("any holding a slice", func(t *testing.T) {
		var m watchable.Map[string, any]
		mine := []string{"a"}
		m.Store("k", mine)
		mine[0] = "mutated"
		if got, _ := m.Load("k"); !slices.Equal(got.([]string), []string{"a"}) {
			t.Fatalf("Load = %q", got)
		}
	})
	t.Run("any holding a func fails naming its type", func(t *testing.T) {
		defer func() {
			want := "watchable: cannot deep-copy func() held in interface {}: it is a func"
			if got := recover(); got != want {
				t.Fatalf("panic %q; want %q", got, want)
			}
		}()
		var m watchable.Map[string, any]
		m.Store("k", func() {})
		t.Fatal("storing a func in a Map[string, any] did not panic")
	})
}

// meta is shaped like the Kubernetes types deepcopy-gen writes for: the
// generated methods have pointer receivers, and DeepCopyObject returns the
// runtime.Object-like interface object.
type meta struct {
	Name   string
	Labels map[string]string
}

func (in *meta) DeepCopyInto(out *meta) {
	*out = *in
	if in.Labels != nil {
		out.Labels = make(map[string]string, len(in.Labels))
		for k, v := range in.Labels {
			out.Labels[k] = v
		}
	}
}

func (in *meta) DeepCopy() *meta {
	if in == nil {
		return nil
	}
	out := new(meta)
	in.DeepCopyInto(out)
	return out
}

func (in *meta) DeepCopyObject() object { return in.DeepCopy() }

// object is shaped like k8s.io/apimachinery/pkg/runtime.Object.
type object interface{ DeepCopyObject() object }

// TestDeepCopyPointerMethodOnValueType stores values whose DeepCopy method
// has a pointer receiver (func (in *T) DeepCopy() *T), as deepcopy-gen writes.
func TestDeepCopyPointerMethodOnValueType(t *testing.T) {
	var m watchable.Map[string, meta]
	mine := meta{Name: "a", Labels: map[string]string{"app": "x"}}
	m.Store("k", mine)
	mine.Labels["app"] = "mutated"
	got, _ := m.Load("k")
	if got.Labels["app"] != "x" {
		t.Fatalf("Store kept the caller's memory: %+v", got.Labels)
	}
	got.Labels["app"] = "mutated after Load"
	if v, _ := m.State().Get("k"); v.Labels["app"] != "x" {
		t.Fatalf("Load returned the map's memory: %+v", v.Labels)
	}
	m.Store("k", meta{Name: "a", Labels: map[string]string{"app": "x"}})
	if m.Revision() != 1 {
		t.Fatalf("storing an equal value made revision %d", m.Revision())
	}
}

func TestDeepEqual(t *testing.T) {
	var nilItem *item
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"equal ints", watchable.DeepEqual(1, 1), true},
		{"different strings", watchable.DeepEqual("a", "b"), false},
		{"equal plain structs", watchable.DeepEqual(plain{Name: "a", Pair: [2]int32{1, 2}}, plain{Name: "a", Pair: [2]int32{1, 2}}), true},
		{"different plain structs", watchable.DeepEqual(plain{Port: 1}, plain{Port: 2}), false},
		{"equal pointers to equal values", watchable.DeepEqual(&item{Name: "a", Tags: []string{"x"}}, &item{Name: "a", Tags: []string{"x"}}), true},
		{"pointers to different values", watchable.DeepEqual(&item{Name: "a"}, &item{Name: "b"}), false},
		{"nil and non-nil pointer", watchable.DeepEqual(nilItem, &item{}), false},
		{"two nil pointers", watchable.DeepEqual(nilItem, nilItem), true},
		{"Equal method decides", watchable.DeepEqual(version{N: 1, Note: "a"}, version{N: 1, Note: "b"}), true},
		{"proto.Equal decides", watchable.DeepEqual(durationpb.New(time.Second), durationpb.New(time.Second)), true},
		{"any: different dynamic types", watchable.DeepEqual[any](1, "1"), false},
		{"any: equal ints", watchable.DeepEqual[any](1, 1), true},
		{"any: nil and value", watchable.DeepEqual[any](nil, 1), false},
		{"any: equal slices", watchable.DeepEqual[any]([]int{1}, []int{1}), true},
		{"slices", watchable.DeepEqual([]int{1, 2}, []int{1, 3}), false},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: DeepEqual = %v; want %v", tt.name, tt.got, tt.want)
		}
	}
}
