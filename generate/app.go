package generate

// App is one application's configuration, Kusion's AppConfiguration: a
// workload and a set of accessories, each accessory being the developer's
// configuration of the module of its name. The translator's input holds
// one App per application.
type App struct {
	// Project, Stack and Name name the application in every Request.
	Project string `json:"project,omitempty"`
	Stack   string `json:"stack,omitempty"`
	Name    string `json:"name"`

	// Workspace names the entry of the translator's workspaces that holds
	// the platform and runtime configuration for this application. Empty:
	// none, and the generators get no platform or runtime configuration.
	// An application naming a workspace that does not exist fails
	// (ErrUnknownWorkspace) until the workspace appears.
	Workspace string `json:"workspace,omitempty"`

	// Workload is the configuration of the workload generator.
	Workload Config `json:"workload"`

	// Accessories holds the configuration of every other module the
	// application uses, by module name; each module needs a generator
	// (WithGenerator).
	Accessories map[string]Config `json:"accessories,omitempty"`
}

// Workspace is what the platform configures for the applications that
// name it: Kusion's workspace.
type Workspace struct {
	// Modules holds the platform configuration of each module, by module
	// name (WorkloadModule for the workload generator). A generator
	// receives its entry as Request.PlatformConfig.
	Modules map[string]Config `json:"modules,omitempty"`

	// Runtime is the runtime configuration (Kusion's runtimes: where and
	// how resources are applied), given to every generator as
	// Request.RuntimeConfig.
	Runtime Config `json:"runtime,omitempty"`
}
