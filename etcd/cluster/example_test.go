package cluster_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/switchyard-go/switchyard/etcd/cluster"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// A program's replicas elect a leader for the runners that must run once,
// and share the items of a map for the others. On Kubernetes, only the two
// constructors would change.
func Example() {
	endpoints, stop, err := exampleEtcd()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer stop()
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zapNop})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()

	elector := cluster.NewElector(client, "/myapp/leader", cluster.WithIdentity("replica-1"))
	engine := cluster.NewShardEngine(client, "/myapp/bases", cluster.WithIdentity("replica-1"))

	bases := new(watchable.Map[string, string])
	bases.Store("base-1", "10.0.0.1:1200")
	bases.Store("base-2", "10.0.0.2:1200")

	var mu sync.Mutex
	var handled []string
	leading, all := make(chan int64, 1), make(chan struct{})
	statusWriter := runner.Func("status-writer", func(ctx context.Context) error {
		term, _ := runner.TermOf(ctx)
		leading <- term.Token() // the leader key's create revision
		<-ctx.Done()
		return nil
	})
	manage := func(ctx context.Context, base string) error {
		mu.Lock()
		if handled = append(handled, base); len(handled) == 2 {
			close(all)
		}
		mu.Unlock()
		<-ctx.Done()
		return nil
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		done <- runner.Run(ctx,
			runner.LeaderOnly(elector, statusWriter),
			runner.Shard("bases", bases.View(), func(name string) string { return name }, engine, manage),
		)
	}()
	fmt.Println("leading:", <-leading > 0)
	<-all
	fmt.Println("handled:", slices.Sorted(slices.Values(handled)))
	cancel() // resigns and leaves: other replicas take over at once
	fmt.Println("run:", <-done)
	// Output:
	// leading: true
	// handled: [base-1 base-2]
	// run: <nil>
}

// exampleEtcd starts an etcd server inside the process, on free ports of
// 127.0.0.1, for the example: a program talks to its etcd cluster instead.
func exampleEtcd() (endpoints []string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "cluster-example")
	if err != nil {
		return nil, nil, err
	}
	local := url.URL{Scheme: "http", Host: "127.0.0.1:0"}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "error"
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{local}, []url.URL{local}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{local}, []url.URL{local}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	stop = func() {
		e.Close()
		os.RemoveAll(dir)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(time.Minute):
		stop()
		return nil, nil, fmt.Errorf("etcd not ready after a minute")
	}
	for _, l := range e.Clients {
		endpoints = append(endpoints, "http://"+l.Addr().String())
	}
	return endpoints, stop, nil
}
