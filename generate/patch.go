package generate

import (
	"fmt"
	"slices"
	"strings"
)

// Patcher is a change that a generator asks for on the application's
// workload, rather than editing it: Kusion's Patcher. Its parts apply in
// this order: Labels, Annotations, PodLabels, PodAnnotations, Environments,
// MergePatch.
//
// All patchers of an application are checked against each other before any
// applies: two generators that set the same key (a label, an annotation, an
// environment variable, a field of the merge patch) to different values, or
// where one replaces or deletes a field the other sets something within,
// conflict, and the application fails with a *ConflictError naming both.
// Equal values do not conflict. Within one generator, later patchers win.
// Patches change the workload generator's values freely: the workload is the
// base that the other modules contribute to.
type Patcher struct {
	// Environments are set on every container of the workload's pod
	// template (spec.template.spec.containers): a variable of the same name
	// is replaced where it is, others are appended in order.
	Environments []EnvVar `json:"environments,omitempty"`
	// Labels and Annotations are set in the workload's metadata.
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	// PodLabels and PodAnnotations are set in the metadata of the
	// workload's pod template (spec.template.metadata).
	PodLabels      map[string]string `json:"podLabels,omitempty"`
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`
	// MergePatch is a JSON merge patch (RFC 7396) of the workload, for
	// anything else: objects are merged key by key, null deletes, and any
	// other value (arrays included) replaces the workload's. It must not
	// change the workload's ID.
	MergePatch map[string]any `json:"mergePatch,omitempty"`
}

// EnvVar is an environment variable for the workload's containers, in the
// shape of Kubernetes' EnvVar: a Value, or a ValueFrom source such as
// {"secretKeyRef": {"name": "db", "key": "password"}}.
type EnvVar struct {
	Name      string         `json:"name"`
	Value     string         `json:"value,omitempty"`
	ValueFrom map[string]any `json:"valueFrom,omitempty"`
}

// Paths of the fields that the typed parts of a Patcher set.
var (
	labelsPath      = []string{"metadata", "labels"}
	annotationsPath = []string{"metadata", "annotations"}
	podLabelsPath   = []string{"spec", "template", "metadata", "labels"}
	podAnnotsPath   = []string{"spec", "template", "metadata", "annotations"}
	containersPath  = []string{"spec", "template", "spec", "containers"}
)

// patch is a Patcher with its values normalized to JSON.
type patch struct {
	labels, annotations, podLabels, podAnnotations map[string]string
	env                                            []map[string]any // {"name": ..., "value": ...} or {"name": ..., "valueFrom": ...}
	merge                                          map[string]any
}

func normalizePatch(p Patcher) (patch, error) {
	n := patch{labels: p.Labels, annotations: p.Annotations, podLabels: p.PodLabels, podAnnotations: p.PodAnnotations}
	for i, e := range p.Environments {
		if e.Name == "" {
			return patch{}, fmt.Errorf("environment variable %d has no name", i)
		}
		v := map[string]any{"name": e.Name}
		if e.ValueFrom != nil {
			from, err := jsonObject(e.ValueFrom)
			if err != nil {
				return patch{}, fmt.Errorf("environment variable %q: valueFrom: %w", e.Name, err)
			}
			v["valueFrom"] = from
		} else {
			v["value"] = e.Value
		}
		n.env = append(n.env, v)
	}
	merge, err := jsonObject(p.MergePatch)
	if err != nil {
		return patch{}, fmt.Errorf("merge patch: %w", err)
	}
	n.merge = merge
	return n, nil
}

// A claim is one key that a generator's patches set: where in the
// workload, what kind of key it is (and its name, for the typed parts of a
// Patcher), and the value.
type claim struct {
	module string
	path   []string
	kind   string // "label", "annotation", "pod label", "pod annotation", "environment variable" or "field"
	name   string // the label's, annotation's or variable's name
	value  any
}

// key says what the claim sets, for an error message.
func (c claim) key() string {
	if c.kind == "field" {
		return "field " + strings.Join(c.path, ".")
	}
	return fmt.Sprintf("%s %q", c.kind, c.name)
}

// claims lists the keys that module's patches set. A key set again by a
// later patch of the same module takes the later value.
func claims(module string, patches []patch) []claim {
	var out []claim
	at := make(map[string]int) // path → index in out
	add := func(path []string, kind, name string, value any) {
		id := strings.Join(path, "\x00")
		if i, ok := at[id]; ok {
			out[i].value = value
			return
		}
		at[id] = len(out)
		out = append(out, claim{module: module, path: path, kind: kind, name: name, value: value})
	}
	strs := func(base []string, kind string, m map[string]string) {
		for k, v := range m {
			add(append(slices.Clip(base), k), kind, k, v)
		}
	}
	var walk func(prefix []string, m map[string]any)
	walk = func(prefix []string, m map[string]any) {
		for k, v := range m {
			path := append(slices.Clip(prefix), k)
			if sub, ok := v.(map[string]any); ok && len(sub) > 0 {
				walk(path, sub)
				continue
			}
			add(path, "field", "", v)
		}
	}
	for _, p := range patches {
		strs(labelsPath, "label", p.labels)
		strs(annotationsPath, "annotation", p.annotations)
		strs(podLabelsPath, "pod label", p.podLabels)
		strs(podAnnotsPath, "pod annotation", p.podAnnotations)
		for _, e := range p.env {
			name := e["name"].(string)
			var value any = e["value"]
			if from, ok := e["valueFrom"]; ok {
				value = map[string]any{"valueFrom": from}
			}
			// No merge patch can address a variable inside the
			// containers array; the path only has to lie within it.
			add(append(slices.Clip(containersPath), "[*]", "env", name), "environment variable", name, value)
		}
		walk(nil, p.merge)
	}
	return out
}

// conflicts returns the conflicts between claims of different modules,
// each naming the module that ran first first, sorted by their text.
func conflicts(cs []claim) []error {
	var errs []error
	for i, a := range cs {
		for _, b := range cs[i+1:] {
			if a.module == b.module || !clash(a, b) {
				continue
			}
			errs = append(errs, &ConflictError{
				Generators: [2]string{a.module, b.module},
				Keys:       [2]string{a.key(), b.key()},
				Values:     [2]any{a.value, b.value},
			})
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errs
}

// clash reports whether two claims cannot both hold: the same path with
// different values, or a value replacing (or deleting) the field that the
// other sets something within. An empty object only makes sure that an
// object is there, so setting something within it is no clash.
func clash(a, b claim) bool {
	switch {
	case slices.Equal(a.path, b.path):
		return !jsonEqual(a.value, b.value)
	case hasPrefix(b.path, a.path):
		return !isEmptyObject(a.value)
	case hasPrefix(a.path, b.path):
		return !isEmptyObject(b.value)
	}
	return false
}

func hasPrefix(path, prefix []string) bool {
	return len(prefix) < len(path) && slices.Equal(path[:len(prefix)], prefix)
}

func isEmptyObject(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

// apply applies p to the workload object obj, in place.
func (p patch) apply(obj map[string]any) error {
	for _, s := range []struct {
		path []string
		m    map[string]string
	}{{labelsPath, p.labels}, {annotationsPath, p.annotations}, {podLabelsPath, p.podLabels}, {podAnnotsPath, p.podAnnotations}} {
		if len(s.m) == 0 {
			continue
		}
		target, err := object(obj, s.path)
		if err != nil {
			return err
		}
		for k, v := range s.m {
			target[k] = v
		}
	}
	if len(p.env) > 0 {
		if err := setEnv(obj, p.env); err != nil {
			return err
		}
	}
	mergePatch(obj, p.merge)
	return nil
}

// object returns the object at path in obj, making the objects on the way
// that are missing.
func object(obj map[string]any, path []string) (map[string]any, error) {
	for i, k := range path {
		next, ok := obj[k]
		if !ok || next == nil {
			m := make(map[string]any)
			obj[k] = m
			obj = m
			continue
		}
		m, ok := next.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s is not an object", ErrPatch, strings.Join(path[:i+1], "."))
		}
		obj = m
	}
	return obj, nil
}

// setEnv sets the variables on every container of obj's pod template.
func setEnv(obj map[string]any, env []map[string]any) error {
	where := strings.Join(containersPath, ".")
	spec, err := object(obj, containersPath[:len(containersPath)-1])
	if err != nil {
		return err
	}
	containers, _ := spec["containers"].([]any)
	if len(containers) == 0 {
		return fmt.Errorf("%w: environment variables need containers, and the workload has none at %s", ErrPatch, where)
	}
	for i, c := range containers {
		container, ok := c.(map[string]any)
		if !ok {
			return fmt.Errorf("%w: %s[%d] is not an object", ErrPatch, where, i)
		}
		var vars []any
		if v, ok := container["env"]; ok && v != nil {
			if vars, ok = v.([]any); !ok {
				return fmt.Errorf("%w: %s[%d].env is not an array", ErrPatch, where, i)
			}
		}
	next:
		for _, e := range env {
			for j, old := range vars {
				if o, ok := old.(map[string]any); ok && o["name"] == e["name"] {
					vars[j] = copyObject(e)
					continue next
				}
			}
			vars = append(vars, copyObject(e))
		}
		container["env"] = vars
	}
	return nil
}

// mergePatch applies the JSON merge patch p to target, in place (RFC 7396).
func mergePatch(target, p map[string]any) {
	for k, v := range p {
		switch v := v.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			sub, ok := target[k].(map[string]any)
			if !ok {
				sub = make(map[string]any)
				target[k] = sub
			}
			mergePatch(sub, v)
		default:
			target[k] = copyValue(v)
		}
	}
}
