package watchable_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/switchyard-go/switchyard/watchable"
	"github.com/switchyard-go/switchyard/watchable/internal/testpb"
)

// These tests hold DeepCopy and DeepEqual on proto messages to what
// proto.Clone and proto.Equal promise, whichever way watchable implements
// them: DeepEqual(x, y) == proto.Equal(x, y) for any two messages of a type,
// and DeepCopy(x) is proto.Equal to x and shares no memory with it.

var protoSeed = flag.Uint64("protoseed", 1, "seed of the random messages in the proto differential tests")

// pbPairs is how many pairs of random messages each type is tested with.
const pbPairs = 1500

// pbType runs the random tests for one message type M.
type pbType struct {
	name  string
	pairs int
	run   func(t *testing.T, g *pbGen, pairs int)
}

func pbTypeOf[M proto.Message](pairs int) pbType {
	var zero M
	return pbType{
		name:  string(zero.ProtoReflect().Descriptor().FullName()),
		pairs: pairs,
		run:   pbRandomPairs[M],
	}
}

// pbTypes are the message types of the random tests: every test message,
// and standard ones whose shapes a program is likely to store.
var pbTypes = []pbType{
	pbTypeOf[*testpb.Scalars3](pbPairs),
	pbTypeOf[*testpb.Composite3](pbPairs),
	pbTypeOf[*testpb.Leaf3](pbPairs),
	pbTypeOf[*testpb.Tree3](pbPairs),
	pbTypeOf[*testpb.Empty3](pbPairs / 10),
	pbTypeOf[*testpb.All2](pbPairs),
	pbTypeOf[*testpb.Leaf2](pbPairs / 2),
	pbTypeOf[*testpb.All2_Grp](pbPairs / 2),
	pbTypeOf[*testpb.Extendable](pbPairs / 2), // not eligible for a fast path
	pbTypeOf[*structpb.Struct](pbPairs),
	pbTypeOf[*structpb.Value](pbPairs),
	pbTypeOf[*wrapperspb.DoubleValue](pbPairs / 2),
	pbTypeOf[*wrapperspb.BytesValue](pbPairs / 2),
	pbTypeOf[*timestamppb.Timestamp](pbPairs / 2),
	pbTypeOf[*descriptorpb.FileDescriptorProto](pbPairs / 3),
}

func TestProtoDifferential(t *testing.T) {
	for _, pt := range pbTypes {
		t.Run(pt.name, func(t *testing.T) {
			t.Parallel()
			pt.run(t, newPBGen(*protoSeed, pt.name), pt.pairs)
		})
	}
}

// pbHolder puts messages where a DeepCopy or DeepEqual plan meets them
// below the top level.
type pbHolder[M any] struct {
	Msg   M
	List  []M
	ByKey map[string]M
}

// pbRandomPairs checks DeepEqual against proto.Equal on pairs of random
// messages of type M, most of them a message and a slightly changed clone,
// and checks DeepCopy on every message it makes.
func pbRandomPairs[M proto.Message](t *testing.T, g *pbGen, pairs int) {
	var nilM M
	if c := watchable.DeepCopy(nilM); !reflect.ValueOf(c).IsNil() {
		t.Fatalf("DeepCopy of a nil %T is not nil", nilM)
	}
	if !watchable.DeepEqual(nilM, nilM) {
		t.Fatalf("DeepEqual of two nil %T is false", nilM)
	}
	if testing.Short() {
		pairs /= 5
	}
	equal, failures := 0, 0
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("seed %d: "+format, append([]any{*protoSeed}, args...)...)
		if failures++; failures >= 5 {
			t.FailNow()
		}
	}
	for i := range pairs {
		x := pbNew(g, nilM)
		var y M
		var log []string
		switch g.r.IntN(50) {
		case 0, 1, 2, 3, 4:
			y = pbNew(g, nilM)
			log = append(log, "independent")
		case 5:
			y = x
			log = append(log, "the same message")
		default:
			y = proto.Clone(x).(M)
			for range g.r.IntN(4) {
				log = append(log, g.mutate(y.ProtoReflect()))
			}
		}
		if g.r.IntN(20) == 0 {
			if g.r.IntN(2) == 0 {
				x = nilM
			} else {
				y = nilM
			}
			log = append(log, "one side nil")
		}
		want := proto.Equal(x, y)
		if want {
			equal++
		}
		report := func(what string, got bool) {
			t.Helper()
			fail("pair %d (changes: %s): %s = %v, proto.Equal = %v\nx: %s\ny: %s",
				i, strings.Join(log, "; "), what, got, want, pbText(x), pbText(y))
		}
		if got := watchable.DeepEqual(x, y); got != want {
			report("DeepEqual(x, y)", got)
		}
		if got := watchable.DeepEqual(y, x); got != want {
			report("DeepEqual(y, x)", got)
		}
		if got := watchable.DeepEqual[proto.Message](x, y); got != want {
			report("DeepEqual[proto.Message](x, y)", got)
		}
		if got := watchable.DeepEqual(pbHolder[M]{Msg: x}, pbHolder[M]{Msg: y}); got != want {
			report("DeepEqual of structs holding x and y", got)
		}
		if got := watchable.DeepEqual([]M{x}, []M{y}); got != want {
			report("DeepEqual([]M{x}, []M{y})", got)
		}
		if i%2 == 0 {
			for _, m := range []M{x, y} {
				if msg := pbCheckCopy(m); msg != "" {
					fail("pair %d (changes: %s): %s\nmessage: %s", i, strings.Join(log, "; "), msg, pbText(m))
				}
			}
		}
	}
	// The generator is only useful while it makes both kinds of pairs.
	if pairs >= 300 && (equal < pairs/10 || equal > pairs*9/10) {
		t.Errorf("seed %d: %d of %d pairs are equal; the generator needs a better mix", *protoSeed, equal, pairs)
	}
}

// pbCheckCopy copies x and describes what is wrong with the copy, if
// anything.
// The original must marshal (its strings be valid UTF-8) for the check
// that changing the copy leaves it alone.
func pbCheckCopy[M proto.Message](x M) string {
	before, marshalErr := pbMarshal(x)
	c := watchable.DeepCopy(x)
	if !proto.Equal(c, x) {
		return fmt.Sprintf("copy is not proto.Equal to the original\ncopy: %s", pbText(c))
	}
	if reflect.ValueOf(x).IsNil() {
		return ""
	}
	if reflect.ValueOf(c).Pointer() == reflect.ValueOf(x).Pointer() {
		return "copy is the original"
	}
	if d := pbSameShape("", reflect.ValueOf(x), reflect.ValueOf(c)); d != "" {
		return "copy differs in shape from the original: " + d
	}
	hc := watchable.DeepCopy(pbHolder[M]{Msg: x, List: []M{x}, ByKey: map[string]M{"k": x}})
	for _, m := range []M{hc.Msg, hc.List[0], hc.ByKey["k"]} {
		if !proto.Equal(m, x) {
			return fmt.Sprintf("copy held in a struct is not proto.Equal to the original\ncopy: %s", pbText(m))
		}
		pbMutateAll(reflect.ValueOf(m))
	}
	pbMutateAll(reflect.ValueOf(c))
	if marshalErr != nil {
		return ""
	}
	after, err := pbMarshal(x)
	if err != nil {
		return fmt.Sprintf("marshal after changing the copy: %v", err)
	}
	if !bytes.Equal(before, after) {
		return fmt.Sprintf("changing the copy changed the original; it is now %s", pbText(x))
	}
	return ""
}

func pbMarshal(m proto.Message) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true, AllowPartial: true}.Marshal(m)
}

func pbText(m proto.Message) string {
	if reflect.ValueOf(m).IsNil() {
		return fmt.Sprintf("(%T)(nil)", m)
	}
	return fmt.Sprintf("%T{%s}", m, prototext.MarshalOptions{EmitUnknown: true}.Format(m))
}

// pbEligible reports whether the generated struct t is one the fast path
// is for: its only fields are the runtime's state, sizeCache and
// unknownFields, and exported fields tagged protobuf or protobuf_oneof.
func pbEligible(t reflect.Type) bool {
	for i := range t.NumField() {
		f := t.Field(i)
		switch {
		case f.Name == "state" || f.Name == "sizeCache" || f.Name == "unknownFields":
		case f.IsExported() && (f.Tag.Get("protobuf") != "" || f.Tag.Get("protobuf_oneof") != ""):
		default:
			return false
		}
	}
	return true
}

func pbIsMessage(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer && t.Implements(reflect.TypeFor[proto.Message]())
}

// pbSameShape compares the Go values of a message and its copy where
// proto.Equal does not look: the copy shares no pointer, backing array, map
// or oneof wrapper with the original, and nil slices, maps
// and bytes stay nil and empty ones stay empty. Below a type that is not
// eligible for the fast path it checks nothing more: proto.Clone copies
// those. A nil message in a list, a map or a oneof stays nil too.
func pbSameShape(path string, a, b reflect.Value) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v, copy nil %v", path, a.IsNil(), b.IsNil())
		}
		if a.IsNil() {
			return ""
		}
		if !pbIsMessage(a.Type()) {
			if a.Pointer() == b.Pointer() {
				return path + ": copy shares the pointer"
			}
			return ""
		}
		if !pbEligible(a.Type().Elem()) {
			return ""
		}
		ua := a.Interface().(proto.Message).ProtoReflect().GetUnknown()
		ub := b.Interface().(proto.Message).ProtoReflect().GetUnknown()
		if !bytes.Equal(ua, ub) {
			return fmt.Sprintf("%s: unknown fields %x, copy %x", path, ua, ub)
		}
		return pbSameFields(path, a.Elem(), b.Elem())
	case reflect.Interface: // a oneof
		an := a.IsNil() || a.Elem().IsNil()
		bn := b.IsNil() || b.Elem().IsNil()
		if an || bn {
			if an != bn {
				return fmt.Sprintf("%s: oneof unset %v, copy unset %v", path, an, bn)
			}
			return ""
		}
		if a.Elem().Type() != b.Elem().Type() {
			return fmt.Sprintf("%s: oneof holds %v, copy %v", path, a.Elem().Type(), b.Elem().Type())
		}
		if a.Elem().Pointer() == b.Elem().Pointer() {
			return path + ": copy shares the oneof wrapper"
		}
		f := a.Elem().Elem().Type().Field(0).Name
		return pbSameShape(path+"."+f, a.Elem().Elem().Field(0), b.Elem().Elem().Field(0))
	case reflect.Slice:
		if d := pbSameContainer(path, a, b, "backing array"); d != "" {
			return d
		}
		for i := range a.Len() {
			if d := pbSameShape(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
	case reflect.Map:
		if d := pbSameContainer(path, a, b, "map"); d != "" {
			return d
		}
		for _, k := range a.MapKeys() {
			if d := pbSameShape(fmt.Sprintf("%s[%v]", path, k), a.MapIndex(k), b.MapIndex(k)); d != "" {
				return d
			}
		}
	}
	return ""
}

// pbSameContainer compares a slice or map a with its copy b: nil stays
// nil, the length stays, and a non-empty copy has memory of its own (what,
// named in the message).
func pbSameContainer(path string, a, b reflect.Value, what string) string {
	switch {
	case a.IsNil() != b.IsNil():
		return fmt.Sprintf("%s: nil %v, copy nil %v", path, a.IsNil(), b.IsNil())
	case a.Len() != b.Len():
		return fmt.Sprintf("%s: length %d, copy %d", path, a.Len(), b.Len())
	case a.Len() > 0 && a.Pointer() == b.Pointer():
		return path + ": copy shares the " + what
	}
	return ""
}

// pbSameFields compares the exported fields of two generated structs.
func pbSameFields(path string, a, b reflect.Value) string {
	for i := range a.NumField() {
		if !a.Type().Field(i).IsExported() {
			continue
		}
		if d := pbSameShape(path+"."+a.Type().Field(i).Name, a.Field(i), b.Field(i)); d != "" {
			return d
		}
	}
	return ""
}

// pbMutateAll changes, in place, every part of a message it can reach:
// each scalar, each byte, each element and map value, nested messages,
// oneof contents and unknown fields. Whatever a copy shares with its
// original shows in the original afterwards.
func pbMutateAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if pbIsMessage(v.Type()) {
			m := v.Interface().(proto.Message).ProtoReflect()
			u := m.GetUnknown()
			for i := range u {
				u[i] ^= 0xff
			}
			m.SetUnknown(protowire.AppendVarint(protowire.AppendTag(u, 9999, protowire.VarintType), 1))
		}
		pbMutateAll(v.Elem())
	case reflect.Interface:
		if !v.IsNil() {
			pbMutateAll(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				pbMutateAll(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			pbMutateAll(v.Index(i))
		}
	case reflect.Map:
		keys := v.MapKeys()
		for _, k := range keys {
			e := v.MapIndex(k)
			if e.Kind() == reflect.Pointer || e.Kind() == reflect.Slice {
				pbMutateAll(e) // in place, through the pointer or backing array
				continue
			}
			n := reflect.New(e.Type()).Elem()
			n.Set(e)
			pbMutateAll(n)
			v.SetMapIndex(k, n)
		}
		if len(keys) > 0 {
			k := reflect.New(keys[0].Type()).Elem()
			k.Set(keys[0])
			pbMutateAll(k)
			v.SetMapIndex(k, reflect.Zero(v.Type().Elem()))
		}
	case reflect.Bool:
		if v.CanSet() {
			v.SetBool(!v.Bool())
		}
	case reflect.Int32, reflect.Int64:
		if v.CanSet() {
			v.SetInt(v.Int() + 1)
		}
	case reflect.Uint8, reflect.Uint32, reflect.Uint64:
		if v.CanSet() {
			v.SetUint(v.Uint() ^ 0xff)
		}
	case reflect.Float32, reflect.Float64:
		if v.CanSet() {
			if v.Float() == 7.5 {
				v.SetFloat(8.5)
			} else {
				v.SetFloat(7.5)
			}
		}
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + "~")
		}
	}
}

// pbEqCase is a pair of messages of one type whose equality is known.
type pbEqCase struct {
	name  string
	want  bool // what proto.Equal says
	x, y  proto.Message
	check func(t *testing.T, want bool) // checks DeepEqual and DeepCopy with the messages' own type
}

func pbEq[M proto.Message](name string, want bool, x, y M) pbEqCase {
	return pbEqCase{name: name, want: want, x: x, y: y, check: func(t *testing.T, want bool) {
		got := [3]bool{
			watchable.DeepEqual(x, y),
			watchable.DeepEqual(y, x),
			watchable.DeepEqual(pbHolder[M]{Msg: x, List: []M{x}}, pbHolder[M]{Msg: y, List: []M{y}}),
		}
		if got != [3]bool{want, want, want} {
			t.Errorf("DeepEqual(x, y), DeepEqual(y, x), DeepEqual of structs holding them = %v, proto.Equal = %v\nx: %s\ny: %s",
				got, want, pbText(x), pbText(y))
		}
		for _, m := range []M{x, y} {
			if msg := pbCheckCopy(m); msg != "" {
				t.Errorf("DeepCopy: %s\noriginal: %s", msg, pbText(m))
			}
		}
	}}
}

// pbUnknown encodes varint unknown fields, alternating numbers and
// values.
func pbUnknown(kv ...uint64) []byte {
	var b []byte
	for i := 0; i < len(kv); i += 2 {
		b = protowire.AppendVarint(protowire.AppendTag(b, protowire.Number(kv[i]), protowire.VarintType), kv[i+1])
	}
	return b
}

// pbWithUnknown sets m's unknown fields and returns m.
func pbWithUnknown[M proto.Message](m M, u []byte) M {
	m.ProtoReflect().SetUnknown(u)
	return m
}

func pbTree(depth int, label string) *testpb.Tree3 {
	t := &testpb.Tree3{Label: fmt.Sprint("d", depth)}
	if depth > 0 {
		t.Left = pbTree(depth-1, label)
		t.Children = []*testpb.Tree3{pbTree(depth-1, label), {Label: "leaf"}}
		t.Named = map[string]*testpb.Tree3{"n": {Kind: &testpb.Tree3_Weight{Weight: 1}}}
		t.Kind = &testpb.Tree3_Sub{Sub: &testpb.Tree3{Other: &testpb.Tree3_Blob{Blob: []byte(label)}}}
	} else {
		t.Label = label
	}
	return t
}

// TestProtoEqualEdgeCases pins the pairs on which a fast path is most
// likely to part from proto.Equal. The wants are proto.Equal's, checked
// too, so that a change of its rules shows here first.
func TestProtoEqualEdgeCases(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	f32 := func(v float32) *float32 { return &v }
	negZero32 := float32(pbNegZero)
	nan32 := float32(math.NaN())
	i32 := func(v int32) *int32 { return &v }
	deep := pbTree(4, "x")
	deepChanged := proto.Clone(deep).(*testpb.Tree3)
	deepChanged.Left.Left.Children[0].Left.Label = "changed"
	deepBlob := proto.Clone(deep).(*testpb.Tree3)
	deepBlob.Left.Left.Kind.(*testpb.Tree3_Sub).Sub.Other.(*testpb.Tree3_Blob).Blob[0] ^= 1
	list := func(v ...*testpb.Leaf3) *testpb.Composite3 { return &testpb.Composite3{RMsg: v} }
	mapped := func(v *testpb.Leaf3) *testpb.Composite3 {
		return &testpb.Composite3{MStrMsg: map[string]*testpb.Leaf3{"a": v}}
	}
	choice := func(c any) *testpb.Composite3 { // c is one of the oneof's unexported wrapper types
		m := &testpb.Composite3{}
		if c != nil {
			reflect.ValueOf(m).Elem().FieldByName("Choice").Set(reflect.ValueOf(c))
		}
		return m
	}
	nullValue := structpb.NewNullValue()
	for _, tc := range []pbEqCase{
		pbEq("both nil", true, (*testpb.Scalars3)(nil), nil),
		pbEq("nil and empty", false, nil, &testpb.Scalars3{}),
		pbEq("empty and empty", true, &testpb.Scalars3{}, &testpb.Scalars3{}),

		// Bytes and lists: nil and empty differ only with explicit presence.
		pbEq("implicit bytes nil and empty", true, &testpb.Scalars3{}, &testpb.Scalars3{FBytes: []byte{}}),
		pbEq("implicit bytes empty and set", false, &testpb.Scalars3{FBytes: []byte{}}, &testpb.Scalars3{FBytes: []byte{0}}),
		pbEq("optional bytes nil and empty", false, &testpb.Scalars3{}, &testpb.Scalars3{OBytes: []byte{}}),
		pbEq("proto2 bytes nil and empty", false, &testpb.All2{}, &testpb.All2{OBytes: []byte{}}),
		pbEq("proto2 bytes unset and its default", false, &testpb.All2{}, &testpb.All2{DBytes: []byte("hi")}),
		pbEq("oneof bytes nil and empty", true, choice(&testpb.Composite3_CBytes{}), choice(&testpb.Composite3_CBytes{CBytes: []byte{}})),
		pbEq("repeated bytes element nil and empty", true, &testpb.Scalars3{RBytes: [][]byte{nil}}, &testpb.Scalars3{RBytes: [][]byte{{}}}),
		pbEq("map bytes value nil and empty", true,
			&testpb.Composite3{MInt64Bytes: map[int64][]byte{1: nil}}, &testpb.Composite3{MInt64Bytes: map[int64][]byte{1: {}}}),
		pbEq("repeated nil and empty", true, &testpb.Scalars3{}, &testpb.Scalars3{RDouble: []float64{}, RBytes: [][]byte{}, REnum: []testpb.Color{}}),
		pbEq("proto2 repeated nil and empty", true, &testpb.All2{}, &testpb.All2{RInt32: []int32{}, RMsg: []*testpb.Leaf2{}, Rgrp: []*testpb.All2_RGrp{}}),
		pbEq("map nil and empty", true, &testpb.Composite3{}, &testpb.Composite3{MStrStr: map[string]string{}, MStrMsg: map[string]*testpb.Leaf3{}}),
		pbEq("struct fields nil and empty", true, &structpb.Struct{}, &structpb.Struct{Fields: map[string]*structpb.Value{}}),
		pbEq("wrapped bytes nil and empty", true, &wrapperspb.BytesValue{}, &wrapperspb.BytesValue{Value: []byte{}}),
		pbEq("message unset and empty", false, &testpb.Tree3{}, &testpb.Tree3{Empty: &testpb.Empty3{}}),
		pbEq("group unset and empty", false, &testpb.All2{}, &testpb.All2{Grp: &testpb.All2_Grp{}}),

		// Zeros of both signs: an implicit -0 is set, +0 is not.
		pbEq("implicit double +0 and -0", false, &testpb.Scalars3{}, &testpb.Scalars3{FDouble: pbNegZero}),
		pbEq("implicit float +0 and -0", false, &testpb.Scalars3{}, &testpb.Scalars3{FFloat: negZero32}),
		pbEq("wrapped double +0 and -0", false, &wrapperspb.DoubleValue{}, &wrapperspb.DoubleValue{Value: pbNegZero}),
		pbEq("optional double +0 and -0", true, &testpb.Scalars3{ODouble: f(0)}, &testpb.Scalars3{ODouble: f(pbNegZero)}),
		pbEq("optional float +0 and -0", true, &testpb.Scalars3{OFloat: f32(0)}, &testpb.Scalars3{OFloat: f32(negZero32)}),
		pbEq("proto2 double +0 and -0", true, &testpb.All2{ODouble: f(0)}, &testpb.All2{ODouble: f(pbNegZero)}),
		pbEq("repeated +0 and -0", true, &testpb.Scalars3{RDouble: []float64{0}, RFloat: []float32{0}},
			&testpb.Scalars3{RDouble: []float64{pbNegZero}, RFloat: []float32{negZero32}}),
		pbEq("map value +0 and -0", true,
			&testpb.Composite3{MInt32Double: map[int32]float64{1: 0}, MUint64Float: map[uint64]float32{1: 0}},
			&testpb.Composite3{MInt32Double: map[int32]float64{1: pbNegZero}, MUint64Float: map[uint64]float32{1: negZero32}}),
		pbEq("oneof double +0 and -0", true, choice(&testpb.Composite3_CDouble{}), choice(&testpb.Composite3_CDouble{CDouble: pbNegZero})),
		pbEq("oneof float +0 and -0", true, choice(&testpb.Composite3_CFloat{}), choice(&testpb.Composite3_CFloat{CFloat: negZero32})),
		pbEq("struct number +0 and -0", true, structpb.NewNumberValue(0), structpb.NewNumberValue(pbNegZero)),

		// NaN equals NaN, whatever its payload.
		pbEq("implicit NaN and NaN", true, &testpb.Scalars3{FDouble: math.NaN()}, &testpb.Scalars3{FDouble: pbNaN2}),
		pbEq("implicit float NaN and NaN", true, &testpb.Scalars3{FFloat: nan32}, &testpb.Scalars3{FFloat: nan32}),
		pbEq("implicit NaN and unset", false, &testpb.Scalars3{FDouble: math.NaN()}, &testpb.Scalars3{}),
		pbEq("implicit NaN and a number", false, &testpb.Scalars3{FDouble: math.NaN()}, &testpb.Scalars3{FDouble: 1}),
		pbEq("optional NaN and NaN", true, &testpb.Scalars3{ODouble: f(math.NaN())}, &testpb.Scalars3{ODouble: f(pbNaN2)}),
		pbEq("proto2 NaN default unset and set", false, &testpb.All2{}, &testpb.All2{DNan: f(math.NaN())}),
		pbEq("repeated NaN and NaN", true, &testpb.Scalars3{RDouble: []float64{math.NaN()}}, &testpb.Scalars3{RDouble: []float64{pbNaN2}}),
		pbEq("repeated NaN and a number", false, &testpb.Scalars3{RDouble: []float64{math.NaN()}}, &testpb.Scalars3{RDouble: []float64{0}}),
		pbEq("map value NaN and NaN", true,
			&testpb.Composite3{MInt32Double: map[int32]float64{1: math.NaN()}}, &testpb.Composite3{MInt32Double: map[int32]float64{1: math.NaN()}}),
		pbEq("oneof NaN and NaN", true, choice(&testpb.Composite3_CDouble{CDouble: math.NaN()}), choice(&testpb.Composite3_CDouble{CDouble: pbNaN2})),
		pbEq("struct number NaN and NaN", true, structpb.NewNumberValue(math.NaN()), structpb.NewNumberValue(math.NaN())),
		pbEq("wrapped NaN and NaN", true, wrapperspb.Double(math.NaN()), wrapperspb.Double(pbNaN2)),

		// Oneofs.
		pbEq("oneof typed nil and unset", true, choice((*testpb.Composite3_CMsg)(nil)), choice(nil)),
		pbEq("oneof typed nils of two members", true, choice((*testpb.Composite3_CMsg)(nil)), choice((*testpb.Composite3_CInt64)(nil))),
		pbEq("oneof typed nil and a zero member", false, choice((*testpb.Composite3_CInt64)(nil)), choice(&testpb.Composite3_CInt64{})),
		pbEq("oneof zero member and unset", false, choice(&testpb.Composite3_CInt64{}), choice(nil)),
		pbEq("oneof zero members of two kinds", false, choice(&testpb.Composite3_CDouble{}), choice(&testpb.Composite3_CFloat{})),
		pbEq("oneof nil message and empty", true, choice(&testpb.Composite3_CMsg{}), choice(&testpb.Composite3_CMsg{CMsg: &testpb.Leaf3{}})),
		pbEq("oneof nil message and unset", false, choice(&testpb.Composite3_CMsg{}), choice(nil)),
		pbEq("oneof nil message and set", false, choice(&testpb.Composite3_CMsg{}), choice(&testpb.Composite3_CMsg{CMsg: &testpb.Leaf3{N: 1}})),
		pbEq("proto2 oneof bytes nil and empty", true, &testpb.All2{Choice: &testpb.All2_CBytes{}}, &testpb.All2{Choice: &testpb.All2_CBytes{CBytes: []byte{}}}),
		pbEq("struct null and unset kind", false, nullValue, &structpb.Value{}),

		// Nil messages in lists and maps equal empty ones.
		pbEq("nil and empty element", true, list(nil), list(&testpb.Leaf3{})),
		pbEq("nil and set element", false, list(nil), list(&testpb.Leaf3{N: 1})),
		pbEq("nil element and none", false, list(nil), list()),
		pbEq("nil and empty map value", true, mapped(nil), mapped(&testpb.Leaf3{})),
		pbEq("nil and set map value", false, mapped(nil), mapped(&testpb.Leaf3{Reset_: "r"})),
		pbEq("nil struct field value and empty", true,
			&structpb.Struct{Fields: map[string]*structpb.Value{"a": nil}}, &structpb.Struct{Fields: map[string]*structpb.Value{"a": {}}}),

		// Unknown fields compare per field number, in order within one.
		pbEq("unknown identical", true, pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1, 5001, 2)), pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1, 5001, 2))),
		pbEq("unknown reordered across numbers", true, pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1, 5001, 2)), pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5001, 2, 5000, 1))),
		pbEq("unknown reordered within a number", false, pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1, 5000, 2)), pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 2, 5000, 1))),
		pbEq("unknown different", false, pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1)), pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 2))),
		pbEq("unknown and none", false, pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1)), &testpb.Leaf3{}),
		pbEq("unknown empty and none", true, pbWithUnknown(&testpb.Leaf3{}, []byte{}), &testpb.Leaf3{}),
		pbEq("unknown in a nested message", false,
			&testpb.Composite3{Msg: pbWithUnknown(&testpb.Leaf3{}, pbUnknown(5000, 1))}, &testpb.Composite3{Msg: &testpb.Leaf3{}}),
		pbEq("unknown in a proto2 group", false,
			&testpb.All2{Grp: pbWithUnknown(&testpb.All2_Grp{}, pbUnknown(5000, 1))}, &testpb.All2{Grp: &testpb.All2_Grp{}}),
		pbEq("unknown where a known field would be", false, pbWithUnknown(&testpb.Leaf3{}, pbUnknown(1, 7)), &testpb.Leaf3{N: 7}),

		// Deep and wide changes.
		pbEq("deep trees equal", true, deep, pbTree(4, "x")),
		pbEq("deep trees differ deep down", false, deep, deepChanged),
		pbEq("deep trees differ in a oneof's bytes", false, deep, deepBlob),
		pbEq("map key added", false,
			&testpb.Composite3{MSint32Str: map[int32]string{-1: "a"}}, &testpb.Composite3{MSint32Str: map[int32]string{-1: "a", 2: ""}}),
		pbEq("map keys differ", false,
			&testpb.Composite3{MBoolInt32: map[bool]int32{true: 0}}, &testpb.Composite3{MBoolInt32: map[bool]int32{false: 0}}),
		pbEq("map enum values", false,
			&testpb.Composite3{MUint32Enum: map[uint32]testpb.Color{1: testpb.Color_COLOR_RED}}, &testpb.Composite3{MUint32Enum: map[uint32]testpb.Color{1: 99}}),
		pbEq("list order", false, &testpb.Leaf3{Tags: []string{"a", "b"}}, &testpb.Leaf3{Tags: []string{"b", "a"}}),
		pbEq("list length", false, &testpb.Leaf3{Tags: []string{"a"}}, &testpb.Leaf3{Tags: []string{"a", ""}}),
		pbEq("unknown enum values", true, &testpb.Scalars3{FEnum: 99}, &testpb.Scalars3{FEnum: 99}),
		pbEq("invalid UTF-8 strings", true, &testpb.Leaf3{Reset_: "\xff"}, &testpb.Leaf3{Reset_: "\xff"}),
		pbEq("required unset and zero", false, &testpb.All2{}, &testpb.All2{Req: i32(0)}),
		pbEq("proto2 set to its default and unset", false, &testpb.Leaf2{}, &testpb.Leaf2{N: i32(7)}),
		pbEq("timestamps", false, timestamppb.New(time.Unix(1, 0)), timestamppb.New(time.Unix(1, 1))),
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := proto.Equal(tc.x, tc.y); got != tc.want {
				t.Fatalf("proto.Equal = %v, want %v: the test's expectation is out of date", got, tc.want)
			}
			tc.check(t, tc.want)
		})
	}
}

// TestProtoExtensions checks a message with extensions, which a fast path
// for generated structs must leave to proto.Clone and proto.Equal.
func TestProtoExtensions(t *testing.T) {
	x := &testpb.Extendable{Name: proto.String("e")}
	proto.SetExtension(x, testpb.E_ExtCount, int32(3))
	proto.SetExtension(x, testpb.E_ExtLeaf, &testpb.Leaf2{Name: proto.String("leaf")})

	c := watchable.DeepCopy(x)
	if !proto.Equal(c, x) {
		t.Fatalf("copy %s is not proto.Equal to %s", pbText(c), pbText(x))
	}
	if got := proto.GetExtension(c, testpb.E_ExtCount).(int32); got != 3 {
		t.Fatalf("copy's ext_count = %d, want 3", got)
	}
	leaf := proto.GetExtension(c, testpb.E_ExtLeaf).(*testpb.Leaf2)
	leaf.Name = proto.String("changed")
	if got := proto.GetExtension(x, testpb.E_ExtLeaf).(*testpb.Leaf2).GetName(); got != "leaf" {
		t.Fatalf("changing the copy's extension changed the original's to %q", got)
	}

	noLeaf := proto.Clone(x).(*testpb.Extendable)
	proto.ClearExtension(noLeaf, testpb.E_ExtLeaf)
	otherCount := proto.Clone(x).(*testpb.Extendable)
	proto.SetExtension(otherCount, testpb.E_ExtCount, int32(4))
	for _, tc := range []pbEqCase{
		pbEq("clone", true, x, proto.Clone(x).(*testpb.Extendable)),
		pbEq("extension cleared", false, x, noLeaf),
		pbEq("extension changed", false, x, otherCount),
		pbEq("extension and unknown field", false, x, pbWithUnknown(proto.Clone(x).(*testpb.Extendable), pbUnknown(5000, 1))),
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := proto.Equal(tc.x, tc.y); got != tc.want {
				t.Fatalf("proto.Equal = %v, want %v: the test's expectation is out of date", got, tc.want)
			}
			tc.check(t, tc.want)
		})
	}
}

// pbEmbedder is a Go struct that embeds a message: *pbEmbedder has the
// message's ProtoReflect method, promoted, and so is a proto.Message, but
// proto.Clone of it makes a *testpb.Leaf3 and proto.Equal sees only the
// embedded message.
type pbEmbedder struct {
	*testpb.Leaf3
	Note string
}

// pbValueEmbedder embeds a message by value.
type pbValueEmbedder struct {
	testpb.Leaf3
	Note string
}

// TestProtoEmbeddingStructs checks that a struct embedding a message is
// copied and compared as the Go struct it is, all of its fields, and not
// as the message its promoted ProtoReflect speaks for.
func TestProtoEmbeddingStructs(t *testing.T) {
	x := &pbEmbedder{Leaf3: &testpb.Leaf3{N: 1, Tags: []string{"a"}}, Note: "x"}
	for name, c := range map[string]*pbEmbedder{
		"DeepCopy(x)":                watchable.DeepCopy(x),
		"DeepCopy of a struct":       watchable.DeepCopy(pbHolder[*pbEmbedder]{Msg: x}).Msg,
		"DeepCopy[proto.Message](x)": watchable.DeepCopy[proto.Message](x).(*pbEmbedder),
	} {
		if c.Note != "x" {
			t.Fatalf("%s: Note = %q, want %q", name, c.Note, "x")
		}
		if c.Leaf3 == x.Leaf3 || !proto.Equal(c.Leaf3, x.Leaf3) {
			t.Fatalf("%s: the embedded message is shared or differs: %s", name, pbText(c.Leaf3))
		}
	}
	y := &pbEmbedder{Leaf3: proto.Clone(x.Leaf3).(*testpb.Leaf3), Note: "y"}
	if watchable.DeepEqual(x, y) || watchable.DeepEqual(pbHolder[*pbEmbedder]{Msg: x}, pbHolder[*pbEmbedder]{Msg: y}) {
		t.Error("DeepEqual is true for structs whose own fields differ")
	}
	y.Note = "x"
	if !watchable.DeepEqual(x, y) {
		t.Error("DeepEqual is false for equal structs")
	}
	y.N = 2
	if watchable.DeepEqual(x, y) {
		t.Error("DeepEqual is true for structs whose embedded messages differ")
	}
	if watchable.DeepEqual[proto.Message](x, x.Leaf3) {
		t.Error("DeepEqual[proto.Message] is true for a struct and the message it embeds")
	}

	// A message held by value cannot be copied: it is refused, as a field
	// of that type is.
	want := "watchable: cannot deep-copy *watchable_test.pbValueEmbedder: field .Leaf3 is a proto message held by value: hold it by pointer, as *testpb.Leaf3"
	if got := panicOf(func() { watchable.DeepCopy(&pbValueEmbedder{Note: "x"}) }); got != want {
		t.Errorf("DeepCopy of a struct embedding a message by value: panic\n%v\nwant\n%s", got, want)
	}
}

// TestProtoMapStoresEqualMessagesSilently checks that a Map decides
// changes as proto.Equal does: a message it deems equal makes no revision
// and no snapshot, a -0 where +0 was does.
func TestProtoMapStoresEqualMessagesSilently(t *testing.T) {
	var m watchable.Map[string, *testpb.Scalars3]
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := m.Subscribe(ctx)
	next(t, sub)

	v := &testpb.Scalars3{FString: "a", RDouble: []float64{1, math.NaN()}, ODouble: proto.Float64(0)}
	m.Store("k", v)
	next(t, sub)
	rev := m.Revision()

	emptyList := proto.Clone(v).(*testpb.Scalars3)
	emptyList.RInt32 = []int32{}
	emptyList.FBytes = []byte{}
	negZero := proto.Clone(v).(*testpb.Scalars3)
	*negZero.ODouble = pbNegZero
	for name, same := range map[string]*testpb.Scalars3{
		"a clone":                              proto.Clone(v).(*testpb.Scalars3),
		"empty lists and bytes instead of nil": emptyList,
		"optional -0 instead of +0":            negZero,
	} {
		m.Store("k", same)
		nothingPending(t, sub)
		if m.Revision() != rev {
			t.Fatalf("storing %s made revision %d, want %d", name, m.Revision(), rev)
		}
	}

	changed := proto.Clone(v).(*testpb.Scalars3)
	changed.FDouble = pbNegZero
	m.Store("k", changed)
	s := next(t, sub)
	if m.Revision() != rev+1 || len(s.Updates) != 1 {
		t.Fatalf("storing an implicit -0 instead of +0: revision %d, updates %+v; want revision %d and one update", m.Revision(), s.Updates, rev+1)
	}
	if got, _ := m.Load("k"); !math.Signbit(got.GetFDouble()) {
		t.Fatal("the map does not hold -0")
	}
}

// pbFresh returns a message no one has called ProtoReflect on, whose
// runtime state is set by the first caller.
func pbFresh(i int) *testpb.Composite3 {
	s, err := structpb.NewStruct(map[string]any{"name": fmt.Sprint("route-", i), "hosts": []any{"a", "b"}, "n": 1.5})
	if err != nil {
		panic(err)
	}
	return &testpb.Composite3{
		Msg:     &testpb.Leaf3{Reset_: "r", N: int64(i), Data: []byte{1, 2}},
		RMsg:    []*testpb.Leaf3{{Tags: []string{"t"}}, {N: 2}},
		MStrMsg: map[string]*testpb.Leaf3{"a": {N: 3}},
		Choice:  &testpb.Composite3_CMsg{CMsg: &testpb.Leaf3{Data: []byte{3}}},
		Scalars: &testpb.Scalars3{FDouble: float64(i), RBytes: [][]byte{{4}}},
		Struct:  s,
		Ts:      &timestamppb.Timestamp{Seconds: int64(i)},
		Tree:    &testpb.Tree3{Left: &testpb.Tree3{Label: "l"}, Named: map[string]*testpb.Tree3{"n": {}}},
	}
}

// TestProtoConcurrentReads runs DeepCopy and DeepEqual on messages that
// another goroutine marshals at the same time. Marshaling writes the
// messages' size caches and the first ProtoReflect their runtime state,
// both atomically: under -race, a copy or comparison that reads either
// plainly is reported.
func TestProtoConcurrentReads(t *testing.T) {
	const n = 2000
	msgs := make([]*testpb.Composite3, n)
	same := make([]*testpb.Composite3, n)
	for i := range msgs {
		msgs[i], same[i] = pbFresh(i), pbFresh(i)
	}
	var wg sync.WaitGroup
	wg.Add(2)
	errs := make(chan string, 2)
	go func() {
		defer wg.Done()
		for _, m := range msgs {
			if _, err := proto.Marshal(m); err != nil {
				errs <- err.Error()
				return
			}
			_ = proto.Size(m.GetTree())
			_ = m.ProtoReflect().Has(m.ProtoReflect().Descriptor().Fields().ByName("msg"))
		}
	}()
	go func() {
		defer wg.Done()
		for i, m := range msgs {
			c := watchable.DeepCopy(m)
			if !watchable.DeepEqual(m, same[i]) || !watchable.DeepEqual(c, m) {
				errs <- fmt.Sprintf("message %d: DeepEqual false on equal messages", i)
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// pbBenchStruct is the shape of the bench's routes as a structpb.Struct.
func pbBenchStruct(rev int) *structpb.Struct {
	s, err := structpb.NewStruct(map[string]any{
		"name":      "route-000042",
		"namespace": "ns-2",
		"rev":       rev,
		"weight":    100,
		"hosts":     []any{"example.com", "www.example.com"},
		"labels":    map[string]any{"app": "app-42", "tier": "edge"},
	})
	if err != nil {
		panic(err)
	}
	return s
}

func BenchmarkProtoDeepCopy(b *testing.B) {
	v := pbBenchStruct(7)
	b.Run("proto.Clone", func(b *testing.B) {
		for b.Loop() {
			_ = proto.Clone(v).(*structpb.Struct)
		}
	})
	b.Run("DeepCopy", func(b *testing.B) {
		for b.Loop() {
			_ = watchable.DeepCopy(v)
		}
	})
}

func BenchmarkProtoDeepEqual(b *testing.B) {
	x, y := pbBenchStruct(7), pbBenchStruct(8)
	b.Run("proto.Equal", func(b *testing.B) {
		for b.Loop() {
			_ = proto.Equal(x, y)
		}
	})
	b.Run("DeepEqual", func(b *testing.B) {
		for b.Loop() {
			_ = watchable.DeepEqual(x, y)
		}
	})
}
