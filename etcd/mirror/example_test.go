package mirror_test

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/mirror"
)

type route struct {
	Backend string `json:"backend"`
}

// A mirror of the routes under /routes/: initialized once listed, then
// following etcd; WaitRevision gives read-your-writes.
func Example() {
	endpoints, stop := etcdtest.ForExample()
	defer stop()
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zap.NewNop()})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	if _, err := client.Put(ctx, "/routes/api", `{"backend":"10.0.0.1:80"}`); err != nil {
		panic(err)
	}
	routes := mirror.New[string, route](client, "/routes/", mirror.StringKey)
	done := make(chan error, 1)
	go func() { done <- routes.Run(ctx) }()
	<-routes.Ready()
	fmt.Println("listed:", routes.Output().LoadAll())

	resp, err := client.Put(ctx, "/routes/web", `{"backend":"10.0.0.2:80"}`)
	if err != nil {
		panic(err)
	}
	if err := routes.WaitRevision(ctx, resp.Header.Revision); err != nil {
		panic(err)
	}
	web, _ := routes.Output().Load("web")
	fmt.Println("after the put:", routes.Output().Len(), "routes; web goes to", web.Backend)

	cancel()
	<-done
	// Output:
	// listed: map[api:{10.0.0.1:80}]
	// after the put: 2 routes; web goes to 10.0.0.2:80
}
