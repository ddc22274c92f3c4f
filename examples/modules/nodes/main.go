// Command nodes is the Koupleless shape on switchyard's kube module: a
// controller that watches pods once, fans them out in-process to one
// handler per node, and shares the nodes among its replicas with one Lease
// per node, so that each node is handled by exactly one replica:
//
//	nodes -replica $(hostname)            # sharded among the replicas
//	nodes -replica $(hostname) -shard=false # every node handled here
//
// A node's handler sees only its node's pods (a subscription to its
// partition of the shared pod map), starts when the node gets its first pod
// (or when this replica claims the node) and stops when the node has none
// (or the claim moves). Here a handler only prints its node's pods; a real
// one would drive the node's runtime.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/switchyard-go/switchyard/kube"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nodes:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("nodes", flag.ContinueOnError)
	host, _ := os.Hostname()
	cfg := Config{Observe: func(replica, node string, pods []string) {
		fmt.Printf("%s %s node=%s pods=%v\n", time.Now().Format(time.TimeOnly), replica, node, pods)
	}}
	var kubeconfig string
	fs.StringVar(&cfg.Replica, "replica", host, "this replica's name, unique among the controller's replicas")
	fs.StringVar(&cfg.Namespace, "namespace", "default", "namespace of the Leases (pods are watched in all namespaces)")
	fs.BoolVar(&cfg.Shard, "shard", true, "share the nodes among the replicas (one Lease per node); false: handle every node here")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	restConfig, err := kube.Config(kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, cfg, restConfig)
}

// Config is what a replica needs to know.
type Config struct {
	Replica   string
	Namespace string
	Shard     bool
	Lease     lease.Timing
	// Observe is called by a node's handler with the node's pods (by
	// namespace/name, sorted) each time they change.
	Observe func(replica, node string, pods []string)
}

func byNode(_ types.NamespacedName, p *corev1.Pod) string { return p.Spec.NodeName }

// Run runs a replica until ctx is done.
func Run(ctx context.Context, cfg Config, restConfig *rest.Config) error {
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	// One watch of the scheduled pods for every node: their node's name is
	// all a handler here needs, so the rest of the spec is dropped.
	pods := informer.New[*corev1.Pod](cs.CoreV1().Pods(""), informer.WithFieldSelector("spec.nodeName!=")).
		WithTransform(func(p *corev1.Pod) *corev1.Pod {
			return &corev1.Pod{ObjectMeta: p.ObjectMeta, Spec: corev1.PodSpec{NodeName: p.Spec.NodeName}}
		})
	follow := func(ctx context.Context, node string, updates <-chan watchable.Snapshot[types.NamespacedName, *corev1.Pod]) error {
		for s := range updates {
			names := make([]string, 0, s.State.Len())
			for k := range s.State.Keys() {
				names = append(names, k.String())
			}
			slices.Sort(names)
			cfg.Observe(cfg.Replica, node, names)
		}
		cfg.Observe(cfg.Replica, node, nil) // stopped
		return nil
	}
	if !cfg.Shard {
		// Every node here: the fan-out starts and stops the handlers.
		return runner.NewGroup().Run(ctx, pods, runner.FanOut("nodes", pods.Output(), byNode, follow))
	}
	// Nodes shared among replicas: the partitions of the pod map are the
	// items to shard, and a claimed node's handler subscribes to its own.
	// The index is made once the pods are listed, so that the sharding
	// never acts on a partial list of nodes.
	engine, err := lease.NewShardEngine(cs.CoordinationV1(), cfg.Namespace, "nodes",
		lease.WithIdentity(cfg.Replica), lease.WithTiming(cfg.Lease))
	if err != nil {
		return err
	}
	shard := runner.Func("nodes", func(ctx context.Context) error {
		select {
		case <-pods.Ready():
		case <-ctx.Done():
			return nil
		}
		parts := watchable.PartitionBy(ctx, pods.Output(), byNode)
		return runner.Shard("nodes", parts.Sizes(), func(node string) string { return node }, engine,
			func(ctx context.Context, node string) error { return follow(ctx, node, parts.Subscribe(ctx, node)) },
		).Run(ctx)
	})
	return runner.NewGroup().Run(ctx, pods, shard)
}
