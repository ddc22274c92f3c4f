package watchable_test

import (
	"strings"
	"testing"
	"time"

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

func TestDeepEqualUsesEqualMethod(t *testing.T) {
	var m watchable.Map[string, version]
	m.Store("a", version{N: 1, Note: "first"})
	m.Store("a", version{N: 1, Note: "second"})
	if v, _ := m.Load("a"); v.Note != "first" || m.Revision() != 1 {
		t.Fatalf("a value Equal to the current one was stored: %+v, revision %d", v, m.Revision())
	}
}

func TestDeepCopyRejectsReferences(t *testing.T) {
	type withSlice struct {
		Name  string
		Inner struct{ Items []string }
	}
	tests := []struct {
		name  string
		store func()
		want  []string
	}{
		{"slice", func() { var m watchable.Map[int, []string]; m.Store(1, []string{"a"}) }, []string{"[]string", "slice"}},
		{"map", func() { var m watchable.Map[int, map[string]int]; m.Store(1, nil) }, []string{"map[string]int", "map"}},
		{"pointer without DeepCopy", func() { var m watchable.Map[int, *plain]; m.Store(1, &plain{}) }, []string{"*watchable_test.plain", "pointer"}},
		{"nested slice", func() { var m watchable.Map[int, withSlice]; m.Store(1, withSlice{}) }, []string{"withSlice", ".Inner.Items", "slice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				for _, w := range tt.want {
					if !strings.Contains(msg, w) {
						t.Errorf("panic message %q does not mention %q", msg, w)
					}
				}
			}()
			tt.store()
			t.Fatal("Store of a value that cannot be copied did not panic")
		})
	}
}
