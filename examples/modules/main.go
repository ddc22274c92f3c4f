package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/switchyard-go/switchyard/kube"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "modules:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("modules", flag.ContinueOnError)
	var cfg Config
	var kubeconfig, components string
	host, _ := os.Hostname()
	fs.StringVar(&cfg.Module, "module", "", "the module's name (required)")
	fs.StringVar(&cfg.Replica, "replica", host, "this replica's name, unique within the module (in a pod: its name)")
	fs.StringVar(&cfg.Namespace, "namespace", "default", "namespace of the TinyModules and the Leases")
	fs.StringVar(&cfg.Version, "version", "v0.1.0", "the module's version, published in its status")
	fs.StringVar(&components, "components", "echo", "comma-separated components this module serves (upper, reverse, echo)")
	fs.StringVar(&cfg.Listen, "listen", "127.0.0.1:0", "address of the HTTP API (POST /send?to=node.port)")
	fs.StringVar(&cfg.Advertise, "advertise", "", "host the other modules reach this replica at (default: the listening host; in a pod: its IP)")
	fs.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)")
	fs.DurationVar(&cfg.Wait, "wait", 0, "how long a message waits for its destination to be discovered (default 5s)")
	fs.DurationVar(&cfg.Lease.LeaseDuration, "lease-duration", 0, "how long the others wait before taking over a silent leader's Lease (default 15s)")
	fs.DurationVar(&cfg.Lease.RenewDeadline, "renew-deadline", 0, "how long a leader keeps leading without a successful renewal (default 10s)")
	fs.DurationVar(&cfg.Lease.RetryPeriod, "retry-period", 0, "how often the Lease is renewed (default 2s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if cfg.Module == "" {
		return fmt.Errorf("-module is required")
	}
	cfg.Components = strings.Split(components, ",")
	restConfig, err := kube.Config(kubeconfig)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, cfg, restConfig)
}
