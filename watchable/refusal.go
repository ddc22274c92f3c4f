package watchable

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unsafe"
)

// A refusal says why a value cannot be deep-copied: which part of it
// (a path of fields and elements) and what is wrong with that part.
// Copy plans return refusals instead of panicking, so that each level on the
// way out adds its step to the path and DeepCopy can panic once, with the
// whole path, before anything was changed.
type refusal struct {
	steps  []string     // path steps, innermost first: ".Name", "[]", "[3]", ".(T)"
	reason string       // completes "field .A.B ...": "is a func"
	cyclic bool         // the value refers back into itself
	held   reflect.Type // the dynamic type, when the outermost step is into an interface's value
}

// in adds the step through which the refused part was reached.
func (r *refusal) in(step string) *refusal {
	r.steps = append(r.steps, step)
	r.held = nil
	return r
}

// inValue adds the step into the dynamic value, of type d, of an interface.
func (r *refusal) inValue(d reflect.Type) *refusal {
	r.steps = append(r.steps, ".("+d.String()+")")
	r.held = d
	return r
}

// clone returns a copy of r that may be extended without changing r; plans
// keep refusals that every later attempt reports again.
func (r *refusal) clone() *refusal {
	c := *r
	c.steps = slices.Clone(r.steps)
	return &c
}

func (r *refusal) path() string {
	var b strings.Builder
	for _, s := range slices.Backward(r.steps) {
		b.WriteString(s)
	}
	return b.String()
}

// message is the panic message of DeepCopy for a value of type t.
func (r *refusal) message(t reflect.Type) string {
	subject := t.String()
	if r.held != nil && t.Kind() == reflect.Interface {
		// The refused part is inside the dynamic value: name its type.
		subject = fmt.Sprintf("%v held in %v", r.held, t)
		inner := *r
		inner.steps = r.steps[:len(r.steps)-1]
		r = &inner
	}
	path := r.path()
	switch {
	case path == "":
		return fmt.Sprintf("watchable: cannot deep-copy %s: it %s", subject, r.reason)
	case strings.HasPrefix(path, ".("):
		return fmt.Sprintf("watchable: cannot deep-copy %s: the value %s %s", subject, path, r.reason)
	case strings.HasPrefix(path, "."):
		return fmt.Sprintf("watchable: cannot deep-copy %s: field %s %s", subject, path, r.reason)
	default:
		return fmt.Sprintf("watchable: cannot deep-copy %s: element %s %s", subject, path, r.reason)
	}
}

// trackAfter is how many references deep a copy or comparison goes before
// it starts remembering the references it is inside of, to detect cycles.
// Values are rarely that deep, so the common case pays nothing; a cyclic
// value is detected one turn of its cycle after this depth.
const trackAfter = 1000

// A trail is where a copy is in the value being copied: how many references
// deep, and, beyond trackAfter, which references it is inside of. It is
// passed by value: each level has its own depth, and levels below share the
// set of references.
type trail struct {
	depth int
	on    map[visit]struct{} // references being copied further up; nil until tracked
}

type visit struct {
	p unsafe.Pointer
	t reflect.Type
}

// trackingTrail starts a copy that detects cycles from the first reference,
// so that the refusal names the shortest path to the cycle.
func trackingTrail() trail { return trail{on: map[visit]struct{}{}} }

// enter is called before copying what the reference p of type t refers to.
// It returns the trail for that, and false if p is already being copied
// further up: the value is cyclic.
func (tr trail) enter(p unsafe.Pointer, t reflect.Type) (trail, bool) {
	tr.depth++
	if tr.on == nil {
		if tr.depth < trackAfter {
			return tr, true
		}
		tr.on = map[visit]struct{}{}
	}
	v := visit{p, t}
	if _, cyclic := tr.on[v]; cyclic {
		return tr, false
	}
	tr.on[v] = struct{}{}
	return tr, true
}

// leave is called when the copy of what p refers to is done, with the trail
// enter returned. Sharing is no cycle: p may be copied again elsewhere.
func (tr trail) leave(p unsafe.Pointer, t reflect.Type) {
	if tr.on != nil {
		delete(tr.on, visit{p, t})
	}
}

func cycle() *refusal {
	return &refusal{reason: "refers back to a value that contains it (a cycle)", cyclic: true}
}

// An eqTrail is a trail for comparisons. A pair of references compared
// before is taken to be equal: if it is not, the first comparison of the
// pair decides (a difference anywhere makes the whole comparison false), so
// cyclic values compare in finite time.
//
// Only values of types that can lead back into themselves (see
// mayRecur) need one; for the others it is the zero eqTrail, which
// remembers nothing: their depth is bounded by their type. The pairs are
// remembered in a state shared by the whole comparison, siblings included,
// once it has entered trackAfter references: a value whose references lead
// back into it along several paths would otherwise be walked once per path,
// and there are exponentially many.
type eqTrail struct {
	st *eqState
}

// eqState is what one comparison remembers; see eqTrail.
type eqState struct {
	entered int                  // references entered, until seen is made
	seen    map[eqVisit]struct{} // pairs compared or being compared; nil until trackAfter
}

// rootTrail returns the trail a comparison of values of p's type starts
// with.
func (p *plan) rootTrail() eqTrail {
	if p.recursive {
		return eqTrail{st: &eqState{}}
	}
	return eqTrail{}
}

type eqVisit struct {
	a, b unsafe.Pointer
	t    reflect.Type
}

// enter is called before comparing what a and b of type t refer to. It
// returns the trail for that, and false if the pair was compared before or
// is being compared: the caller then takes them to be equal.
func (tr eqTrail) enter(a, b unsafe.Pointer, t reflect.Type) (eqTrail, bool) {
	st := tr.st
	if st == nil {
		return tr, true
	}
	if st.seen == nil {
		if st.entered++; st.entered < trackAfter {
			return tr, true
		}
		st.seen = map[eqVisit]struct{}{}
	}
	v := eqVisit{a, b, t}
	if _, again := st.seen[v]; again {
		return tr, false
	}
	st.seen[v] = struct{}{}
	return tr, true
}
