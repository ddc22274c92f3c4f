package generate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// goodApp is the configuration every application of the failure tests has
// before it breaks and after it is fixed.
const goodApp = `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {resources: [{object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}}], patchers: [{labels: {from: a}}]}`

// TestFailureKeepsLastOutput checks that an application that fails keeps
// its last published resources, that the failure is reported naming what
// failed, and that fixing it publishes again and clears the report.
func TestFailureKeepsLastOutput(t *testing.T) {
	tests := []struct {
		name string
		app  string // the broken App, as YAML
		is   error  // what the failure wraps
		text string // what its text contains
	}{{
		name: "an accessory's generator fails",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {fail: database unreachable}`,
		text: `generator "a": database unreachable`,
	}, {
		name: "an accessory's generator panics",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {panic: out of range}`,
		is:   translator.ErrPanicked,
		text: `generator "a": out of range`,
	}, {
		name: "the workload generator fails",
		app: `
workspace: ws
workload: {fail: no image}`,
		text: `generator "workload": no image`,
	}, {
		name: "a generator rejects its configuration",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {resourcez: []}`,
		text: `generator "a": decode configuration: json: unknown field "resourcez"`,
	}, {
		name: "an accessory without a generator",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  z: {}`,
		is:   generate.ErrUnknownModule,
		text: `accessory "z"`,
	}, {
		name: "an unknown workspace",
		app: `
workspace: nowhere
workload: {containers: [{name: web}]}`,
		is:   generate.ErrUnknownWorkspace,
		text: `"nowhere"`,
	}, {
		name: "a resource without an ID",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {resources: [{object: {kind: ConfigMap}}]}`,
		is:   generate.ErrInvalidResource,
		text: `generator "a"`,
	}, {
		name: "an accessory marking the workload",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {resources: [{workload: true, object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}}]}`,
		is:   generate.ErrInvalidResource,
		text: `generator "a"`,
	}, {
		name: "two resources and no workload marked",
		app: `
workspace: ws
workload:
  containers: [{name: web}]
  resources: [{workload: true, object: {apiVersion: v1, kind: Service, metadata: {name: web}}}]`,
		is:   generate.ErrNoWorkload,
		text: `generator "workload"`,
	}, {
		name: "environment variables for a workload without containers",
		app: `
workspace: ws
workload: {}
accessories:
  a: {patchers: [{environments: [{name: X, value: x}]}]}`,
		is:   generate.ErrPatch,
		text: `generator "a": patcher 0`,
	}, {
		name: "a patch that renames the workload",
		app: `
workspace: ws
workload: {containers: [{name: web}]}
accessories:
  a: {patchers: [{mergePatch: {metadata: {name: other}}}]}`,
		is:   generate.ErrPatch,
		text: `generator "a"`,
	}}

	f := newFixture(t)
	f.workspaces.Store("ws", generate.Workspace{})
	f.start(t)
	name := func(i int) string { return fmt.Sprint("app", i) }
	want := func(i int) map[string]string {
		return map[string]string{
			"apps/v1:Deployment:" + name(i): fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: %s, labels: {app: %[1]s, from: a}}, spec: {template: {spec: {containers: [{name: web}]}}}}`, name(i)),
			"v1:ConfigMap:a":                `{apiVersion: v1, kind: ConfigMap, metadata: {name: a}}`,
		}
	}
	store := func(broken bool) {
		f.apps.Batch(func(b *watchable.Batch[string, generate.App]) {
			for i, tt := range tests {
				a := app(t, goodApp)
				if broken {
					a = app(t, tt.app)
				}
				a.Name = name(i)
				b.Store(a.Name, a)
			}
		})
	}

	store(false)
	var names []string
	for i := range tests {
		names = append(names, name(i))
		f.waitResources(t, name(i), want(i))
	}
	store(true)
	failures := f.waitFailures(t, names...)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := failures[name(i)]
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("failure %q does not wrap %q", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("failure %q does not contain %q", err, tt.text)
			}
			f.waitResources(t, name(i), want(i)) // still there
		})
	}
	// The report lists the failures, the first few by text.
	waitProblem(t, f.group, "gen", "translator gen", "translator gen: key app0: ")

	store(false)
	waitProblem(t, f.group, "gen", "translator gen")
	for i := range tests {
		f.waitResources(t, name(i), want(i))
	}
}

// TestDeletion checks that resources no longer produced are deleted, with
// the rest of their application's change.
func TestDeletion(t *testing.T) {
	const before = `
workload: {containers: [{name: web}]}
accessories:
  a: {resources: [{object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a1}}}, {object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a2}}}], patchers: [{labels: {from: a}}]}
  b: {resources: [{object: {apiVersion: v1, kind: Secret, metadata: {name: b}}}]}`
	deployment := func(labels string) string {
		return fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: app, labels: {%s}}, spec: {template: {spec: {containers: [{name: web}]}}}}`, labels)
	}
	tests := []struct {
		name  string
		after string // the App after the change, as YAML; "" deletes it
		want  map[string]string
	}{{
		name: "a generator stops producing a resource",
		after: `
workload: {containers: [{name: web}]}
accessories:
  a: {resources: [{object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a2}}}], patchers: [{labels: {from: a}}]}
  b: {resources: [{object: {apiVersion: v1, kind: Secret, metadata: {name: b}}}]}`,
		want: map[string]string{
			"apps/v1:Deployment:app": deployment("app: app, from: a"),
			"v1:ConfigMap:a2":        `{apiVersion: v1, kind: ConfigMap, metadata: {name: a2}}`,
			"v1:Secret:b":            `{apiVersion: v1, kind: Secret, metadata: {name: b}}`,
		},
	}, {
		name: "an accessory is removed, with its resources and patches",
		after: `
workload: {containers: [{name: web}]}
accessories:
  b: {resources: [{object: {apiVersion: v1, kind: Secret, metadata: {name: b}}}]}`,
		want: map[string]string{
			"apps/v1:Deployment:app": deployment("app: app"),
			"v1:Secret:b":            `{apiVersion: v1, kind: Secret, metadata: {name: b}}`,
		},
	}, {
		name: "the application is deleted",
		want: map[string]string{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.start(t)
			a := app(t, before)
			a.Name = "app"
			f.apps.Store("app", a)
			f.waitResources(t, "app", map[string]string{
				"apps/v1:Deployment:app": deployment("app: app, from: a"),
				"v1:ConfigMap:a1":        `{apiVersion: v1, kind: ConfigMap, metadata: {name: a1}}`,
				"v1:ConfigMap:a2":        `{apiVersion: v1, kind: ConfigMap, metadata: {name: a2}}`,
				"v1:Secret:b":            `{apiVersion: v1, kind: Secret, metadata: {name: b}}`,
			})

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sub := f.gen.Output().Subscribe(ctx)
			prev := receive(t, sub)
			if tt.after == "" {
				f.apps.Delete("app")
			} else {
				a := app(t, tt.after)
				a.Name = "app"
				f.apps.Store("app", a)
			}
			f.waitResources(t, "app", tt.want)
			// The whole change was one write to the output.
			next := receive(t, sub)
			if next.Revision != prev.Revision+1 {
				t.Errorf("the change took the output from revision %d to %d, want one batch", prev.Revision, next.Revision)
			}
		})
	}
}

// TestRegeneratesOnlyWhatChanged counts the generators that run after each
// change.
func TestRegeneratesOnlyWhatChanged(t *testing.T) {
	f := newFixture(t)
	f.workspaces.Store("ws", generate.Workspace{
		Modules: map[string]generate.Config{"a": {"size": 1}, "b": {"size": 1}, "unused": {"size": 1}},
		Runtime: generate.Config{"cluster": "one"},
	})
	f.workspaces.Store("other", generate.Workspace{})
	apps := map[string]string{
		"uses-a":   `{workspace: ws, workload: {containers: [{name: web}]}, accessories: {a: {}}}`,
		"uses-ab":  `{workspace: ws, workload: {containers: [{name: web}]}, accessories: {a: {}, b: {}}}`,
		"uses-b":   `{workspace: ws, workload: {containers: [{name: web}]}, accessories: {b: {}}}`,
		"other-ws": `{workspace: other, workload: {containers: [{name: web}]}, accessories: {a: {}}}`,
		"no-ws":    `{workload: {containers: [{name: web}]}}`,
	}
	for name, y := range apps {
		a := app(t, y)
		a.Name = name
		f.apps.Store(name, a)
	}
	f.start(t)
	if diff := cmp.Diff(map[string]int{
		"uses-a/workload": 1, "uses-a/a": 1,
		"uses-ab/workload": 1, "uses-ab/a": 1, "uses-ab/b": 1,
		"uses-b/workload": 1, "uses-b/b": 1,
		"other-ws/workload": 1, "other-ws/a": 1,
		"no-ws/workload": 1,
	}, f.calls.take()); diff != "" {
		t.Errorf("generators run by the first generation (-want +got):\n%s", diff)
	}

	// changed applies a change, then one that only the application
	// "marker" sees, and waits for the marker: the join handles changes in
	// order, so the first change has been handled by then.
	marker := 0
	changed := func(change func()) map[string]int {
		t.Helper()
		change()
		marker++
		f.apps.Store("marker", generate.App{Name: "marker", Workload: generate.Config{"replicas": marker}})
		f.waitResources(t, "marker", map[string]string{
			"apps/v1:Deployment:marker": fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: marker, labels: {app: marker}}, spec: {replicas: %d, template: {spec: {containers: null}}}}`, marker),
		})
		calls := f.calls.take()
		delete(calls, "marker/workload")
		if len(calls) == 0 {
			return nil
		}
		return calls
	}
	tests := []struct {
		name   string
		change func()
		want   map[string]int
	}{{
		name: "one application",
		change: func() {
			a := app(t, `{workspace: ws, workload: {containers: [{name: web2}]}, accessories: {a: {}, b: {}}}`)
			a.Name = "uses-ab"
			f.apps.Store("uses-ab", a)
		},
		want: map[string]int{"uses-ab/workload": 1, "uses-ab/a": 1, "uses-ab/b": 1},
	}, {
		name: "an application stored again unchanged",
		change: func() {
			a := app(t, apps["uses-a"])
			a.Name = "uses-a"
			f.apps.Store("uses-a", a)
		},
		want: nil,
	}, {
		name: "the platform configuration of one module",
		change: func() {
			f.workspaces.Store("ws", generate.Workspace{
				Modules: map[string]generate.Config{"a": {"size": 1}, "b": {"size": 2}, "unused": {"size": 1}},
				Runtime: generate.Config{"cluster": "one"},
			})
		},
		want: map[string]int{"uses-ab/workload": 1, "uses-ab/a": 1, "uses-ab/b": 1, "uses-b/workload": 1, "uses-b/b": 1},
	}, {
		name: "the platform configuration of a module nobody uses",
		change: func() {
			f.workspaces.Store("ws", generate.Workspace{
				Modules: map[string]generate.Config{"a": {"size": 1}, "b": {"size": 2}, "unused": {"size": 2}},
				Runtime: generate.Config{"cluster": "one"},
			})
		},
		want: nil,
	}, {
		name: "the runtime configuration",
		change: func() {
			f.workspaces.Store("ws", generate.Workspace{
				Modules: map[string]generate.Config{"a": {"size": 1}, "b": {"size": 2}, "unused": {"size": 2}},
				Runtime: generate.Config{"cluster": "two"},
			})
		},
		want: map[string]int{
			"uses-a/workload": 1, "uses-a/a": 1,
			"uses-ab/workload": 1, "uses-ab/a": 1, "uses-ab/b": 1,
			"uses-b/workload": 1, "uses-b/b": 1,
		},
	}, {
		name: "an application moved to another workspace",
		change: func() {
			a := app(t, `{workspace: other, workload: {containers: [{name: web}]}, accessories: {a: {}}}`)
			a.Name = "uses-a"
			f.apps.Store("uses-a", a)
		},
		want: map[string]int{"uses-a/workload": 1, "uses-a/a": 1},
	}, {
		name: "its former workspace",
		change: func() {
			f.workspaces.Store("ws", generate.Workspace{
				Modules: map[string]generate.Config{"a": {"size": 3}, "b": {"size": 2}, "unused": {"size": 2}},
				Runtime: generate.Config{"cluster": "two"},
			})
		},
		want: map[string]int{"uses-ab/workload": 1, "uses-ab/a": 1, "uses-ab/b": 1},
	}, {
		name: "its new workspace",
		change: func() {
			f.workspaces.Store("other", generate.Workspace{Runtime: generate.Config{"cluster": "three"}})
		},
		want: map[string]int{"uses-a/workload": 1, "uses-a/a": 1, "other-ws/workload": 1, "other-ws/a": 1},
	}, {
		name: "a workspace deleted",
		change: func() {
			f.workspaces.Delete("other")
		},
		want: nil, // both fail before any generator runs
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, changed(tt.change)); diff != "" {
				t.Errorf("generators run (-want +got):\n%s", diff)
			}
		})
	}
	f.waitFailures(t, "uses-a", "other-ws")
}
