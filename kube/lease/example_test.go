package lease_test

import (
	"context"
	"log"

	"github.com/switchyard-go/switchyard/kube"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	"k8s.io/client-go/kubernetes"
)

// A runner that only the elected replica runs. The Elector is the one line
// that names Kubernetes: the etcd engine's Elector would do as well.
// (Not run: it needs a cluster.)
func ExampleNewElector() {
	cfg, err := kube.Config("") // $KUBECONFIG, ~/.kube/config, or the pod's service account
	if err != nil {
		log.Fatal(err)
	}
	clientset := kubernetes.NewForConfigOrDie(cfg)
	elector, err := lease.NewElector(clientset.CoordinationV1(), "default", "my-controller")
	if err != nil {
		log.Fatal(err)
	}
	publish := runner.Func("publish", func(ctx context.Context) error {
		term, _ := runner.TermOf(ctx) // leading until ctx is done
		log.Printf("leading with token %d", term.Token())
		<-ctx.Done()
		return nil
	})
	log.Fatal(runner.Run(context.Background(), runner.LeaderOnly(elector, publish)))
}

// Nodes shared among the replicas: each node is handled by one replica at a
// time, and the replicas stay within one node of an even share.
// (Not run: it needs a cluster.)
func ExampleNewShardEngine() {
	cfg, err := kube.Config("")
	if err != nil {
		log.Fatal(err)
	}
	clientset := kubernetes.NewForConfigOrDie(cfg)
	engine, err := lease.NewShardEngine(clientset.CoordinationV1(), "default", "nodes")
	if err != nil {
		log.Fatal(err)
	}
	var nodes watchable.Map[string, struct{}] // filled by an informer, say
	shard := runner.Shard("nodes", nodes.View(), func(name string) string { return name }, engine,
		func(ctx context.Context, node string) error {
			<-ctx.Done() // handle node until the claim ends
			return nil
		})
	log.Fatal(runner.Run(context.Background(), shard))
}
