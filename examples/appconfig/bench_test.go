package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
)

// benchApps is how many applications the benchmark generates.
const benchApps = 1000

// benchApp is the configuration of application i: a web workload with a
// port, a MySQL database and Prometheus monitoring.
func benchApp(i int, image string) string {
	return fmt.Sprintf(`apiVersion: appconfig.switchyard.dev/v1
kind: AppConfiguration
metadata: {name: app%d, namespace: bench}
spec:
  workspace: prod
  workload:
    containers: {web: {image: %q, env: {LOG_LEVEL: info}}}
    ports: [{port: 80, targetPort: 8080}]
  accessories:
    mysql: {}
    prometheus: {}
`, i, image)
}

// counting wraps generators to count their calls.
func counting(calls *atomic.Int64) func(string, generate.Generator) generate.Generator {
	return func(_ string, g generate.Generator) generate.Generator {
		return generate.GeneratorFunc(func(ctx context.Context, req generate.Request) (generate.Response, error) {
			calls.Add(1)
			return g.Generate(ctx, req)
		})
	}
}

// BenchmarkOneChanged measures, with 1,000 applications generated, the time
// from a change to one application to its output file rewritten, and
// reports how many generators ran and how many files were written for it.
//
// from=files: the application's document is edited in the input directory
// (one file per application), so the time includes the file provider
// noticing and reading it. from=maps: the document is stored in the
// provider's stead, into the map it would write. to=disk: until the output
// file is written (with an fsync: most of the time on a virtual disk).
// to=render: until the file's new content is rendered, in memory.
func BenchmarkOneChanged(b *testing.B) {
	b.Run("from=files", func(b *testing.B) {
		in, out := b.TempDir(), b.TempDir()
		ws := read(b, "testdata/in/workspaces.yaml")
		if err := os.WriteFile(filepath.Join(in, "workspaces.yaml"), []byte(ws), 0o644); err != nil {
			b.Fatal(err)
		}
		old := time.Now().Add(-time.Minute) // so that scans skip the files they have read
		for i := range benchApps {
			path := filepath.Join(in, fmt.Sprintf("app%d.yaml", i))
			if err := os.WriteFile(path, []byte(benchApp(i, "web:0")), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.Chtimes(path, old, old); err != nil {
				b.Fatal(err)
			}
		}
		var calls atomic.Int64
		p := newPipeline(options{in: in, out: out, log: quiet, debounce: time.Microsecond, wrap: counting(&calls)})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.run(ctx) }()
		defer func() { cancel(); <-done }()
		<-p.writer.Ready()

		measure(b, &calls, p.writer.Written(), func(i, n int) {
			editFile(b, filepath.Join(in, fmt.Sprintf("app%d.yaml", n)), benchApp(n, fmt.Sprint("web:", i+1)))
		})
	})

	for _, to := range []string{"disk", "render"} {
		b.Run("from=maps/to="+to, func(b *testing.B) {
			var configs watchable.Map[types.NamespacedName, AppConfiguration]
			var workspaces watchable.Map[types.NamespacedName, WorkspaceConfiguration]
			workspaces.Store(types.NamespacedName{Name: "prod"}, decode[WorkspaceConfiguration](b, strings.Split(read(b, "testdata/in/workspaces.yaml"), "---")[0]))
			configs.Batch(func(batch *watchable.Batch[types.NamespacedName, AppConfiguration]) {
				for i := range benchApps {
					batch.Store(types.NamespacedName{Namespace: "bench", Name: fmt.Sprint("app", i)}, decode[AppConfiguration](b, benchApp(i, "web:0")))
				}
			})
			var calls atomic.Int64
			wrap := counting(&calls)
			apps := translator.Derive("apps", configs.View(), toApp, translator.WithLogger(quiet))
			spaces := translator.Derive("workspaces", workspaces.View(), toWorkspace, translator.WithLogger(quiet))
			opts := []generate.Option{generate.WithLogger(quiet)}
			for m, g := range modules {
				opts = append(opts, generate.WithGenerator(m, wrap(m, g)))
			}
			resources := generate.New("generate", apps.Output(), spaces.Output(), wrap("workload", generate.GeneratorFunc(workloadGenerator)), opts...)
			files := translator.GroupBy("render", resources.Output(), byApp, render, translator.WithLogger(quiet))
			w := newWriter(b.TempDir(), files.Output(), quiet)
			runners := []interface{ Run(context.Context) error }{apps, spaces, resources, files}
			if to == "disk" {
				runners = append(runners, w)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			for _, r := range runners {
				done := make(chan struct{})
				go func() { defer close(done); r.Run(ctx) }()
				defer func() { cancel(); <-done }()
			}
			change := func(i, n int) {
				configs.Store(types.NamespacedName{Namespace: "bench", Name: fmt.Sprint("app", n)}, decode[AppConfiguration](b, benchApp(n, fmt.Sprint("web:", i+1))))
			}
			if to == "disk" {
				<-w.Ready()
				measure(b, &calls, w.Written(), change)
				return
			}
			<-files.Ready()
			measureRender(b, &calls, files.Output(), change)
		})
	}
}

// measureRender changes application i%1000 b.N times, and waits each time
// until its file's content has been rendered again.
func measureRender(b *testing.B, calls *atomic.Int64, files watchable.View[types.NamespacedName, string], change func(i, n int)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := files.Subscribe(ctx)
	<-sub
	calls.Store(0)
	renders := 0
	b.ResetTimer()
	for i := range b.N {
		n := i % benchApps
		app := types.NamespacedName{Namespace: "bench", Name: fmt.Sprint("app", n)}
		image := fmt.Sprintf("image: web:%d\n", i+1)
		change(i, n)
	wait:
		for snap := range sub {
			for _, u := range snap.Updates {
				renders++
				if u.Key == app && strings.Contains(u.Value, image) {
					break wait
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.Load())/float64(b.N), "generators/op")
	b.ReportMetric(float64(renders)/float64(b.N), "files/op")
}

// measure changes application i%1000 b.N times, and waits each time until
// its file has been written.
func measure(b *testing.B, calls *atomic.Int64, written watchable.View[string, int], change func(i, n int)) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := written.Subscribe(ctx)
	first := <-sub
	counts := first.State.Map()
	calls.Store(0)
	writes := 0
	b.ResetTimer()
	for i := range b.N {
		n := i % benchApps
		name := fmt.Sprintf("bench_app%d.yaml", n)
		want := counts[name] + 1
		change(i, n)
	wait:
		for snap := range sub {
			for _, u := range snap.Updates {
				writes++
				counts[u.Key] = u.Value
				if u.Key == name && u.Value >= want {
					break wait
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.Load())/float64(b.N), "generators/op")
	b.ReportMetric(float64(writes)/float64(b.N), "files/op")
}

func decode[T any](b *testing.B, y string) T {
	var v T
	if err := yaml.UnmarshalStrict([]byte(y), &v); err != nil {
		b.Fatal(err)
	}
	return v
}
