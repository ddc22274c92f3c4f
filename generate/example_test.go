package generate_test

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/switchyard-go/switchyard/generate"
	"github.com/switchyard-go/switchyard/watchable"
)

func Example() {
	// The workload generator makes a Deployment from the developer's
	// image and the platform's replica count.
	workload := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		var dev struct {
			Image string `json:"image"`
		}
		var platform struct {
			Replicas int `json:"replicas"`
		}
		if err := req.Workload.Decode(&dev); err != nil {
			return generate.Response{}, err
		}
		if err := req.PlatformConfig.Decode(&platform); err != nil {
			return generate.Response{}, err
		}
		return generate.Response{Resources: []generate.Resource{{Object: map[string]any{
			"apiVersion": "apps/v1",
			"kind":       "Deployment",
			"metadata":   map[string]any{"name": req.App},
			"spec": map[string]any{
				"replicas": platform.Replicas,
				"template": map[string]any{"spec": map[string]any{
					"containers": []any{map[string]any{"name": req.App, "image": dev.Image}},
				}},
			},
		}}}}, nil
	})
	// The cache module makes a ConfigMap, and tells the workload where the
	// cache is rather than editing it.
	cache := generate.GeneratorFunc(func(_ context.Context, req generate.Request) (generate.Response, error) {
		name := req.App + "-cache"
		return generate.Response{
			Resources: []generate.Resource{{Object: map[string]any{
				"apiVersion": "v1",
				"kind":       "ConfigMap",
				"metadata":   map[string]any{"name": name},
				"data":       map[string]any{"size": req.DevConfig["size"]},
			}}},
			Patchers: []generate.Patcher{{
				Environments: []generate.EnvVar{{Name: "CACHE", Value: name}},
				PodLabels:    map[string]string{"cache": "on"},
			}},
		}, nil
	})

	apps := new(watchable.Map[string, generate.App])
	workspaces := new(watchable.Map[string, generate.Workspace])
	workspaces.Store("prod", generate.Workspace{Modules: map[string]generate.Config{
		generate.WorkloadModule: {"replicas": 3},
	}})
	apps.Store("shop/web", generate.App{
		Name:        "web",
		Workspace:   "prod",
		Workload:    generate.Config{"image": "web:1.4"},
		Accessories: map[string]generate.Config{"cache": {"size": "64Mi"}},
	})

	g := generate.New("resources", apps.View(), workspaces.View(), workload,
		generate.WithGenerator("cache", cache))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- g.Run(ctx) }()
	<-g.Ready()

	show := func(s watchable.State[generate.Key[string], generate.Resource]) {
		keys := slices.SortedFunc(s.Keys(), func(a, b generate.Key[string]) int { return strings.Compare(a.String(), b.String()) })
		for _, k := range keys {
			r, _ := s.Get(k)
			y, _ := yaml.Marshal(r.Object)
			fmt.Printf("# %s (workload: %v)\n%s", k, r.Workload, y)
		}
	}
	show(g.Output().State())

	// Without the accessory, its ConfigMap is deleted and the workload
	// loses its patches, in one batch.
	sub := g.Output().Subscribe(ctx)
	<-sub
	apps.Store("shop/web", generate.App{Name: "web", Workspace: "prod", Workload: generate.Config{"image": "web:1.4"}})
	snap := <-sub
	fmt.Println("---")
	show(snap.State)

	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// # shop/web apps/v1:Deployment:web (workload: true)
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   name: web
	// spec:
	//   replicas: 3
	//   template:
	//     metadata:
	//       labels:
	//         cache: "on"
	//     spec:
	//       containers:
	//       - env:
	//         - name: CACHE
	//           value: web-cache
	//         image: web:1.4
	//         name: web
	// # shop/web v1:ConfigMap:web-cache (workload: false)
	// apiVersion: v1
	// data:
	//   size: 64Mi
	// kind: ConfigMap
	// metadata:
	//   name: web-cache
	// ---
	// # shop/web apps/v1:Deployment:web (workload: true)
	// apiVersion: apps/v1
	// kind: Deployment
	// metadata:
	//   name: web
	// spec:
	//   replicas: 3
	//   template:
	//     spec:
	//       containers:
	//       - image: web:1.4
	//         name: web
	// Run returned <nil>
}

func ExampleObjectID() {
	fmt.Println(generate.ObjectID(map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"namespace": "shop", "name": "web"},
	}))
	fmt.Println(generate.ObjectID(map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "shop"},
	}))
	fmt.Printf("%q\n", generate.ObjectID(map[string]any{"kind": "ConfigMap"}))
	// Output:
	// apps/v1:Deployment:shop:web
	// v1:Namespace:shop
	// ""
}
