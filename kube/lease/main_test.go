package lease_test

import (
	"os"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/kube/lease"
	"go.uber.org/goleak"
)

// childEnv makes the test binary a replica of a process test instead of
// running the tests (see child_test.go).
const childEnv = "SWITCHYARD_LEASE_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		goleak.VerifyTestMain(m,
			// klog, which client-go logs through, starts its flush daemon at init.
			goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		)
	case "elect":
		os.Exit(childElect())
	case "shard":
		os.Exit(childShard())
	default:
		os.Exit(2)
	}
}

// timing is short, to keep the tests short, and yet leaves a machine
// running the race detector on two busy cores seconds to renew in.
var timing = lease.Timing{LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
