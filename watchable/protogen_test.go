package watchable_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// The random messages and the random changes to them that the proto
// differential tests (protoplan_test.go) compare and copy.

// pbGen makes random messages and random small changes to them, driven
// by descriptors, so that it covers every field of every type. Its values
// favour the ones that tell fast paths apart: zeros of both signs, NaNs,
// nil and empty bytes, lists and maps.
type pbGen struct {
	r *rand.Rand
}

func newPBGen(seed uint64, name string) *pbGen {
	h := fnv.New64a()
	h.Write([]byte(name))
	return &pbGen{r: rand.New(rand.NewPCG(seed, h.Sum64()))}
}

// pbMaxDepth bounds how deep random messages nest.
const pbMaxDepth = 3

// pbNew returns a random message of like's type.
func pbNew[M proto.Message](g *pbGen, like M) M {
	pm := like.ProtoReflect().Type().New()
	g.fill(pm, 0)
	return pm.Interface().(M)
}

func (g *pbGen) fill(m protoreflect.Message, depth int) {
	p := []float64{0.5, 0.35, 0.2, 0.1}[depth]
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			continue
		}
		if g.r.Float64() < p {
			g.set(m, fd, depth)
		}
	}
	oneofs := m.Descriptor().Oneofs()
	for i := range oneofs.Len() {
		if od := oneofs.Get(i); !od.IsSynthetic() && g.r.Float64() < p {
			g.set(m, od.Fields().Get(g.r.IntN(od.Fields().Len())), depth)
		}
	}
	if g.r.IntN(8) == 0 {
		m.SetUnknown(g.unknown())
	}
	if g.r.IntN(4) == 0 {
		g.emptyOrNil(m)
	}
}

// set gives field fd of m a random value; a list or map gets a few more
// entries.
func (g *pbGen) set(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	if fd.Message() != nil && depth >= pbMaxDepth {
		return
	}
	switch {
	case fd.IsList():
		l := m.Mutable(fd).List()
		for range g.r.IntN(4) {
			l.Append(g.value(fd, l.NewElement, depth))
		}
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		for range g.r.IntN(4) {
			mp.Set(g.scalar(fd.MapKey()).MapKey(), g.value(fd.MapValue(), mp.NewValue, depth))
		}
	default:
		m.Set(fd, g.value(fd, func() protoreflect.Value { return m.NewField(fd) }, depth))
	}
}

// value returns a random value for fd; newMessage makes an empty message
// where fd holds messages.
func (g *pbGen) value(fd protoreflect.FieldDescriptor, newMessage func() protoreflect.Value, depth int) protoreflect.Value {
	if fd.Message() == nil {
		return g.scalar(fd)
	}
	v := newMessage()
	if depth+1 <= pbMaxDepth {
		g.fill(v.Message(), depth+1)
	}
	return v
}

func (g *pbGen) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	pick := func(n int) int { return g.r.IntN(n) }
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(pick(2) == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if pick(5) == 0 {
			return protoreflect.ValueOfEnum(99) // unknown to the enum
		}
		return protoreflect.ValueOfEnum(vals.Get(pick(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, 1, -1, math.MinInt32, math.MaxInt32, g.r.Int32()}[pick(6)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, 1, -1, math.MinInt64, math.MaxInt64, g.r.Int64()}[pick(6)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 1, math.MaxUint32, g.r.Uint32()}[pick(4)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 1, math.MaxUint64, g.r.Uint64()}[pick(4)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.float()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.float())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString([]string{"", "a", "route-42", "héllo", fmt.Sprintf("s%x", g.r.Uint32())}[pick(5)])
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(g.bytes())
	}
	panic(fmt.Sprintf("no random value for %v", fd.Kind()))
}

var (
	pbNegZero = math.Copysign(0, -1)
	pbNaN2    = math.Float64frombits(0x7ff8000000000001) // a NaN with another payload
)

func (g *pbGen) float() float64 {
	return []float64{0, pbNegZero, math.NaN(), pbNaN2, math.Inf(1), math.Inf(-1), 1.5, g.r.NormFloat64() * 1e3}[g.r.IntN(8)]
}

func (g *pbGen) bytes() []byte {
	switch g.r.IntN(5) {
	case 0:
		return nil
	case 1:
		return []byte{}
	case 2:
		return []byte{0}
	}
	b := make([]byte, 1+g.r.IntN(8))
	for i := range b {
		b[i] = byte(g.r.Uint32())
	}
	return b
}

// unknown returns a few unknown fields, of numbers no test message uses.
func (g *pbGen) unknown() []byte {
	var b []byte
	for range 1 + g.r.IntN(3) {
		num := protowire.Number(5000 + g.r.IntN(3))
		switch g.r.IntN(4) {
		case 0:
			b = protowire.AppendVarint(protowire.AppendTag(b, num, protowire.VarintType), g.r.Uint64N(300))
		case 1:
			b = protowire.AppendFixed32(protowire.AppendTag(b, num, protowire.Fixed32Type), g.r.Uint32())
		case 2:
			b = protowire.AppendFixed64(protowire.AppendTag(b, num, protowire.Fixed64Type), g.r.Uint64())
		default:
			b = protowire.AppendBytes(protowire.AppendTag(b, num, protowire.BytesType), g.bytes())
		}
	}
	return b
}

// pbSlot is a place in a message's Go struct that a change can set: a
// field, an element of a list, or a value in a map.
type pbSlot struct {
	v      reflect.Value // addressable, unless in a map
	m, key reflect.Value // the map and key, for a map value
	elem   bool          // in a list, a map or a oneof
}

func (s pbSlot) get() reflect.Value {
	if s.m.IsValid() {
		return s.m.MapIndex(s.key)
	}
	return s.v
}

func (s pbSlot) set(v reflect.Value) {
	if s.m.IsValid() {
		s.m.SetMapIndex(s.key, v)
	} else {
		s.v.Set(v)
	}
}

func (s pbSlot) typ() reflect.Type { return s.get().Type() }

// pbSlots lists the places in m's own Go struct (not in nested messages):
// each field, each element and map value, the contents of a set oneof,
// and what a scalar pointer points to.
func pbSlots(m protoreflect.Message) []pbSlot {
	var out []pbSlot
	var walk func(v reflect.Value, elem bool)
	walk = func(v reflect.Value, elem bool) {
		out = append(out, pbSlot{v: v, elem: elem})
		switch v.Kind() {
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Uint8 {
				for i := range v.Len() {
					out = append(out, pbSlot{v: v.Index(i), elem: true})
				}
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				out = append(out, pbSlot{m: v, key: k, elem: true})
			}
		case reflect.Pointer:
			if !v.IsNil() && !pbIsMessage(v.Type()) {
				out = append(out, pbSlot{v: v.Elem()})
			}
		case reflect.Interface:
			if !v.IsNil() && !v.Elem().IsNil() {
				walk(v.Elem().Elem().Field(0), true)
			}
		}
	}
	sv := reflect.ValueOf(m.Interface()).Elem()
	for i := range sv.NumField() {
		if sv.Type().Field(i).IsExported() {
			walk(sv.Field(i), false)
		}
	}
	return out
}

// emptyOrNil turns some of m's nil lists, maps and bytes empty, and some
// empty ones nil: differences proto.Equal sees only where bytes have
// explicit presence.
func (g *pbGen) emptyOrNil(m protoreflect.Message) {
	for _, s := range pbSlots(m) {
		if k := s.typ().Kind(); (k == reflect.Slice || k == reflect.Map) && s.get().Len() == 0 && g.r.IntN(2) == 0 {
			s.set(pbFlipNil(s.get()))
		}
	}
}

func pbFlipNil(v reflect.Value) reflect.Value {
	switch {
	case !v.IsNil():
		return reflect.Zero(v.Type())
	case v.Kind() == reflect.Map:
		return reflect.MakeMap(v.Type())
	}
	return reflect.MakeSlice(v.Type(), 0, 0)
}

// pbMessages lists m and the messages in it.
func pbMessages(m protoreflect.Message) []protoreflect.Message {
	out := []protoreflect.Message{m}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			for i := range v.List().Len() {
				if e := v.List().Get(i).Message(); e.IsValid() {
					out = append(out, pbMessages(e)...)
				}
			}
		case fd.IsMap() && fd.MapValue().Message() != nil:
			v.Map().Range(func(_ protoreflect.MapKey, e protoreflect.Value) bool {
				if e.Message().IsValid() {
					out = append(out, pbMessages(e.Message())...)
				}
				return true
			})
		case fd.Message() != nil && !fd.IsMap() && v.Message().IsValid():
			out = append(out, pbMessages(v.Message())...)
		}
		return true
	})
	return out
}

// mutate makes one small change somewhere in root, often one proto.Equal
// does not see, and describes it.
func (g *pbGen) mutate(root protoreflect.Message) string {
	all := pbMessages(root)
	m := all[g.r.IntN(len(all))]
	name := string(m.Descriptor().Name())
	fields := m.Descriptor().Fields()
	if fields.Len() == 0 {
		m.SetUnknown(g.unknown())
		return name + ": new unknown fields"
	}
	slots := pbSlots(m)
	pickSlot := func(ok func(pbSlot) bool) (pbSlot, bool) {
		var c []pbSlot
		for _, s := range slots {
			if ok(s) {
				c = append(c, s)
			}
		}
		if len(c) == 0 {
			return pbSlot{}, false
		}
		return c[g.r.IntN(len(c))], true
	}
	switch g.r.IntN(9) {
	case 0:
		fd := fields.Get(g.r.IntN(fields.Len()))
		g.set(m, fd, pbMaxDepth-1)
		return fmt.Sprintf("%s: set %s", name, fd.Name())
	case 1:
		fd := fields.Get(g.r.IntN(fields.Len()))
		m.Clear(fd)
		return fmt.Sprintf("%s: clear %s", name, fd.Name())
	case 2:
		if s, ok := pickSlot(func(s pbSlot) bool {
			k := s.typ().Kind()
			return (k == reflect.Slice || k == reflect.Map) && s.get().Len() == 0
		}); ok {
			s.set(pbFlipNil(s.get()))
			return fmt.Sprintf("%s: nil/empty %v", name, s.typ())
		}
	case 3:
		if s, ok := pickSlot(func(s pbSlot) bool {
			k := s.typ().Kind()
			return k == reflect.Float32 || k == reflect.Float64
		}); ok {
			f := s.get().Float()
			n := []float64{-f, pbNegZero, 0, math.NaN(), pbNaN2}[g.r.IntN(5)]
			v := reflect.New(s.typ()).Elem()
			v.SetFloat(n)
			s.set(v)
			return fmt.Sprintf("%s: float %v to %v", name, f, n)
		}
	case 4:
		return name + ": " + g.mutateUnknown(m)
	case 5:
		if desc := g.mutateOneof(m); desc != "" {
			return name + ": " + desc
		}
	case 6:
		if s, ok := pickSlot(func(s pbSlot) bool { return s.elem && pbIsMessage(s.typ()) }); ok {
			s.set(reflect.Zero(s.typ()))
			return fmt.Sprintf("%s: nil %v in a list, map or oneof", name, s.typ())
		}
	case 7:
		for i := range fields.Len() {
			fd := fields.Get(i)
			if !fd.IsMap() || m.Get(fd).Map().Len() == 0 {
				continue
			}
			mp := m.Mutable(fd).Map()
			var key protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool { key = k; return false })
			mp.Clear(key)
			return fmt.Sprintf("%s: delete %v from %s", name, key, fd.Name())
		}
	}
	s := slots[g.r.IntN(len(slots))]
	if k := s.typ().Kind(); k == reflect.Slice || k == reflect.Map {
		if s.get().Len() == 0 {
			s.set(pbFlipNil(s.get()))
			return fmt.Sprintf("%s: nil/empty %v", name, s.typ())
		}
	}
	fd := fields.Get(g.r.IntN(fields.Len()))
	g.set(m, fd, pbMaxDepth-1)
	return fmt.Sprintf("%s: set %s", name, fd.Name())
}

// mutateUnknown reorders, changes or replaces m's unknown fields.
func (g *pbGen) mutateUnknown(m protoreflect.Message) string {
	var recs [][]byte
	for b := m.GetUnknown(); len(b) > 0; {
		_, _, n := protowire.ConsumeField(b)
		recs = append(recs, b[:n:n])
		b = b[n:]
	}
	if len(recs) < 2 || g.r.IntN(3) == 0 {
		m.SetUnknown(g.unknown())
		return "new unknown fields"
	}
	if g.r.IntN(2) == 0 {
		g.r.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		m.SetUnknown(bytes.Join(recs, nil))
		return "unknown fields shuffled"
	}
	m.SetUnknown(bytes.Join(recs[1:], nil))
	return "first unknown field dropped"
}

// mutateOneof sets a oneof of m to what protoreflect cannot: a typed nil
// wrapper, or a wrapper holding a nil message.
func (g *pbGen) mutateOneof(m protoreflect.Message) string {
	oneofs := m.Descriptor().Oneofs()
	var real []protoreflect.OneofDescriptor
	for i := range oneofs.Len() {
		if !oneofs.Get(i).IsSynthetic() {
			real = append(real, oneofs.Get(i))
		}
	}
	if len(real) == 0 {
		return ""
	}
	od := real[g.r.IntN(len(real))]
	fd := od.Fields().Get(g.r.IntN(od.Fields().Len()))
	m.Set(fd, g.value(fd, func() protoreflect.Value { return m.NewField(fd) }, pbMaxDepth))
	iface := pbOneofField(m, od)
	if fd.Message() != nil && g.r.IntN(2) == 0 {
		w := iface.Elem().Elem().Field(0)
		w.Set(reflect.Zero(w.Type()))
		return fmt.Sprintf("oneof %s holds a nil %s", od.Name(), fd.Name())
	}
	iface.Set(reflect.Zero(iface.Elem().Type()))
	return fmt.Sprintf("oneof %s is a typed nil %s", od.Name(), fd.Name())
}

func pbOneofField(m protoreflect.Message, od protoreflect.OneofDescriptor) reflect.Value {
	sv := reflect.ValueOf(m.Interface()).Elem()
	for i := range sv.NumField() {
		if sv.Type().Field(i).Tag.Get("protobuf_oneof") == string(od.Name()) {
			return sv.Field(i)
		}
	}
	panic(fmt.Sprintf("no Go field for oneof %s", od.FullName()))
}
