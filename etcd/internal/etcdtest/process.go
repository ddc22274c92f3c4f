package etcdtest

import (
	"path/filepath"
	"testing"

	"github.com/switchyard-go/switchyard/internal/integration"
)

// Binary returns the path of the etcd server executable built by
// etcd/hack/etcd.sh: $SWITCHYARD_ETCD_BIN if set, else the script's default
// cache location. Without one the test skips, or fails when
// SWITCHYARD_REQUIRE_INTEGRATION=1.
func Binary(tb testing.TB) string {
	tb.Helper()
	return integration.Find(tb, integration.Lookup{
		Env:    "SWITCHYARD_ETCD_BIN",
		Cached: filepath.Join("etcd", "etcd"),
		Script: "etcd/hack/etcd.sh",
	})
}

// Process is an etcd server running as a child process of the test, which
// the test can kill and restart on the same data directory and ports. Its
// methods are safe for concurrent use.
type Process struct {
	// Endpoints are the server's client URLs; they survive restarts.
	Endpoints []string
	// DataDir is the server's data directory; it survives restarts.
	DataDir string

	proc *integration.Process
}

// StartProcess starts an etcd server process on dataDir (created if absent;
// an existing one is reused, as after a crash) and free ports of 127.0.0.1,
// waits until it serves, and kills it when the test ends. Its output goes to
// a file whose tail is shown if it fails to start.
func StartProcess(tb testing.TB, dataDir string) *Process {
	tb.Helper()
	proc, endpoint, err := integration.StartEtcd(tb, Binary(tb), dataDir, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return &Process{Endpoints: []string{endpoint}, DataDir: dataDir, proc: proc}
}

// Kill sends SIGKILL to the server and waits until it has exited, like a
// crash: nothing is flushed or closed in an orderly way.
func (p *Process) Kill(tb testing.TB) {
	tb.Helper()
	p.proc.Kill(tb)
}

// Restart starts the server again on the same data directory and ports and
// waits until it serves; a server still running is killed first.
func (p *Process) Restart(tb testing.TB) {
	tb.Helper()
	p.proc.Restart(tb)
}

// Running reports whether the server process is alive.
func (p *Process) Running() bool { return p.proc.Running() }
