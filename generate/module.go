package generate

import "context"

// WorkloadModule is the module name of the workload generator: the name it
// is reported under, and the key of its platform configuration in a
// Workspace's Modules. No accessory may use it.
const WorkloadModule = "workload"

// Generator turns one module's part of one application's configuration into
// resources, and into patchers for the application's workload. It is the
// in-process form of a Kusion module: Request and Response mirror Kusion's
// GeneratorRequest and GeneratorResponse field for field, as plain Go
// structs that encode to JSON, so that a client of an out-of-process plugin
// can implement Generator.
//
// Generate must be a pure function of its request: the translator calls it
// again only when the request would change, and relies on equal requests
// giving equal responses (no random passwords, no clocks). The
// configurations in req are the generator's own copies, to keep or change;
// the objects of req.WorkloadResources are shared with the translator and
// the other generators, and MUST NOT be changed. The Response, and what it
// reaches, belongs to the translator once returned: the generator must not
// change it afterwards. Generate runs on the translator's goroutine, one
// call at a time, with Run's context. An error, or a panic, fails the whole
// application: its last good resources stay published, and the failure is
// reported naming the module.
type Generator interface {
	Generate(ctx context.Context, req Request) (Response, error)
}

// GeneratorFunc adapts a function to Generator.
type GeneratorFunc func(ctx context.Context, req Request) (Response, error)

// Generate calls f.
func (f GeneratorFunc) Generate(ctx context.Context, req Request) (Response, error) {
	return f(ctx, req)
}

// Request is what a generator is given: Kusion's GeneratorRequest.
type Request struct {
	// Project, Stack and App name the application (see App).
	Project string `json:"project,omitempty"`
	Stack   string `json:"stack,omitempty"`
	App     string `json:"app"`

	// Workload is the application's workload configuration, as the
	// developer wrote it (App.Workload).
	Workload Config `json:"workload,omitempty"`

	// DevConfig is the developer's configuration of this module: the
	// application's accessory of the module's name, and for the workload
	// generator the workload configuration again. Kusion calls it
	// dev_module_config.
	DevConfig Config `json:"devConfig,omitempty"`

	// PlatformConfig is the platform's configuration of this module: the
	// entry of the module's name in the workspace's Modules, or nil.
	// Kusion calls it platform_module_config.
	PlatformConfig Config `json:"platformConfig,omitempty"`

	// RuntimeConfig is the workspace's runtime configuration
	// (Workspace.Runtime).
	RuntimeConfig Config `json:"runtimeConfig,omitempty"`

	// WorkloadResources are the resources the workload generator produced
	// for this application, before any patch: the workload generator runs
	// first so that the others can refer to what it made (a monitor
	// selecting the workload's Service, say). Nil for the workload
	// generator itself. Kusion has no such field.
	WorkloadResources []Resource `json:"workloadResources,omitempty"`
}

// Response is what a generator returns: Kusion's GeneratorResponse.
type Response struct {
	// Resources are the resources the module produces for the application.
	// Their IDs are unique within the application (see Resource.ID);
	// two generators producing the same ID with different contents is a
	// conflict.
	Resources []Resource `json:"resources,omitempty"`

	// Patchers change the application's workload; see Patcher for what
	// they can change and in which order they apply.
	Patchers []Patcher `json:"patchers,omitempty"`
}
