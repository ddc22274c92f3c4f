package integration_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/integration"
)

// serverEnv makes the test binary a tiny HTTP server on the address it holds.
const serverEnv = "INTEGRATION_TEST_SERVER"

func serve(addr string) {
	fmt.Println("serving on", addr)
	err := http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, os.Getpid())
	}))
	fmt.Println(err)
	os.Exit(2)
}

var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}

// pid asks the server at url for its process id.
func pid(ctx context.Context, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := noKeepAlive.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var id int
	_, err = fmt.Fscan(resp.Body, &id)
	return id, err
}

func self(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

func TestProcessKillAndRestart(t *testing.T) {
	logs := t.TempDir()
	var url string
	p, ports, err := integration.StartWithPorts(t, 1, func(ports []int, attempt int) integration.Command {
		addr := "127.0.0.1:" + strconv.Itoa(ports[0])
		url = "http://" + addr
		u := url
		t.Setenv(serverEnv, addr) // inherited by the child
		return integration.Command{
			Name:  "test server",
			Path:  self(t),
			Log:   filepath.Join(logs, fmt.Sprintf("server-%d.log", attempt)),
			Ready: func(ctx context.Context) error { _, err := pid(ctx, u); return err },
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 1 || !p.Running() {
		t.Fatalf("ports %v, running %v", ports, p.Running())
	}
	ctx := context.Background()
	first, err := pid(ctx, url)
	if err != nil {
		t.Fatal(err)
	}

	p.Kill(t)
	if p.Running() {
		t.Fatal("running after Kill")
	}
	if _, err := pid(ctx, url); err == nil {
		t.Fatal("killed server still answers")
	}

	p.Restart(t)
	second, err := pid(ctx, url)
	if err != nil || second == first {
		t.Fatalf("after restart on the same port: pid %d (was %d), %v", second, first, err)
	}
	p.Restart(t) // kills the running one first
	if third, err := pid(ctx, url); err != nil || third == second {
		t.Fatalf("after a restart of a running server: pid %d (was %d), %v", third, second, err)
	}
	if !strings.Contains(p.LogTail(), "serving on") {
		t.Errorf("log tail %q does not show the server's output", p.LogTail())
	}
}

func TestProcessThatExitsReportsItsLog(t *testing.T) {
	t.Setenv(serverEnv, "fail")
	_, err := integration.StartProcess(t, integration.Command{
		Name:  "failing server",
		Path:  self(t),
		Log:   filepath.Join(t.TempDir(), "log"),
		Ready: func(context.Context) error { return fmt.Errorf("not yet") },
	})
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), "giving up at once") {
		t.Fatalf("start of a server that exits: %v, want the exit and its log", err)
	}
}

func TestProcessNotReadyInTime(t *testing.T) {
	t.Setenv(serverEnv, "127.0.0.1:0")
	_, err := integration.StartProcess(t, integration.Command{
		Name:    "silent server",
		Path:    self(t),
		Log:     filepath.Join(t.TempDir(), "log"),
		Ready:   func(context.Context) error { return fmt.Errorf("never") },
		Timeout: 200 * time.Millisecond,
	})
	if err == nil || !strings.Contains(err.Error(), "not ready after") {
		t.Fatalf("start of a server that never gets ready: %v", err)
	}
}
