// Command appconfig turns application configurations into Kubernetes
// resources, the way Kusion's modules do: each application names a
// workload and accessories (a MySQL database, Prometheus monitoring), a
// generator per module turns its part into resources, and the accessories
// patch the workload (environment variables for the database, scrape
// annotations) rather than editing it. It writes one YAML file per
// application, and rewrites it whenever the application's inputs change.
//
//	go run ./examples/appconfig -in examples/appconfig/testdata/in -out generated
//	go run ./examples/appconfig -in examples/appconfig/testdata/in -out generated -once
//
// The input directory holds YAML documents of two kinds, in any files:
//
//	kind: AppConfiguration     # one per application
//	metadata: {name: web, namespace: shop}   # the namespace is the project
//	spec:
//	  workspace: prod          # the Workspace document to use; "default" by default
//	  workload:
//	    containers: {web: {image: shop/web:1.4, env: {LOG_LEVEL: info}}}
//	    ports: [{port: 80, targetPort: 8080}]
//	  accessories:
//	    mysql: {database: shop}
//	    prometheus: {path: /metrics}
//	---
//	kind: Workspace            # the platform's configuration of each module
//	metadata: {name: prod}
//	spec:
//	  modules:
//	    workload: {replicas: 2, labels: {team: shop}}
//	    mysql: {host: mysql.prod.svc}
//	    prometheus: {interval: 15s}
//
// The output directory gets one file per application, named
// <namespace>_<name>.yaml; the file of an application that is gone is
// removed, and files that appconfig did not generate are left alone. Files
// are written atomically (a temporary file renamed over
// the old one) and only when their content changes, so a tool watching the
// directory sees exactly the applications that changed.
//
// A broken configuration is reported (in the log, with its file and
// document, or with its application and module when a generator rejects
// it) and leaves its application's last good output in place; the others go
// on. With -once, appconfig generates everything, writes the files, and
// exits, with status 1 if anything was reported.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/provider/file"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "appconfig:", err)
		os.Exit(1)
	}
}

// errUsage is returned for bad flags, after the usage is printed.
var errUsage = errors.New("usage")

// options are what the flags say, and what tests set besides.
type options struct {
	in, out  string
	once     bool
	log      *slog.Logger
	debounce time.Duration // the file provider's; zero: its default

	// wrap, if set, wraps each generator, named by its module: benchmarks
	// count the calls.
	wrap func(module string, g generate.Generator) generate.Generator
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	flags := flag.NewFlagSet("appconfig", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var o options
	flags.StringVar(&o.in, "in", "", "the `directory` of AppConfiguration and Workspace documents")
	flags.StringVar(&o.out, "out", "", "the `directory` to write one YAML file per application into")
	flags.BoolVar(&o.once, "once", false, "generate once, write the files and exit")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	if o.in == "" || o.out == "" || flags.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: appconfig -in DIR -out DIR [-once]")
		flags.PrintDefaults()
		return errUsage
	}
	// A mistyped -in would read as no applications at all, and have
	// their files removed.
	if info, err := os.Stat(o.in); err != nil || !info.IsDir() {
		return fmt.Errorf("-in %s: not a directory", o.in)
	}
	if same(o.in, o.out) {
		return fmt.Errorf("-in and -out are the same directory, %s", o.in)
	}
	o.log = slog.New(slog.NewTextHandler(stderr, nil))
	return newPipeline(o).run(ctx)
}

// same reports whether two paths name the same directory.
func same(a, b string) bool {
	ia, errA := os.Stat(a)
	ib, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(ia, ib)
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// pipeline is appconfig's runners, wired through their maps:
//
//	files in -in ─ provider ─┬─ AppConfiguration ─ apps ───────┬─ generate ─ render ─ writer ─ files in -out
//	                         └─ Workspace ──────── workspaces ─┘
type pipeline struct {
	o         options
	provider  *file.Provider
	apps      *translator.Derivation[types.NamespacedName, AppConfiguration, types.NamespacedName, generate.App]
	spaces    *translator.Derivation[types.NamespacedName, WorkspaceConfiguration, string, generate.Workspace]
	resources *generate.Generation[types.NamespacedName]
	files     *translator.Grouping[generate.Key[types.NamespacedName], generate.Resource, types.NamespacedName, string]
	writer    *writer
	group     *runner.Group
}

// modules are the built-in generators of accessories, by module name.
var modules = map[string]generate.Generator{
	"mysql":      generate.GeneratorFunc(mysqlGenerator),
	"prometheus": generate.GeneratorFunc(prometheusGenerator),
}

func newPipeline(o options) *pipeline {
	p := &pipeline{o: o, group: runner.NewGroup(runner.WithLogger(o.log))}
	popts := []file.Option{file.WithName("config"), file.WithLogger(o.log)}
	if o.once {
		p.provider = file.NewFS(os.DirFS(o.in), ".", popts...)
	} else {
		if o.debounce > 0 {
			popts = append(popts, file.WithDebounce(o.debounce))
		}
		p.provider = file.New(o.in, popts...)
	}
	configs := file.Register[AppConfiguration](p.provider, "AppConfiguration")
	workspaces := file.Register[WorkspaceConfiguration](p.provider, "Workspace")

	p.apps = translator.Derive("apps", configs, toApp, translator.WithLogger(o.log))
	p.spaces = translator.Derive("workspaces", workspaces, toWorkspace, translator.WithLogger(o.log))
	wrap := o.wrap
	if wrap == nil {
		wrap = func(_ string, g generate.Generator) generate.Generator { return g }
	}
	gopts := []generate.Option{generate.WithLogger(o.log)}
	for _, m := range slices.Sorted(maps.Keys(modules)) {
		gopts = append(gopts, generate.WithGenerator(m, wrap(m, modules[m])))
	}
	workload := wrap(generate.WorkloadModule, generate.GeneratorFunc(workloadGenerator))
	p.resources = generate.New("generate", p.apps.Output(), p.spaces.Output(), workload, gopts...)
	p.files = translator.GroupBy("render", p.resources.Output(), byApp, render, translator.WithLogger(o.log))
	p.writer = newWriter(o.out, p.files.Output(), o.log)
	return p
}

func (p *pipeline) runners() []runner.Runner {
	return []runner.Runner{p.provider, p.apps, p.spaces, p.resources, p.files, p.writer}
}

// run runs the pipeline until ctx is done or, with -once, until the files
// are written; then, with -once, it returns the problems reported, if any.
func (p *pipeline) run(ctx context.Context) error {
	if p.o.once {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-p.writer.Ready():
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	if err := p.group.Run(ctx, p.runners()...); err != nil {
		return err
	}
	if !p.o.once {
		return nil
	}
	select {
	case <-p.writer.Ready():
	default:
		return ctx.Err() // interrupted before the files were written
	}
	return problems(p.group)
}

// problems returns an error listing the problems the runners of g have
// reported and not cleared, or nil.
func problems(g *runner.Group) error {
	var list []string
	more := 0
	for name, st := range g.Status().State().All() {
		for key, problem := range st.Problems {
			list = append(list, fmt.Sprintf("%s: %s: %s", name, key, problem))
		}
		more += st.MoreProblems
	}
	if len(list) == 0 {
		return nil
	}
	slices.Sort(list)
	count := len(list) + more
	if more > 0 {
		list = append(list, fmt.Sprintf("(and %d more)", more))
	}
	return fmt.Errorf("%d problems:\n%s", count, strings.Join(list, "\n"))
}
