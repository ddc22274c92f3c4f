package file_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing/fstest"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/provider/file"
)

func Example() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "backends.yaml"), []byte(`
kind: Backend
metadata: {name: web, namespace: shop}
spec: {host: 10.0.0.1, port: 8080}
---
kind: Backend
metadata: {name: api, namespace: shop}
spec: {host: 10.0.0.2, port: 9090}
`), 0o644)

	// The provider makes one map per kind, keyed by namespace and name,
	// and hands out a read-only view of it.
	type BackendSpec struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	p := file.New(dir)
	backends := file.Register[file.Object[BackendSpec]](p, "Backend")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	// The map is initialized once the directory has been read.
	<-backends.Initialized()
	web, _ := backends.Load(types.NamespacedName{Namespace: "shop", Name: "web"})
	fmt.Println(backends.Len(), "backends; web is", web.Spec.Host, web.Spec.Port)

	// Editing the file updates the map: web changes, api is deleted.
	sub := backends.Subscribe(ctx)
	<-sub
	os.WriteFile(filepath.Join(dir, "backends.yaml"), []byte(`
kind: Backend
metadata: {name: web, namespace: shop}
spec: {host: 10.0.0.1, port: 8081}
`), 0o644)
	snap := <-sub
	for _, u := range snap.Updates {
		fmt.Println(u.Key, "deleted:", u.Delete)
	}
	web, _ = snap.State.Get(types.NamespacedName{Namespace: "shop", Name: "web"})
	fmt.Println("web is", web.Spec.Host, web.Spec.Port)

	cancel()
	<-done
	// Unordered output:
	// 2 backends; web is 10.0.0.1 8080
	// shop/web deleted: false
	// shop/api deleted: true
	// web is 10.0.0.1 8081
}

// ExampleNewFS reads documents once from an fs.FS, such as an embed.FS of
// default configuration compiled into the program.
func ExampleNewFS() {
	// With go:embed this would be:
	//
	//	//go:embed config/*.yaml
	//	var defaults embed.FS
	defaults := fstest.MapFS{
		"config/backends.yaml": {Data: []byte(`
kind: Backend
metadata: {name: web, namespace: shop}
spec: {host: 10.0.0.1, port: 8080}
`)},
	}
	type BackendSpec struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	p := file.NewFS(defaults, "config")
	backends := file.Register[file.Object[BackendSpec]](p, "Backend")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	<-p.Ready()
	for name, b := range backends.State().All() {
		fmt.Println(name, b.Spec.Host, b.Spec.Port)
	}
	cancel()
	<-done
	// Output:
	// shop/web 10.0.0.1 8080
}
