package generate_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/watchable"
)

// benchApps is how many applications the benchmarks generate.
const benchApps = 1000

// benchGenerators are a workload generator (a Deployment and a Service) and
// two accessories (a Secret with environment variables for the workload; a
// monitor with annotations for its pods), counting their calls.
func benchGenerators(calls *atomic.Int64) (generate.Generator, []generate.Option) {
	workload := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		calls.Add(1)
		labels := map[string]any{"app.kubernetes.io/name": req.App}
		return generate.Response{Resources: []generate.Resource{{Workload: true, Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": req.App, "namespace": "bench", "labels": labels},
			"spec": map[string]any{
				"replicas": 2,
				"selector": map[string]any{"matchLabels": labels},
				"template": map[string]any{
					"metadata": map[string]any{"labels": labels},
					"spec": map[string]any{"containers": []any{map[string]any{
						"name": req.App, "image": req.Workload["image"],
						"ports": []any{map[string]any{"containerPort": 8080}},
					}}},
				},
			},
		}}, {Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": req.App, "namespace": "bench", "labels": labels},
			"spec":     map[string]any{"selector": labels, "ports": []any{map[string]any{"name": "http", "port": 80, "targetPort": 8080}}},
		}}}}, nil
	})
	db := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		calls.Add(1)
		name := req.App + "-db"
		ref := func(key string) map[string]any {
			return map[string]any{"secretKeyRef": map[string]any{"name": name, "key": key}}
		}
		return generate.Response{
			Resources: []generate.Resource{{Object: map[string]any{
				"apiVersion": "v1", "kind": "Secret",
				"metadata":   map[string]any{"name": name, "namespace": "bench"},
				"stringData": map[string]any{"host": req.PlatformConfig["host"], "database": req.App},
			}}},
			Patchers: []generate.Patcher{{Environments: []generate.EnvVar{
				{Name: "DB_HOST", ValueFrom: ref("host")}, {Name: "DB_NAME", ValueFrom: ref("database")},
			}}},
		}, nil
	})
	metrics := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		calls.Add(1)
		return generate.Response{
			Resources: []generate.Resource{{Object: map[string]any{
				"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
				"metadata": map[string]any{"name": req.App, "namespace": "bench"},
				"spec": map[string]any{
					"selector":  map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": req.App}},
					"endpoints": []any{map[string]any{"port": "http", "path": "/metrics"}},
				},
			}}},
			Patchers: []generate.Patcher{{PodAnnotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080"}}},
		}, nil
	})
	return workload, []generate.Option{
		generate.WithLogger(quiet),
		generate.WithGenerator("db", db),
		generate.WithGenerator("metrics", metrics),
	}
}

func benchApp(i int, image string) generate.App {
	return generate.App{
		Name:        fmt.Sprint("app", i),
		Workspace:   "prod",
		Workload:    generate.Config{"image": image},
		Accessories: map[string]generate.Config{"db": {}, "metrics": {}},
	}
}

func benchInputs() (*watchable.Map[string, generate.App], *watchable.Map[string, generate.Workspace]) {
	apps := new(watchable.Map[string, generate.App])
	workspaces := new(watchable.Map[string, generate.Workspace])
	workspaces.Store("prod", generate.Workspace{Modules: map[string]generate.Config{"db": {"host": "mysql.prod"}}})
	apps.Batch(func(b *watchable.Batch[string, generate.App]) {
		for i := range benchApps {
			b.Store(fmt.Sprint("app", i), benchApp(i, "web:1"))
		}
	})
	return apps, workspaces
}

// BenchmarkRegenerateOne measures the time from a change to one of 1,000
// applications to its regenerated resources in the output, and reports how
// many generators ran for it.
func BenchmarkRegenerateOne(b *testing.B) {
	var calls atomic.Int64
	apps, workspaces := benchInputs()
	workload, opts := benchGenerators(&calls)
	g := generate.New("bench", apps.View(), workspaces.View(), workload, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Run(ctx) }()
	defer func() { cancel(); <-done }()
	<-g.Ready()
	sub := g.Output().Subscribe(ctx)
	<-sub

	calls.Store(0)
	b.ResetTimer()
	for i := range b.N {
		n := i % benchApps
		image := fmt.Sprint("web:", i+2)
		want := generate.Key[string]{App: fmt.Sprint("app", n), ID: fmt.Sprintf("apps/v1:Deployment:bench:app%d", n)}
		apps.Store(want.App, benchApp(n, image))
	wait:
		for snap := range sub {
			for _, u := range snap.Updates {
				if u.Key == want && imageOf(u.Value) == image {
					break wait
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(calls.Load())/float64(b.N), "generators/op")
}

func imageOf(r generate.Resource) string {
	spec, _ := r.Object["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	cs, _ := pod["containers"].([]any)
	if len(cs) == 0 {
		return ""
	}
	c, _ := cs[0].(map[string]any)
	image, _ := c["image"].(string)
	return image
}

// BenchmarkGenerateAll measures generating 1,000 applications from
// scratch, until the output is ready.
func BenchmarkGenerateAll(b *testing.B) {
	var calls atomic.Int64
	apps, workspaces := benchInputs()
	workload, opts := benchGenerators(&calls)
	for range b.N {
		g := generate.New("bench", apps.View(), workspaces.View(), workload, opts...)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- g.Run(ctx) }()
		<-g.Ready()
		cancel()
		<-done
	}
	b.ReportMetric(float64(calls.Load())/float64(b.N), "generators/op")
}
