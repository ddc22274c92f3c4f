package generate_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/generate"
)

func TestConfigDecodeIsStrict(t *testing.T) {
	var v struct {
		Size int `json:"size"`
	}
	if err := (generate.Config{"size": 3}).Decode(&v); err != nil || v.Size != 3 {
		t.Fatalf("Decode: %v, %+v", err, v)
	}
	err := generate.Config{"sise": 3}.Decode(&v)
	if err == nil || !strings.Contains(err.Error(), `unknown field "sise"`) {
		t.Errorf("Decode of a misspelt field: %v, want an unknown field error", err)
	}
	if err := generate.Config(nil).Decode(&v); err != nil || v.Size != 3 {
		t.Errorf("Decode of nil: %v, %+v; want v unchanged", err, v)
	}
}

// TestResourcesAreNormalized checks that what generators build from any
// values that encode to JSON is published as JSON values.
func TestResourcesAreNormalized(t *testing.T) {
	type port struct {
		Port int `json:"port"`
	}
	workload := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		obj := map[string]any{
			"apiVersion": "v1",
			"kind":       "Service",
			"metadata":   map[string]any{"name": req.App, "labels": map[string]string{"app": req.App}},
			"spec":       map[string]any{"ports": []port{{Port: 80}}, "replicas": 2, "names": []string{"a"}},
		}
		if req.DevConfig["nan"] == true {
			obj["spec"].(map[string]any)["weight"] = math.NaN()
		}
		return generate.Response{Resources: []generate.Resource{{Object: obj}}}, nil
	})
	f := newFixture(t)
	f.gen = generate.New("gen", f.apps.View(), f.workspaces.View(), workload, generate.WithLogger(quiet),
		generate.WithErrorHandler(func(err error) { f.errs <- err }))
	f.apps.Store("web", generate.App{Name: "web"})
	f.apps.Store("nan", generate.App{Name: "nan", Workload: generate.Config{"nan": true}})
	f.start(t)
	r, _ := f.gen.Output().Load(generate.Key[string]{App: "web", ID: "v1:Service:web"})
	want := map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec":       map[string]any{"ports": []any{map[string]any{"port": float64(80)}}, "replicas": float64(2), "names": []any{"a"}},
	}
	if diff := cmp.Diff(want, r.Object); diff != "" {
		t.Errorf("published object (-want +got):\n%s", diff)
	}
	if err := f.waitFailure(t, "nan"); !errors.Is(err, generate.ErrInvalidResource) {
		t.Errorf("a NaN in a resource: %v, want ErrInvalidResource", err)
	}
}

// TestRequestsAreTheGenerators checks that a generator changing its request
// changes nothing for the others, nor the inputs.
func TestRequestsAreTheGenerators(t *testing.T) {
	vandal := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		for _, c := range []generate.Config{req.Workload, req.DevConfig, req.PlatformConfig, req.RuntimeConfig} {
			for k := range c {
				c[k] = "changed"
			}
		}
		return generate.Response{}, nil
	})
	var seen []generate.Request
	spy := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		seen = append(seen, req)
		return generate.Response{}, nil
	})
	f := newFixture(t, generate.WithGenerator("a0", vandal), generate.WithGenerator("a1", spy))
	f.workspaces.Store("ws", generate.Workspace{
		Modules: map[string]generate.Config{"a0": {"p": "a0"}, "a1": {"p": "a1"}},
		Runtime: generate.Config{"r": "r"},
	})
	a := app(t, `{name: web, workspace: ws, workload: {containers: [{name: web}]}, accessories: {a0: {d: a0}, a1: {d: a1}}}`)
	f.apps.Store("web", a)
	f.start(t)
	want := []generate.Request{{
		App:               "web",
		Workload:          generate.Config{"containers": []any{map[string]any{"name": "web"}}},
		DevConfig:         generate.Config{"d": "a1"},
		PlatformConfig:    generate.Config{"p": "a1"},
		RuntimeConfig:     generate.Config{"r": "r"},
		WorkloadResources: seen[0].WorkloadResources,
	}}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	if got, _ := f.apps.Load("web"); !reflect.DeepEqual(got, a) {
		t.Errorf("the input changed: %+v", got)
	}
}

// TestResourceEqual checks that Equal agrees with reflect.DeepEqual.
func TestResourceEqual(t *testing.T) {
	objects := []map[string]any{
		nil,
		{},
		{"a": nil},
		{"a": "x"},
		{"a": 1.0},
		{"a": true},
		{"a": []any{}},
		{"a": []any(nil)},
		{"a": []any{"x", 1.0}},
		{"a": []any{"x", 2.0}},
		{"a": map[string]any{"b": "c"}},
		{"a": map[string]any{"b": "d"}},
		{"a": map[string]any{}},
		{"a": []string{"x"}}, // not JSON: reflect.DeepEqual decides
		{"a": []string{"y"}},
	}
	for _, a := range objects {
		for _, b := range objects {
			ra, rb := generate.Resource{ID: "x", Object: a}, generate.Resource{ID: "x", Object: b}
			if got, want := ra.Equal(rb), reflect.DeepEqual(ra, rb); got != want {
				t.Errorf("Equal(%v, %v) = %v, want %v", a, b, got, want)
			}
		}
	}
	if (generate.Resource{ID: "x"}).Equal(generate.Resource{ID: "y"}) {
		t.Error("resources with different IDs are equal")
	}
	if (generate.Resource{ID: "x"}).Equal(generate.Resource{ID: "x", Workload: true}) {
		t.Error("a workload equals a resource that is not")
	}
}
