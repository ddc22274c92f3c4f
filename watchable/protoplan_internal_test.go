package watchable

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/switchyard-go/switchyard/watchable/internal/testpb"
)

// TestProtoMsgFor checks which message types DeepCopy and DeepEqual walk
// themselves: generated open structs, recursive ones included, and not
// those with extensions, which stay with proto.Clone and proto.Equal. The
// differential tests (protoplan_test.go) would pass either way; this one
// makes sure they test the walk.
func TestProtoMsgFor(t *testing.T) {
	for typ, want := range map[reflect.Type]bool{
		reflect.TypeFor[*structpb.Struct]():                  true,
		reflect.TypeFor[*structpb.Value]():                   true,
		reflect.TypeFor[*timestamppb.Timestamp]():            true,
		reflect.TypeFor[*descriptorpb.FileDescriptorProto](): true,
		reflect.TypeFor[*testpb.Scalars3]():                  true,
		reflect.TypeFor[*testpb.Composite3]():                true,
		reflect.TypeFor[*testpb.Tree3]():                     true,
		reflect.TypeFor[*testpb.Empty3]():                    true,
		reflect.TypeFor[*testpb.All2]():                      true,
		reflect.TypeFor[*testpb.Extendable]():                false,
		reflect.TypeFor[*descriptorpb.FileOptions]():         false, // extensions
		reflect.TypeFor[structpb.Struct]():                   false, // not a pointer
		reflect.TypeFor[*int]():                              false,
	} {
		if got := protoMsgFor(typ) != nil; got != want {
			t.Errorf("protoMsgFor(%v) != nil is %v, want %v", typ, got, want)
		}
	}
}

// TestProtoPlansUseTheWalk checks that the plans of a message type, and of
// a struct holding one, copy and compare through the walk.
func TestProtoPlansUseTheWalk(t *testing.T) {
	s, err := structpb.NewStruct(map[string]any{"a": 1.0, "b": []any{"x", true}})
	if err != nil {
		t.Fatal(err)
	}
	type holder struct{ S *structpb.Struct }
	h := DeepCopy(holder{S: s})
	if h.S == s || !DeepEqual(holder{S: s}, h) {
		t.Fatal("a struct holding a message does not copy and compare it")
	}
	// The walk keeps an empty map empty, where proto.Clone makes it nil.
	e := DeepCopy(&structpb.Struct{Fields: map[string]*structpb.Value{}})
	if e.Fields == nil {
		t.Fatal("DeepCopy made an empty map nil: it did not walk the message")
	}
}
