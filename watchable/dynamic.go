package watchable

import (
	"reflect"
	"sync"
)

// A dynPlan is how a value of one dynamic type is copied and compared when
// an interface of one static type holds it. It is the dynamic type's plan,
// unless the dynamic type has a method that speaks the interface: a
// DeepCopy returning something else the interface can hold (DeepCopy()
// Shape on *Rect, held in a Shape), or an Equal taking the interface type.
type dynPlan struct {
	refused *refusal // including the step into the dynamic value
	// copy returns a deep copy of x; nil when x is shared (it needs no
	// copying: an interface's value cannot be changed in place) or refused.
	copy  func(x any, tr trail) (any, *refusal)
	equal func(x, y any, tr eqTrail) bool // x and y are of the dynamic type
}

// refusal returns why the value cannot be copied, or nil. The caller may
// extend it.
func (dp *dynPlan) refusal() *refusal {
	if dp.refused == nil {
		return nil
	}
	return dp.refused.clone()
}

type dynKey struct{ static, dynamic reflect.Type }

// dynPlans caches a *dynPlan per dynKey.
var dynPlans sync.Map

// dynPlanFor returns the plan for values of dynamic type d held in
// interfaces of type static.
func dynPlanFor(static, d reflect.Type) *dynPlan {
	key := dynKey{static, d}
	if dp, ok := dynPlans.Load(key); ok {
		return dp.(*dynPlan)
	}
	dp, _ := dynPlans.LoadOrStore(key, buildDynPlan(static, d))
	return dp.(*dynPlan)
}

func buildDynPlan(static, d reflect.Type) *dynPlan {
	pd := planFor(d)
	dp := &dynPlan{equal: dynEqual(static, d, pd)}
	switch {
	case pd.shallow:
	case d.Kind() != reflect.Interface && deepCopyInto(d, static):
		m, _ := d.MethodByName("DeepCopy")
		dp.copy = func(x any, _ trail) (any, *refusal) {
			v := reflect.ValueOf(x)
			if d.Kind() == reflect.Pointer && v.IsNil() {
				return x, nil
			}
			return m.Func.Call([]reflect.Value{v})[0].Interface(), nil
		}
	case pd.refused != nil:
		dp.refused = pd.refused.clone().inValue(d)
	case d.Kind() == reflect.Pointer:
		dp.copy = func(x any, tr trail) (any, *refusal) {
			q := reflect.ValueOf(x).UnsafePointer()
			if q == nil {
				return x, nil
			}
			n, r := pd.clone(q, tr)
			if r != nil {
				return nil, r.inValue(d)
			}
			v := reflect.NewAt(d.Elem(), n)
			if v.Type() != d {
				v = v.Convert(d) // a named pointer type
			}
			return v.Interface(), nil
		}
	default:
		// The interface's copy of the value is not addressable: copy it
		// into memory of our own, fix that, and box it again.
		dp.copy = func(x any, tr trail) (any, *refusal) {
			v := reflect.New(d)
			v.Elem().Set(reflect.ValueOf(x))
			if r := pd.fix(v.UnsafePointer(), tr); r != nil {
				return nil, r.inValue(d)
			}
			return v.Elem().Interface(), nil
		}
	}
	return dp
}

// deepCopyInto reports whether d has a method DeepCopy() R, R not d, whose
// result an interface of type static can hold.
func deepCopyInto(d, static reflect.Type) bool {
	m, ok := d.MethodByName("DeepCopy")
	if !ok {
		return false
	}
	ft := m.Type
	return ft.NumIn() == 1 && ft.NumOut() == 1 && !ft.IsVariadic() && ft.Out(0) != d && ft.Out(0).AssignableTo(static)
}

// dynEqual returns how to compare two values of dynamic type d held in
// interfaces of type static.
func dynEqual(static, d reflect.Type, pd *plan) func(x, y any, tr eqTrail) bool {
	if m, ok := d.MethodByName("Equal"); ok && d != static && isEqualFunc(m.Type, static) {
		return func(x, y any, _ eqTrail) bool {
			arg := reflect.New(static).Elem()
			arg.Set(reflect.ValueOf(y))
			return m.Func.Call([]reflect.Value{reflect.ValueOf(x), arg})[0].Bool()
		}
	}
	switch {
	case pd.operator:
		return func(x, y any, _ eqTrail) bool { return x == y }
	case pd.eqPtr != nil:
		return func(x, y any, tr eqTrail) bool {
			return pd.eqPtr(reflect.ValueOf(x).UnsafePointer(), reflect.ValueOf(y).UnsafePointer(), tr)
		}
	case pd.eqSlice != nil:
		return func(x, y any, tr eqTrail) bool {
			return pd.eqSlice(headerOf(reflect.ValueOf(x)), headerOf(reflect.ValueOf(y)), tr)
		}
	case pd.eqMap != nil:
		return func(x, y any, _ eqTrail) bool {
			return pd.eqMap(reflect.ValueOf(x).UnsafePointer(), reflect.ValueOf(y).UnsafePointer())
		}
	}
	if m, onPointer, ok := equalMethod(d); ok && !onPointer {
		return func(x, y any, _ eqTrail) bool {
			return m.Func.Call([]reflect.Value{reflect.ValueOf(x), reflect.ValueOf(y)})[0].Bool()
		}
	}
	// Compare copies in memory of our own: the interfaces' copies are not
	// addressable.
	return func(x, y any, tr eqTrail) bool {
		a, b := reflect.New(d), reflect.New(d)
		a.Elem().Set(reflect.ValueOf(x))
		b.Elem().Set(reflect.ValueOf(y))
		return pd.eq(a.UnsafePointer(), b.UnsafePointer(), tr)
	}
}

func headerOf(v reflect.Value) sliceHeader {
	return sliceHeader{data: v.UnsafePointer(), len: v.Len(), cap: v.Cap()}
}
