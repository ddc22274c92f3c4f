package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
)

// config is everything run needs, from flags and the environment.
type config struct {
	GatewayAddr string
	ControlAddr string
	// AdminAddr serves the operators' pages: maps, runners, metrics and
	// profiles, never on the listener that registrations use.
	AdminAddr string
	// ShutdownGrace is how long requests in flight may take to finish
	// once the pipeline is told to stop.
	ShutdownGrace time.Duration
	// ConfigDir is the directory of Route and DirectRegistry files; empty
	// means the configuration embedded in the binary.
	ConfigDir string
	// Demo starts the two in-process petstore backends.
	Demo bool
	// Lease is the registry's lease period.
	Lease time.Duration
	// Wait bounds how long the gateway waits for a target to appear.
	Wait time.Duration
	// LogLevel filters the operational log on stderr.
	LogLevel slog.Level
	// RegistryURL, when set, is the base URL of a remote controller: the
	// pipeline then runs no registry of its own, registers its gateway
	// there and discovers through it.
	RegistryURL string
	// StartOnRegistryFailure: with a remote controller that cannot be
	// reached at start, start anyway (and keep trying) rather than fail.
	StartOnRegistryFailure bool
	// Token authorizes registrations; DiscoveryToken, when set, lookups.
	Token, DiscoveryToken registry.Secret
	// TokenGenerated reports that Token was generated because
	// SWITCHYARD_TOKEN was unset, so run prints it once.
	TokenGenerated bool
	// Etcd are the endpoints of the etcd cluster that keeps the registry's
	// instances, shared with every pipeline using the same EtcdPrefix;
	// none means the registry keeps them in memory.
	Etcd       []string
	EtcdPrefix string

	// configFS, when set (by tests), is read once for the configuration,
	// instead of ConfigDir or the embedded files.
	configFS fs.FS
	// registryWait, when set (by tests), bounds the wait for a remote
	// controller at start instead of client.DefaultInitialWait.
	registryWait time.Duration
	// registryLimits and serverOptions, set by tests, tune the registry and
	// every server (shorter timeouts, say).
	registryLimits registry.Limits
	serverOptions  []httpserver.Option
}

const usage = `Usage: pipeline [flags]

Runs a discovery -> registry -> routing -> gateway pipeline: a file provider
reads routes, a registry accepts instances over HTTP and WebSocket, a
translator resolves the route table, and a reverse proxy serves it.

With -registry-url, it runs no registry: it is a gateway of the controller
at that URL (another pipeline's control address), where it registers itself
and discovers the services its routes name.

Flags:
`

const envUsage = `
Environment (tokens are never flags, so that they do not show in ps):
  SWITCHYARD_TOKEN            token for registering, heartbeating and deregistering
                              (Authorization: Bearer ...); generated and printed when unset;
                              with -registry-url, the remote controller's token (required)
  SWITCHYARD_DISCOVERY_TOKEN  token for discovery lookups and watches; when unset, they
                              need no token
`

// parseFlags reads the command line and the environment.
func parseFlags(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("pipeline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
		fmt.Fprint(stderr, envUsage)
	}
	fs.StringVar(&cfg.GatewayAddr, "gateway-addr", "127.0.0.1:8080", "gateway (reverse proxy) listen `address`")
	fs.StringVar(&cfg.ControlAddr, "control-addr", "127.0.0.1:9090", "control plane listen `address`: the registry's API, /healthz and /readyz")
	fs.StringVar(&cfg.AdminAddr, "admin-addr", "127.0.0.1:9091", "admin listen `address`, for operators only: /debug/maps, /debug/runners, /metrics, /debug/pprof/")
	fs.DurationVar(&cfg.ShutdownGrace, "shutdown-grace", httpserver.DefaultShutdownGrace, "how long requests in flight may take to finish after SIGTERM or Ctrl-C")
	fs.StringVar(&cfg.ConfigDir, "config", "", "`directory` of Route and DirectRegistry files, watched for changes (default: the embedded demo configuration)")
	demo := fs.Bool("demo", false, "start two in-process petstore backends that register themselves (default true when -config is not set; -demo=false turns them off)")
	fs.DurationVar(&cfg.Lease, "lease", registry.DefaultLease, "registry lease: an instance that misses heartbeats this long is disconnected, and removed after three")
	fs.DurationVar(&cfg.Wait, "wait", 2*time.Second, "how long a request for a route without a usable instance waits for one before answering 503")
	// warn by default: the event lines on stdout already say what happens,
	// and info would say most of it a second time on stderr.
	level := fs.String("log-level", "warn", "operational log `level` on stderr: debug, info, warn or error")
	fs.StringVar(&cfg.RegistryURL, "registry-url", "", "base `URL` of a remote controller (another pipeline's control address, http://host:port): run no registry here, register the gateway there and discover through it")
	fs.BoolVar(&cfg.StartOnRegistryFailure, "start-on-registry-failure", true, "with -registry-url: start even when the controller cannot be reached at first, and keep trying; false makes the pipeline exit with an error instead")
	etcd := fs.String("etcd", "", "comma-separated etcd `endpoints` (such as http://127.0.0.1:2379): keep the registry's instances in etcd, shared by every pipeline on the same -etcd-prefix (default: in memory)")
	etcdPrefix := fs.String("etcd-prefix", "/switchyard", "etcd key `prefix` of the registry's instances, with -etcd")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cfg, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	cfg.Demo = cfg.ConfigDir == ""
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "demo" {
			cfg.Demo = *demo
		}
	})
	if err := cfg.LogLevel.UnmarshalText([]byte(*level)); err != nil {
		return cfg, fmt.Errorf("-log-level %q: want debug, info, warn or error", *level)
	}
	if *etcd != "" {
		for _, e := range strings.Split(*etcd, ",") {
			if e = strings.TrimSpace(e); e == "" {
				return cfg, fmt.Errorf("-etcd %q: an empty endpoint", *etcd)
			}
			cfg.Etcd = append(cfg.Etcd, e)
		}
		if cfg.EtcdPrefix = *etcdPrefix; !strings.HasPrefix(cfg.EtcdPrefix, "/") {
			return cfg, fmt.Errorf("-etcd-prefix %q: want a key prefix starting with /", cfg.EtcdPrefix)
		}
	}
	if cfg.Lease <= 0 {
		return cfg, fmt.Errorf("-lease %v: must be positive", cfg.Lease)
	}
	if cfg.Wait < 0 {
		return cfg, fmt.Errorf("-wait %v: must not be negative", cfg.Wait)
	}
	if cfg.ShutdownGrace < 0 {
		return cfg, fmt.Errorf("-shutdown-grace %v: must not be negative", cfg.ShutdownGrace)
	}
	// Checked here rather than when the servers start, so that a typo is a
	// usage error (exit code 2) reported before anything runs.
	addrs := []struct{ flag, addr string }{{"-gateway-addr", cfg.GatewayAddr}, {"-control-addr", cfg.ControlAddr}, {"-admin-addr", cfg.AdminAddr}}
	for i, a := range addrs {
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			return cfg, fmt.Errorf("%s %q: want host:port, such as 127.0.0.1:8080", a.flag, a.addr)
		}
		for _, b := range addrs[:i] {
			if a.addr == b.addr && !strings.HasSuffix(a.addr, ":0") {
				return cfg, fmt.Errorf("%s and %s are both %s: they need different ports", b.flag, a.flag, a.addr)
			}
		}
	}
	if cfg.ConfigDir != "" {
		if st, err := os.Stat(cfg.ConfigDir); err != nil {
			return cfg, fmt.Errorf("-config: %w", err)
		} else if !st.IsDir() {
			return cfg, fmt.Errorf("-config %s: not a directory", cfg.ConfigDir)
		}
	}
	cfg.Token = registry.Secret(getenv("SWITCHYARD_TOKEN"))
	cfg.DiscoveryToken = registry.Secret(getenv("SWITCHYARD_DISCOVERY_TOKEN"))
	if cfg.RegistryURL != "" {
		if len(cfg.Etcd) > 0 {
			return cfg, errors.New("-registry-url and -etcd: a pipeline with a remote controller runs no registry, so it has no instances to keep in etcd; give one or the other")
		}
		if _, err := client.New(cfg.RegistryURL); err != nil {
			return cfg, fmt.Errorf("-registry-url: %w", err)
		}
		if cfg.Token == "" {
			return cfg, errors.New("-registry-url needs SWITCHYARD_TOKEN: the remote controller's registration token")
		}
	}
	if cfg.Token == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		cfg.Token, cfg.TokenGenerated = registry.Secret(hex.EncodeToString(b)), true
	}
	return cfg, nil
}
