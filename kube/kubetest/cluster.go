package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/switchyard-go/switchyard/internal/integration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// startTimeout bounds each start of etcd or the API server (the API server
// takes 3 to 6 seconds on two cores).
const startTimeout = 90 * time.Second

// Cluster is a running etcd and kube-apiserver pair.
type Cluster struct {
	// APIServer is the kube-apiserver process: Kill it (SIGKILL) and
	// Restart it on the same etcd, address and credentials.
	APIServer *integration.Process
	// Etcd is the etcd process the API server stores into.
	Etcd *integration.Process
	// EtcdEndpoint is etcd's client URL, for a test that reads it directly.
	EtcdEndpoint string
	// Host is the API server's URL.
	Host string

	token     string
	caPEM     []byte
	transport *http.Transport
}

// Option configures Start.
type Option func(*options)

type options struct {
	compaction time.Duration
	args       []string
}

// WithCompactionInterval sets how often the API server compacts etcd
// (kube-apiserver's --etcd-compaction-interval; its default is 5 minutes). The
// API server compacts to the revision it saw one interval earlier, so an old
// revision is gone from etcd after about two intervals. With the watch cache
// on, requests at an old resource version are still answered from the
// cache's own history for a while (seen here: 13 s with a 1 s interval, and a
// watch not at all); add WithoutWatchCache to make both a list and a watch at
// a compacted version answer 410 Gone at once.
func WithCompactionInterval(d time.Duration) Option {
	return func(o *options) { o.compaction = d }
}

// WithoutWatchCache turns off the API server's watch cache
// (--watch-cache=false), so that every list and watch is served from etcd.
func WithoutWatchCache() Option {
	return WithAPIServerArgs("--watch-cache=false")
}

// WithAPIServerArgs adds command-line flags to kube-apiserver, after the
// fixture's own (a later flag overrides an earlier one).
func WithAPIServerArgs(args ...string) Option {
	return func(o *options) { o.args = append(o.args, args...) }
}

// Start starts etcd and kube-apiserver, waits until the API server is ready
// (/readyz), and stops both when the test ends.
func Start(tb testing.TB, opts ...Option) *Cluster {
	tb.Helper()
	o := options{compaction: 5 * time.Minute}
	for _, opt := range opts {
		opt(&o)
	}
	apiserverBin, etcdBin := binaries(tb)
	dir := tb.TempDir()
	creds, err := newCredentials(dir)
	if err != nil {
		tb.Fatalf("make credentials for the API server: %v", err)
	}
	c := &Cluster{token: creds.token, caPEM: creds.caPEM}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(creds.caPEM)
	// One transport per cluster, owned here, so its connections are closed
	// when the test ends instead of idling in client-go's shared cache.
	c.transport = &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2: true,
	}
	tb.Cleanup(c.transport.CloseIdleConnections)

	c.Etcd, c.EtcdEndpoint, err = integration.StartEtcd(tb, etcdBin, filepath.Join(dir, "etcd"), dir)
	if err != nil {
		tb.Fatalf("start etcd for the API server: %v", err)
	}

	client := &http.Client{Transport: c.transport, Timeout: 2 * time.Second}
	c.APIServer, _, err = integration.StartWithPorts(tb, 1, func(ports []int, attempt int) integration.Command {
		host := "https://127.0.0.1:" + strconv.Itoa(ports[0])
		c.Host = host
		args := []string{
			"--etcd-servers=" + c.EtcdEndpoint,
			"--etcd-compaction-interval=" + o.compaction.String(),
			"--bind-address=127.0.0.1",
			"--advertise-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(ports[0]),
			"--tls-cert-file=" + creds.servingCrt,
			"--tls-private-key-file=" + creds.servingKey,
			"--token-auth-file=" + creds.tokenFile,
			"--authorization-mode=RBAC",
			"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
			"--service-account-key-file=" + creds.saKey,
			"--service-account-signing-key-file=" + creds.saKey,
			"--service-cluster-ip-range=10.0.0.0/24",
			"--allow-privileged=true",
			// Nothing creates service accounts without a controller manager.
			"--disable-admission-plugins=ServiceAccount",
			// No other API server shares this etcd to reconcile endpoints with.
			"--endpoint-reconciler-type=none",
			"--profiling=false",
		}
		return integration.Command{
			Name:    "kube-apiserver on " + host,
			Path:    apiserverBin,
			Args:    append(args, o.args...),
			Log:     filepath.Join(dir, fmt.Sprintf("kube-apiserver-%d.log", attempt)),
			Ready:   func(ctx context.Context) error { return ready(ctx, client, host, creds.token) },
			Timeout: startTimeout,
		}
	})
	if err != nil {
		tb.Fatalf("start kube-apiserver: %v", err)
	}
	return c
}

// Config returns a new client configuration for an administrator (a member
// of system:masters) of the cluster; the caller may change it. Client-side
// rate limiting is raised so that tests are not throttled.
func (c *Cluster) Config() *rest.Config {
	return &rest.Config{
		Host:        c.Host,
		BearerToken: c.token,
		Transport:   c.transport,
		QPS:         200,
		Burst:       400,
		Timeout:     30 * time.Second,
	}
}

// Clientset returns a typed client for c.Config().
func (c *Cluster) Clientset(tb testing.TB) *kubernetes.Clientset {
	tb.Helper()
	cs, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		tb.Fatalf("make a clientset for %s: %v", c.Host, err)
	}
	return cs
}

// ready asks the API server whether it is ready; nil means it is.
func ready(ctx context.Context, client *http.Client, host, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s/readyz: %s", host, resp.Status)
	}
	return nil
}

// Kubeconfig writes a kubeconfig file for an administrator of the cluster
// into a temporary directory of the test, and returns its path: for a
// child process of the test, which cannot share Config's transport.
func (c *Cluster) Kubeconfig(tb testing.TB) string {
	tb.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["kubetest"] = &clientcmdapi.Cluster{Server: c.Host, CertificateAuthorityData: c.caPEM}
	cfg.AuthInfos["kubetest-admin"] = &clientcmdapi.AuthInfo{Token: c.token}
	cfg.Contexts["kubetest"] = &clientcmdapi.Context{Cluster: "kubetest", AuthInfo: "kubetest-admin"}
	cfg.CurrentContext = "kubetest"
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		tb.Fatalf("write a kubeconfig: %v", err)
	}
	return path
}
