package watchable

import (
	"bytes"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A protoMsg copies and compares the messages of one type that
// protoc-gen-go generated as an open struct: an exported Go field per
// proto field or oneof, and the unexported state, sizeCache and
// unknownFields. It walks the struct directly, knowing from the message's
// descriptor what each field means, where proto.Clone and proto.Equal go
// through protoreflect, several times slower. Types with extensions, weak
// fields, the opaque API's hidden fields or anything else it does not know
// have no protoMsg, and keep proto.Clone and proto.Equal.
//
// Its answers are proto's: a copy is a message proto.Equal to the original
// that shares no memory with it (a nil list, map or bytes stays nil, an
// empty one empty), and equal answers what proto.Equal answers. Where
// proto's rule is costly to follow and the case rare (unknown fields in a
// different order, a nil message in a list, map or oneof), equal says
// unsure and the caller asks proto.Equal. The internal state and size
// cache are neither copied nor read, so a copy may run while another
// goroutine marshals the original.
type protoMsg struct {
	typ     reflect.Type // the struct; messages are pointers to it
	unknown uintptr      // offset of unknownFields
	fields  []protoField
}

// A protoField is how one Go field of a message is copied and compared.
// Both functions take the field's address in each message; copy writes
// into a new, zeroed message.
type protoField struct {
	off  uintptr
	copy func(dst, src unsafe.Pointer)
	eq   func(x, y unsafe.Pointer) verdict
}

// A verdict is what a fast comparison found.
type verdict uint8

const (
	same   verdict = iota // proto.Equal would say true
	differ                // proto.Equal would say false
	unsure                // ask proto.Equal
)

// protoMsgs caches a *protoMsg, nil for none, per message pointer type.
var protoMsgs sync.Map

// protoMsgFor returns how to copy and compare messages of the pointer type
// t, or nil if t is not a generated open-struct message.
func protoMsgFor(t reflect.Type) *protoMsg {
	if pm, ok := protoMsgs.Load(t); ok {
		return pm.(*protoMsg)
	}
	b := protoBuilder{pending: map[reflect.Type]*protoMsg{}}
	b.msg(t)
	b.finish()
	pm, _ := protoMsgs.Load(t)
	return pm.(*protoMsg)
}

// A protoBuilder builds the protoMsgs of one type and of the message types
// it holds, which may hold it in turn.
type protoBuilder struct {
	pending map[reflect.Type]*protoMsg // nil for types without one
	order   []reflect.Type
	refs    []*msgRef // to point at their protoMsgs once the build is over
}

// finish points every msgRef at its protoMsg and publishes them all. Only
// now are they known: a type may lead back to one being built, which may
// turn out to have no protoMsg after all.
func (b *protoBuilder) finish() {
	for _, r := range b.refs {
		if pm, ok := b.pending[r.t]; ok {
			r.pm = pm
		} else {
			pm, _ := protoMsgs.Load(r.t)
			r.pm = pm.(*protoMsg)
		}
	}
	for _, t := range b.order {
		protoMsgs.LoadOrStore(t, b.pending[t])
	}
}

func (b *protoBuilder) msg(t reflect.Type) *protoMsg {
	if pm, ok := protoMsgs.Load(t); ok {
		return pm.(*protoMsg)
	}
	if pm, ok := b.pending[t]; ok {
		return pm
	}
	b.order = append(b.order, t)
	b.pending[t] = nil
	md, ok := openStruct(t)
	if !ok {
		return nil
	}
	s := t.Elem()
	pm := &protoMsg{typ: s}
	b.pending[t] = pm // before the fields, which may lead back to t
	regular, members := 0, 0
	for i := range s.NumField() {
		f := s.Field(i)
		switch f.Name {
		case "state", "sizeCache":
			continue
		case "unknownFields":
			pm.unknown = f.Offset
			continue
		}
		if _, ok := f.Tag.Lookup("protobuf_oneof"); ok {
			pf, ok := b.oneof(t, f, md)
			if !ok {
				return b.fail(t)
			}
			members += md.Oneofs().ByName(protoreflect.Name(f.Tag.Get("protobuf_oneof"))).Fields().Len()
			pm.fields = append(pm.fields, pf)
			continue
		}
		fd := fieldDesc(md, f.Tag.Get("protobuf"))
		if fd == nil || (fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic()) {
			return b.fail(t)
		}
		pf, ok := b.field(f.Type, fd)
		if !ok {
			return b.fail(t)
		}
		pf.off = f.Offset
		pm.fields = append(pm.fields, pf)
		regular++
	}
	if regular+members != md.Fields().Len() {
		return b.fail(t) // a field the struct does not show, such as a weak one
	}
	return pm
}

// fail records that t has no protoMsg, after all.
func (b *protoBuilder) fail(t reflect.Type) *protoMsg {
	b.pending[t] = nil
	return nil
}

// isProtoMessage reports whether t is a message type of its own: a
// proto.Message whose ProtoReflect speaks for the whole value. A struct
// embedding a message is a proto.Message too, by the promoted method, but
// proto.Clone of it makes the embedded message's type and proto.Equal
// looks at the embedded message only: it is copied and compared as the
// struct it is.
func isProtoMessage(t reflect.Type) (ok bool) {
	if t.Kind() == reflect.Interface || !t.Implements(protoMessage) {
		return false
	}
	defer func() {
		if recover() != nil {
			ok = false // a ProtoReflect that fails on a zero value is no generated one
		}
	}()
	v := reflect.Zero(t)
	if t.Kind() == reflect.Pointer {
		v = reflect.New(t.Elem())
	}
	return reflect.TypeOf(v.Interface().(proto.Message).ProtoReflect().Interface()) == t
}

// openStruct reports whether the pointer type t is a message generated as
// an open struct, and returns its descriptor.
func openStruct(t reflect.Type) (protoreflect.MessageDescriptor, bool) {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct || !t.Implements(protoMessage) {
		return nil, false
	}
	s := t.Elem()
	var state, size, unknown bool
	for i := range s.NumField() {
		f := s.Field(i)
		switch {
		case f.Name == "state":
			state = f.Type.Name() == "MessageState" && f.Type.PkgPath() == "google.golang.org/protobuf/internal/impl"
		case f.Name == "sizeCache":
			size = f.Type.Kind() == reflect.Int32
		case f.Name == "unknownFields":
			unknown = f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Uint8
		case !f.IsExported() || strings.HasPrefix(f.Name, "XXX_"):
			return nil, false
		}
	}
	if !state || !size || !unknown {
		return nil, false
	}
	m, ok := reflect.New(s).Interface().(proto.Message)
	if !ok {
		return nil, false
	}
	return m.ProtoReflect().Descriptor(), true
}

// fieldDesc returns the field of md that a protobuf struct tag
// ("varint,3,opt,name=x,...") describes, or nil.
func fieldDesc(md protoreflect.MessageDescriptor, tag string) protoreflect.FieldDescriptor {
	parts := strings.Split(tag, ",")
	if len(parts) < 2 {
		return nil
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil {
		return nil
	}
	return md.Fields().ByNumber(protoreflect.FieldNumber(n))
}

// field returns how to copy and compare the Go field of type ft that holds
// the proto field fd, outside of a oneof; false if ft is not what
// protoc-gen-go makes of fd.
func (b *protoBuilder) field(ft reflect.Type, fd protoreflect.FieldDescriptor) (protoField, bool) {
	switch {
	case fd.IsMap():
		return b.mapField(ft, fd)
	case fd.IsList():
		if ft.Kind() != reflect.Slice {
			return protoField{}, false
		}
		elem, ok := b.value(ft.Elem(), fd, true)
		if !ok {
			return protoField{}, false
		}
		return listField(elem), true
	case fd.Message() != nil:
		v, ok := b.value(ft, fd, false)
		return protoField{copy: v.copy, eq: v.eq}, ok
	case fd.HasPresence() && ft.Kind() == reflect.Pointer:
		// A scalar with presence: set when the pointer is not nil.
		v, ok := b.value(ft.Elem(), fd, false)
		if !ok {
			return protoField{}, false
		}
		return presentField(ft.Elem(), v), true
	case fd.HasPresence() && isBytes(ft):
		// Bytes with presence: set when not nil, even if empty.
		return protoField{copy: copyBytes, eq: func(x, y unsafe.Pointer) verdict {
			a, b := *(*[]byte)(x), *(*[]byte)(y)
			return is((a == nil) == (b == nil) && bytes.Equal(a, b))
		}}, true
	case fd.HasPresence():
		return protoField{}, false
	}
	// A scalar without presence: set when not zero (-0.0 counts as set).
	v, ok := b.value(ft, fd, false)
	if !ok {
		return protoField{}, false
	}
	switch fd.Kind() {
	case protoreflect.DoubleKind:
		v.eq = func(x, y unsafe.Pointer) verdict {
			a, b := *(*float64)(x), *(*float64)(y)
			if (a != 0 || math.Signbit(a)) != (b != 0 || math.Signbit(b)) {
				return differ
			}
			return is(sameFloat(a, b))
		}
	case protoreflect.FloatKind:
		v.eq = func(x, y unsafe.Pointer) verdict {
			a, b := float64(*(*float32)(x)), float64(*(*float32)(y))
			if (a != 0 || math.Signbit(a)) != (b != 0 || math.Signbit(b)) {
				return differ
			}
			return is(sameFloat(a, b))
		}
	}
	return protoField{copy: v.copy, eq: v.eq}, true
}

// A protoValue is how one value of a proto field's kind, held in a Go
// value of its own (a struct field, a list element, a map value, a oneof
// member), is copied and compared when present: floats as proto does (NaN
// equal to NaN, -0.0 to 0.0), bytes by content.
type protoValue struct {
	size  uintptr
	kind  protoreflect.Kind
	alloc func(n int) unsafe.Pointer // n zeroed values, for a list
	ref   *msgRef                    // for messages
	copy  func(dst, src unsafe.Pointer)
	eq    func(x, y unsafe.Pointer) verdict
}

// goKinds is what protoc-gen-go makes of the scalar kinds.
var goKinds = map[protoreflect.Kind]reflect.Kind{
	protoreflect.BoolKind:     reflect.Bool,
	protoreflect.EnumKind:     reflect.Int32,
	protoreflect.Int32Kind:    reflect.Int32,
	protoreflect.Sint32Kind:   reflect.Int32,
	protoreflect.Sfixed32Kind: reflect.Int32,
	protoreflect.Uint32Kind:   reflect.Uint32,
	protoreflect.Fixed32Kind:  reflect.Uint32,
	protoreflect.Int64Kind:    reflect.Int64,
	protoreflect.Sint64Kind:   reflect.Int64,
	protoreflect.Sfixed64Kind: reflect.Int64,
	protoreflect.Uint64Kind:   reflect.Uint64,
	protoreflect.Fixed64Kind:  reflect.Uint64,
	protoreflect.FloatKind:    reflect.Float32,
	protoreflect.DoubleKind:   reflect.Float64,
	protoreflect.StringKind:   reflect.String,
}

// value returns the protoValue for values of fd's kind (its values', for a
// map) held in Go values of type t; false if t is not what protoc-gen-go
// makes of that kind. inList says the value is a list element, a map value
// or a oneof member, where a nil message is left to proto.Equal; elsewhere
// it is an unset field.
func (b *protoBuilder) value(t reflect.Type, fd protoreflect.FieldDescriptor, inList bool) (protoValue, bool) {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	k := fd.Kind()
	v := protoValue{size: t.Size(), kind: k}
	switch k {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return v, false
		}
		r := b.msgRef(t, inList)
		v.ref = r
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]unsafe.Pointer, n))) }
		v.copy = func(dst, src unsafe.Pointer) {
			if q := *(*unsafe.Pointer)(src); q != nil {
				*(*unsafe.Pointer)(dst) = r.clone(q)
			}
		}
		v.eq = func(x, y unsafe.Pointer) verdict { return r.compare(*(*unsafe.Pointer)(x), *(*unsafe.Pointer)(y)) }
		return v, true
	case protoreflect.BytesKind:
		if !isBytes(t) {
			return v, false
		}
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([][]byte, n))) }
		v.copy = copyBytes
		v.eq = func(x, y unsafe.Pointer) verdict { return is(bytes.Equal(*(*[]byte)(x), *(*[]byte)(y))) }
		return v, true
	}
	if w, ok := goKinds[k]; !ok || t.Kind() != w {
		return v, false
	}
	switch t.Kind() {
	case reflect.Bool:
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]uint8, n))) }
		v.copy = func(dst, src unsafe.Pointer) { *(*uint8)(dst) = *(*uint8)(src) }
		v.eq = func(x, y unsafe.Pointer) verdict { return is(*(*uint8)(x) == *(*uint8)(y)) }
	case reflect.Int32, reflect.Uint32:
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]uint32, n))) }
		v.copy = func(dst, src unsafe.Pointer) { *(*uint32)(dst) = *(*uint32)(src) }
		v.eq = func(x, y unsafe.Pointer) verdict { return is(*(*uint32)(x) == *(*uint32)(y)) }
	case reflect.Int64, reflect.Uint64:
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]uint64, n))) }
		v.copy = func(dst, src unsafe.Pointer) { *(*uint64)(dst) = *(*uint64)(src) }
		v.eq = func(x, y unsafe.Pointer) verdict { return is(*(*uint64)(x) == *(*uint64)(y)) }
	case reflect.Float32:
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]uint32, n))) }
		v.copy = func(dst, src unsafe.Pointer) { *(*uint32)(dst) = *(*uint32)(src) }
		v.eq = func(x, y unsafe.Pointer) verdict {
			return is(sameFloat(float64(*(*float32)(x)), float64(*(*float32)(y))))
		}
	case reflect.Float64:
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]uint64, n))) }
		v.copy = func(dst, src unsafe.Pointer) { *(*uint64)(dst) = *(*uint64)(src) }
		v.eq = func(x, y unsafe.Pointer) verdict { return is(sameFloat(*(*float64)(x), *(*float64)(y))) }
	case reflect.String:
		v.alloc = func(n int) unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(make([]string, n))) }
		v.copy = func(dst, src unsafe.Pointer) { *(*string)(dst) = *(*string)(src) }
		v.eq = func(x, y unsafe.Pointer) verdict { return is(*(*string)(x) == *(*string)(y)) }
	}
	return v, true
}

// A msgRef copies and compares pointers to messages of type t held in a
// field, a list, a map or a oneof.
type msgRef struct {
	t      reflect.Type
	pm     *protoMsg // t's, nil for none; set when the build is over
	inList bool      // a nil message is left to proto.Equal, not an unset field
}

// msgRef returns the msgRef for messages of type t.
func (b *protoBuilder) msgRef(t reflect.Type, inList bool) *msgRef {
	r := &msgRef{t: t, inList: inList}
	b.refs = append(b.refs, r)
	b.msg(t)
	return r
}

// clone copies the message at the non-nil q.
func (r *msgRef) clone(q unsafe.Pointer) unsafe.Pointer {
	if r.pm != nil {
		return r.pm.clone(q)
	}
	return cloneByProto(r.t, q)
}

// compare compares the messages at p and q, either of which may be nil.
func (r *msgRef) compare(p, q unsafe.Pointer) verdict {
	switch {
	case (p == nil || q == nil) && r.inList:
		return unsure
	case p == nil || q == nil:
		return is(p == q)
	case r.pm != nil:
		return r.pm.compare(p, q)
	}
	return is(equalByProto(r.t, p, q))
}

// presentField returns how to copy and compare a scalar with presence,
// held by a pointer to a value of type t.
func presentField(t reflect.Type, v protoValue) protoField {
	newValue := func() unsafe.Pointer { return reflect.New(t).UnsafePointer() }
	switch t.Kind() {
	case reflect.Bool:
		newValue = func() unsafe.Pointer { return unsafe.Pointer(new(bool)) }
	case reflect.Int32, reflect.Uint32, reflect.Float32:
		newValue = func() unsafe.Pointer { return unsafe.Pointer(new(uint32)) }
	case reflect.Int64, reflect.Uint64, reflect.Float64:
		newValue = func() unsafe.Pointer { return unsafe.Pointer(new(uint64)) }
	case reflect.String:
		newValue = func() unsafe.Pointer { return unsafe.Pointer(new(string)) }
	}
	return protoField{
		copy: func(dst, src unsafe.Pointer) {
			if q := *(*unsafe.Pointer)(src); q != nil {
				n := newValue()
				v.copy(n, q)
				*(*unsafe.Pointer)(dst) = n
			}
		},
		eq: func(x, y unsafe.Pointer) verdict {
			p, q := *(*unsafe.Pointer)(x), *(*unsafe.Pointer)(y)
			if p == nil || q == nil {
				return is(p == q)
			}
			return v.eq(p, q)
		},
	}
}

// listField returns how to copy and compare a repeated field whose
// elements are values like v: a list is set when not empty, and equal to
// another of the same length whose elements are equal to its own.
func listField(v protoValue) protoField {
	return protoField{
		copy: func(dst, src unsafe.Pointer) {
			h := (*sliceHeader)(src)
			if h.data == nil {
				return
			}
			if h.len == 0 {
				*(*sliceHeader)(dst) = sliceHeader{data: unsafe.Pointer(&zeroArray)}
				return
			}
			d := v.alloc(h.len)
			for i := range h.len {
				off := uintptr(i) * v.size
				v.copy(unsafe.Add(d, off), unsafe.Add(h.data, off))
			}
			*(*sliceHeader)(dst) = sliceHeader{data: d, len: h.len, cap: h.len}
		},
		eq: func(x, y unsafe.Pointer) verdict {
			a, b := (*sliceHeader)(x), (*sliceHeader)(y)
			if a.len != b.len {
				return differ
			}
			out := same
			for i := range a.len {
				off := uintptr(i) * v.size
				switch v.eq(unsafe.Add(a.data, off), unsafe.Add(b.data, off)) {
				case differ:
					return differ
				case unsure:
					out = unsure
				}
			}
			return out
		},
	}
}

// A oneofCase is how the member of a oneof held in one wrapper type, whose
// interface table for the oneof's interface is tab, is copied and
// compared.
type oneofCase struct {
	tab  unsafe.Pointer
	wrap reflect.Type // the wrapper struct, whose one field holds the member
	v    protoValue
}

// oneof returns how to copy and compare the interface field f of messages
// of type t, described by md, which holds a pointer to the wrapper of
// whichever member is set. Each member's wrapper is found by setting the
// member in a message of its own, and known afterwards by its interface
// table, so telling members apart costs a comparison of words.
func (b *protoBuilder) oneof(t reflect.Type, f reflect.StructField, md protoreflect.MessageDescriptor) (protoField, bool) {
	od := md.Oneofs().ByName(protoreflect.Name(f.Tag.Get("protobuf_oneof")))
	if od == nil || od.IsSynthetic() || f.Type.Kind() != reflect.Interface || f.Type.NumMethod() == 0 {
		return protoField{}, false
	}
	var cases []oneofCase
	for i := range od.Fields().Len() {
		fd := od.Fields().Get(i)
		m := reflect.New(t.Elem())
		pr := m.Interface().(proto.Message).ProtoReflect()
		pr.Set(fd, pr.NewField(fd))
		w := reflect.NewAt(f.Type, unsafe.Add(m.UnsafePointer(), f.Offset)).Elem()
		if w.IsNil() || w.Elem().Kind() != reflect.Pointer || w.Elem().Type().Elem().Kind() != reflect.Struct {
			return protoField{}, false
		}
		wrap := w.Elem().Type().Elem()
		if wrap.NumField() != 1 || fieldDesc(md, wrap.Field(0).Tag.Get("protobuf")) != fd {
			return protoField{}, false
		}
		v, ok := b.value(wrap.Field(0).Type, fd, true)
		if !ok {
			return protoField{}, false
		}
		tab := *(*unsafe.Pointer)(unsafe.Add(m.UnsafePointer(), f.Offset))
		cases = append(cases, oneofCase{tab: tab, wrap: wrap, v: v})
	}
	find := func(tab unsafe.Pointer) *oneofCase {
		for i := range cases {
			if cases[i].tab == tab {
				return &cases[i]
			}
		}
		panic("watchable: " + t.String() + "." + f.Name + " holds a type that is none of its members")
	}
	return protoField{
		off: f.Offset,
		copy: func(dst, src unsafe.Pointer) {
			w := (*[2]unsafe.Pointer)(src)
			if w[0] == nil || w[1] == nil {
				*(*[2]unsafe.Pointer)(dst) = *w // unset, or a nil wrapper
				return
			}
			c := find(w[0])
			n := reflect.New(c.wrap).UnsafePointer()
			c.v.copy(n, w[1])
			*(*[2]unsafe.Pointer)(dst) = [2]unsafe.Pointer{w[0], n}
		},
		eq: func(x, y unsafe.Pointer) verdict {
			a, b := (*[2]unsafe.Pointer)(x), (*[2]unsafe.Pointer)(y)
			setA, setB := a[0] != nil && a[1] != nil, b[0] != nil && b[1] != nil
			switch {
			case !setA && !setB:
				return same
			case setA != setB || a[0] != b[0]:
				return differ
			}
			return find(a[0]).v.eq(a[1], b[1])
		},
	}, true
}

// mapField returns how to copy and compare a map field: set when not
// empty, equal to another with the same keys whose values are equal.
func (b *protoBuilder) mapField(ft reflect.Type, fd protoreflect.FieldDescriptor) (protoField, bool) {
	if ft.Kind() != reflect.Map {
		return protoField{}, false
	}
	v, ok := b.value(ft.Elem(), fd, true)
	if !ok {
		return protoField{}, false
	}
	switch ft.Key().Kind() {
	case reflect.String:
		return mapFieldK[string](v)
	case reflect.Bool:
		return mapFieldK[bool](v)
	case reflect.Int32:
		return mapFieldK[int32](v)
	case reflect.Int64:
		return mapFieldK[int64](v)
	case reflect.Uint32:
		return mapFieldK[uint32](v)
	case reflect.Uint64:
		return mapFieldK[uint64](v)
	}
	return protoField{}, false
}

// mapFieldK handles maps whose keys are laid out as K's, and their values
// as a Go type of the same size and pointers: the runtime lays out and
// hashes a map by its key's kind and its element's size and pointers (see
// flatMapOps), so the map can be read and made as that type.
func mapFieldK[K comparable](v protoValue) (protoField, bool) {
	switch {
	case v.ref != nil:
		r := v.ref
		return mapFieldKV[K](func(q unsafe.Pointer) unsafe.Pointer {
			if q == nil {
				return nil
			}
			return r.clone(q)
		}, r.compare), true
	case v.kind == protoreflect.BoolKind:
		return mapFieldKV[K](keep[uint8], eqOp[uint8]), true
	case v.kind == protoreflect.FloatKind:
		return mapFieldKV[K](keep[float32], func(a, b float32) verdict { return is(sameFloat(float64(a), float64(b))) }), true
	case v.kind == protoreflect.DoubleKind:
		return mapFieldKV[K](keep[float64], func(a, b float64) verdict { return is(sameFloat(a, b)) }), true
	case v.kind == protoreflect.StringKind:
		return mapFieldKV[K](keep[string], eqOp[string]), true
	case v.kind == protoreflect.BytesKind:
		return mapFieldKV[K](func(s []byte) []byte {
			if s == nil {
				return nil
			}
			return append(make([]byte, 0, len(s)), s...)
		}, func(a, b []byte) verdict { return is(bytes.Equal(a, b)) }), true
	case v.size == 4:
		return mapFieldKV[K](keep[uint32], eqOp[uint32]), true
	case v.size == 8:
		return mapFieldKV[K](keep[uint64], eqOp[uint64]), true
	}
	return protoField{}, false
}

// keep copies a value that holds no references: it is its own copy.
func keep[V any](v V) V { return v }

// eqOp compares values for which == is proto's rule.
func eqOp[V comparable](a, b V) verdict { return is(a == b) }

// mapFieldKV returns how to copy and compare maps laid out as map[K]V,
// with cp copying a value (keeping a nil one nil) and eq comparing two.
func mapFieldKV[K comparable, V any](cp func(V) V, eq func(a, b V) verdict) protoField {
	return protoField{
		copy: func(dst, src unsafe.Pointer) {
			m := *(*map[K]V)(src)
			if m == nil {
				return
			}
			n := make(map[K]V, len(m))
			for k, e := range m {
				n[k] = cp(e)
			}
			*(*map[K]V)(dst) = n
		},
		eq: func(x, y unsafe.Pointer) verdict {
			a, b := *(*map[K]V)(x), *(*map[K]V)(y)
			if len(a) != len(b) {
				return differ
			}
			out := same
			for k, e := range a {
				f, ok := b[k]
				if !ok {
					return differ
				}
				switch eq(e, f) {
				case differ:
					return differ
				case unsure:
					out = unsure
				}
			}
			return out
		},
	}
}

// clone returns a copy of the message at q.
func (pm *protoMsg) clone(q unsafe.Pointer) unsafe.Pointer {
	n := reflect.New(pm.typ).UnsafePointer()
	for i := range pm.fields {
		f := &pm.fields[i]
		f.copy(unsafe.Add(n, f.off), unsafe.Add(q, f.off))
	}
	copyBytes(unsafe.Add(n, pm.unknown), unsafe.Add(q, pm.unknown))
	return n
}

// compare compares the messages at the non-nil x and y.
func (pm *protoMsg) compare(x, y unsafe.Pointer) verdict {
	if x == y {
		return same
	}
	out := same
	for i := range pm.fields {
		f := &pm.fields[i]
		switch f.eq(unsafe.Add(x, f.off), unsafe.Add(y, f.off)) {
		case differ:
			return differ
		case unsure:
			out = unsure
		}
	}
	a, b := *(*[]byte)(unsafe.Add(x, pm.unknown)), *(*[]byte)(unsafe.Add(y, pm.unknown))
	switch {
	case len(a) != len(b):
		return differ
	case !bytes.Equal(a, b):
		return unsure // the same fields in another order are equal
	}
	return out
}

// equal compares the messages of pointer type t at the non-nil x and y as
// proto.Equal does.
func (pm *protoMsg) equal(t reflect.Type, x, y unsafe.Pointer) bool {
	switch pm.compare(x, y) {
	case same:
		return true
	case differ:
		return false
	}
	return equalByProto(t, x, y)
}

// cloneByProto copies the message of pointer type t at q with proto.Clone.
func cloneByProto(t reflect.Type, q unsafe.Pointer) unsafe.Pointer {
	c := proto.Clone(reflect.NewAt(t.Elem(), q).Interface().(proto.Message))
	return reflect.ValueOf(c).UnsafePointer()
}

// equalByProto compares the messages of pointer type t at x and y with
// proto.Equal.
func equalByProto(t reflect.Type, x, y unsafe.Pointer) bool {
	return proto.Equal(reflect.NewAt(t.Elem(), x).Interface().(proto.Message), reflect.NewAt(t.Elem(), y).Interface().(proto.Message))
}

// copyBytes copies the bytes at src to dst, a nil slice staying nil and an
// empty one empty.
func copyBytes(dst, src unsafe.Pointer) {
	if s := *(*[]byte)(src); s != nil {
		*(*[]byte)(dst) = append(make([]byte, 0, len(s)), s...)
	}
}

// isBytes reports whether t is a slice of bytes.
func isBytes(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
}

// sameFloat compares floats as proto does: NaN is equal to NaN.
func sameFloat(a, b float64) bool {
	return a == b || (a != a && b != b)
}

// is turns a certain answer into a verdict.
func is(equal bool) verdict {
	if equal {
		return same
	}
	return differ
}
