package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// StartEtcd starts a single-member etcd server process from the executable
// bin, with its data in dataDir (reused if it exists, as after a crash) and
// its output in logDir, on free ports of 127.0.0.1, and waits until it is
// healthy. It returns the process and its client URL. The server runs
// without fsync: a killed process loses nothing, since its writes are in the
// kernel's page cache; only a machine crash would lose them.
func StartEtcd(tb testing.TB, bin, dataDir, logDir string) (*Process, string, error) {
	tb.Helper()
	var clientURL string
	p, _, err := StartWithPorts(tb, 2, func(ports []int, attempt int) Command {
		clientURL = "http://127.0.0.1:" + strconv.Itoa(ports[0])
		peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
		endpoint := clientURL
		return Command{
			Name: "etcd on " + clientURL,
			Path: bin,
			Args: []string{
				"--name=default",
				"--data-dir=" + dataDir,
				"--listen-client-urls=" + clientURL,
				"--advertise-client-urls=" + clientURL,
				"--listen-peer-urls=" + peerURL,
				"--initial-advertise-peer-urls=" + peerURL,
				"--initial-cluster=default=" + peerURL,
				"--unsafe-no-fsync",
				"--log-level=warn",
			},
			Log:   filepath.Join(logDir, fmt.Sprintf("etcd-%d.log", attempt)),
			Ready: func(ctx context.Context) error { return EtcdHealthy(ctx, endpoint) },
		}
	})
	if err != nil {
		return nil, "", fmt.Errorf("start etcd: %w", err)
	}
	return p, clientURL, nil
}

// healthClient keeps no idle connection, which would outlive the test.
var healthClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}

// EtcdHealthy asks the etcd server at endpoint (a client URL) whether it is
// healthy, that is has a leader and serves requests; nil means it is.
func EtcdHealthy(ctx context.Context, endpoint string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/health", nil)
	if err != nil {
		return err
	}
	resp, err := healthClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
		Reason string `json:"reason"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return fmt.Errorf("decode the answer of %s/health: %w", endpoint, err)
	}
	if resp.StatusCode != http.StatusOK || h.Health != "true" {
		return fmt.Errorf("%s/health: %s, health %q, reason %q", endpoint, resp.Status, h.Health, h.Reason)
	}
	return nil
}
