package main

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/provider/file"
)

// The documents appconfig reads. Their specs are typed down to the
// workload, so that a misspelt field there is reported by the file provider
// with its file and document; accessories are free-form, and each module's
// generator decodes its own strictly.
type (
	// AppConfiguration is what an application's developer writes.
	AppConfiguration = file.Object[AppSpec]
	// WorkspaceConfiguration is what the platform writes, once per
	// workspace.
	WorkspaceConfiguration = file.Object[WorkspaceSpec]
)

// AppSpec is an application: its workload, and its accessories by module
// name (mysql, prometheus).
type AppSpec struct {
	// Workspace names the Workspace document that configures the modules
	// for this application; "default" when empty. It is also the
	// application's stack.
	Workspace   string                     `json:"workspace,omitempty"`
	Workload    Workload                   `json:"workload"`
	Accessories map[string]generate.Config `json:"accessories,omitempty"`
}

// Workload is what the workload generator turns into a Deployment, and into
// a Service when it has ports.
type Workload struct {
	Replicas   *int                 `json:"replicas,omitempty"`
	Containers map[string]Container `json:"containers"`
	Ports      []Port               `json:"ports,omitempty"`
}

// Container is one container of the workload, by name.
type Container struct {
	Image   string            `json:"image"`
	Command []string          `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Port is a port the workload's Service exposes.
type Port struct {
	Port       int    `json:"port"`
	TargetPort int    `json:"targetPort,omitempty"` // Port when zero
	Protocol   string `json:"protocol,omitempty"`   // TCP when empty
}

// WorkspaceSpec is the platform's configuration of each module, and the
// runtime configuration.
type WorkspaceSpec struct {
	Modules  map[string]generate.Config `json:"modules,omitempty"`
	Runtimes generate.Config            `json:"runtimes,omitempty"`
}

// defaultWorkspace is the workspace of applications that name none.
const defaultWorkspace = "default"

// namespace is the Kubernetes namespace of an application's resources: its
// document's, or "default". It is also the application's project.
func namespace(app types.NamespacedName) string {
	if app.Namespace == "" {
		return "default"
	}
	return app.Namespace
}

// toApp makes the generators' input from an AppConfiguration document.
func toApp(_ context.Context, key types.NamespacedName, doc AppConfiguration) (map[types.NamespacedName]generate.App, error) {
	workload, err := toConfig(doc.Spec.Workload)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	ws := doc.Spec.Workspace
	if ws == "" {
		ws = defaultWorkspace
	}
	return map[types.NamespacedName]generate.App{key: {
		Project:     namespace(key),
		Stack:       ws,
		Name:        key.Name,
		Workspace:   ws,
		Workload:    workload,
		Accessories: doc.Spec.Accessories,
	}}, nil
}

// toWorkspace makes the generators' input from a Workspace document, keyed
// by its name: workspaces have no namespace.
func toWorkspace(_ context.Context, key types.NamespacedName, doc WorkspaceConfiguration) (map[string]generate.Workspace, error) {
	return map[string]generate.Workspace{key.Name: {Modules: doc.Spec.Modules, Runtime: doc.Spec.Runtimes}}, nil
}

// toConfig turns a typed configuration into a generate.Config, through
// JSON.
func toConfig(v any) (generate.Config, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var c generate.Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	return c, nil
}
