// Package generate turns application configurations into resources the way
// Kusion's modules do, as a translator: each application names a workload
// and a set of accessories (a database, monitoring, a module of your own);
// a generator per module turns its part of the configuration, with the
// platform's configuration of the module, into resources; and modules that
// must change the workload (its environment variables, labels, annotations,
// or any other field) return patchers rather than editing it. The
// translator owns the rest: it runs the workload generator first and the
// others in a fixed order, applies their patches, reports conflicts naming
// both generators, keeps an application's last good resources when anything
// about it fails, generates again only the applications whose inputs
// changed, and publishes each application's resources together, deleting
// those no longer produced.
//
// The inputs are two maps: the applications (App, keyed by anything, such
// as the namespace and name of the file provider's documents) and the
// workspaces (Workspace, keyed by name), which hold the platform
// configuration per module and the runtime configuration. A Generator
// receives a Request and returns a Response, plain Go structs that mirror
// Kusion's GeneratorRequest and GeneratorResponse, so that a plugin in
// another process could stand behind one; the generators here run in
// process, registered by module name:
//
//	g := generate.New("resources", apps, workspaces, workloadGenerator,
//		generate.WithGenerator("mysql", mysqlGenerator),
//		generate.WithGenerator("prometheus", prometheusGenerator))
//	// run g, for example in a runner group; g.Output() holds the resources
//
// The output holds one entry per resource, keyed by the application's key
// and the resource's ID, with unstructured Kubernetes-shaped objects that
// encode to YAML or JSON as they are. A consumer that wants an application's
// resources together groups them (translator.GroupBy on Key.App).
//
// # Order and conflicts
//
// For each application the workload generator runs first, and its
// resources are given to the others (Request.WorkloadResources); the other
// generators run in the order of their module names. Patches apply to the
// workload in the same order: the workload generator's own patchers, then
// each accessory's, each generator's patchers in the order it returned
// them, and within a Patcher its labels, annotations, pod labels, pod
// annotations, environment variables, and last its JSON merge patch.
//
// The order matters only where it shows: environment variables appended to
// a container come in that order, and a generator's later patcher wins over
// its own earlier one. Between generators, order never decides a value:
// two generators that set the same key (a label, an environment variable,
// a field of a merge patch, or a resource ID) to different values conflict,
// and so do two where one replaces or deletes a field that the other sets
// something within. The application then fails with a *ConflictError
// naming both generators, and keeps its last good resources. Patches do
// override what the workload generator itself put in the workload: the
// workload is the base the others contribute to.
//
// # Failures
//
// A generator that returns an error or panics, an invalid response, an
// unknown accessory or workspace, a patch that cannot apply, or a conflict,
// fails the application as a whole: its last published resources stay, and
// the failure is reported through runner.HealthOf (under "translator " and
// the translator's name), logged, and passed to WithErrorHandler, until
// the application generates again. Other applications are not affected.
//
// The docs/generators.md page of the repository walks through the same
// rules with an example.
package generate
