package sink_test

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/switchyard-go/switchyard/etcd/internal/etcdtest"
	"github.com/switchyard-go/switchyard/etcd/sink"
	"github.com/switchyard-go/switchyard/watchable"
)

// A sink writes a map under /members/ on its own lease; when it stops, the
// keys go with the revoked lease.
func Example() {
	endpoints, stop := etcdtest.ForExample()
	defer stop()
	client, err := clientv3.New(clientv3.Config{Endpoints: endpoints, Logger: zap.NewNop()})
	if err != nil {
		panic(err)
	}
	defer client.Close()

	var members watchable.Map[string, string]
	members.Store("node-1", "10.0.0.1")
	s := sink.New(client, "/members/", members.View(), func(k string) string { return k }, sink.WithCodec(stringCodec{}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()

	members.Store("node-2", "10.0.0.2")
	if _, err := s.Sync(ctx); err != nil {
		panic(err)
	}
	count := func() int64 {
		resp, err := client.Get(context.Background(), "/members/", clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			panic(err)
		}
		return resp.Count
	}
	fmt.Println("keys while running:", count())

	cancel()
	<-done
	fmt.Println("keys once stopped:", count())
	// Output:
	// keys while running: 2
	// keys once stopped: 0
}

type stringCodec struct{}

func (stringCodec) Encode(v string) ([]byte, error)    { return []byte(v), nil }
func (stringCodec) Decode(data []byte) (string, error) { return string(data), nil }
