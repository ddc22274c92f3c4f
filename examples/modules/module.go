package main

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchyard-go/switchyard/discovery"
	"github.com/switchyard-go/switchyard/httpserver"
	"github.com/switchyard-go/switchyard/kube/informer"
	"github.com/switchyard-go/switchyard/kube/lease"
	"github.com/switchyard-go/switchyard/kube/status"
	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/translator"
	"github.com/switchyard-go/switchyard/watchable"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// CRD is the TinyModule CustomResourceDefinition.
//
//go:embed tinymodule.yaml
var CRD []byte

// Resource is the TinyModule resource.
var Resource = schema.GroupVersionResource{Group: "examples.switchyard.dev", Version: "v1alpha1", Resource: "tinymodules"}

// Config is what a replica needs to know.
type Config struct {
	Module     string   // the module's name: its TinyModule's, and its Lease's
	Replica    string   // this replica's name, unique within the module
	Namespace  string   // where the TinyModules and the Lease live
	Version    string   // published in the status
	Components []string // the components this module serves: the nodes of messages it handles
	Listen     string   // host:port for the HTTP API; port 0 picks one
	// Advertise is the host other modules reach this replica at; the
	// listening host when empty.
	Advertise string
	Lease     lease.Timing
	// Wait bounds how long a message waits for the module serving its node
	// to be discovered (default 5 s).
	Wait   time.Duration
	Logger *slog.Logger
}

// Errors a message can end with; the HTTP API maps them to statuses.
var (
	// ErrNoOwner: no module serves the node, as far as the TinyModules say,
	// within Config.Wait.
	ErrNoOwner = errors.New("no module serves this node")
	// ErrUnreachable: the module serving the node has no usable connection
	// in the pool within Config.Wait, or did not answer.
	ErrUnreachable = errors.New("the module serving this node cannot be reached")
)

// replica is one running replica of a module.
type replica struct {
	cfg     Config
	log     *slog.Logger
	modules *informer.Informer[*unstructured.Unstructured]
	pool    *discovery.Pool[*moduleClient]
	server  *httpserver.Server
	writer  *status.Writer[*unstructured.Unstructured, map[string]any]
	desired watchable.Map[types.NamespacedName, map[string]any]
}

// Run runs a replica until ctx is done.
func Run(ctx context.Context, cfg Config, restConfig *rest.Config) error {
	if cfg.Wait <= 0 {
		cfg.Wait = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	restConfig = rest.CopyConfig(restConfig)
	// The API server records who wrote what (metadata.managedFields) by user
	// agent: each replica says who it is.
	restConfig.UserAgent = "modules-" + cfg.Module + "-" + cfg.Replica
	dyn, err := dynamic.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return err
	}
	elector, err := lease.NewElector(cs.CoordinationV1(), cfg.Namespace, "tinymodule-"+cfg.Module,
		lease.WithIdentity(cfg.Module+"-"+cfg.Replica), lease.WithTiming(cfg.Lease), lease.WithLogger(cfg.Logger))
	if err != nil {
		return err
	}

	r := &replica{cfg: cfg, log: cfg.Logger.With("module", cfg.Module, "replica", cfg.Replica)}
	r.modules = informer.NewUnstructured(dyn, Resource, cfg.Namespace,
		informer.WithName("tinymodules"), informer.WithLogger(cfg.Logger)).
		WithTransform(informer.DropManagedFields)
	// The pool follows the modules' published addresses, as the registry's
	// discovery snapshots: one "service" per module, one instance, its leader.
	snapshots := translator.Derive("discovery", r.modules.Output(), moduleSnapshot)
	r.pool = discovery.NewPool("pool", snapshots.Output(), dialModule, closeModule, discovery.WithLogger(cfg.Logger))
	r.writer = status.NewWriter("status", r.modules.Output(), r.desired.View(), status.Unstructured(dyn, Resource), elector,
		status.WithLogger(cfg.Logger))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /send", r.handleSend)
	mux.HandleFunc("POST /deliver", r.handleDeliver)
	r.server = httpserver.New("http", cfg.Listen, mux, httpserver.WithShutdownGrace(2*time.Second))

	register := runner.Func("register", func(ctx context.Context) error { return r.register(ctx, dyn) })
	publish := runner.Func("publish", r.publish)
	return runner.NewGroup(runner.WithLogger(cfg.Logger)).Run(ctx,
		r.modules, snapshots, r.pool, r.server, register, publish, r.writer, runner.Func("events", r.events))
}

// register creates the module's TinyModule if it is missing, then waits.
func (r *replica) register(ctx context.Context, dyn dynamic.Interface) error {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": Resource.GroupVersion().String(), "kind": "TinyModule",
		"metadata": map[string]any{"name": r.cfg.Module, "namespace": r.cfg.Namespace},
		"spec":     map[string]any{},
	}}
	health := runner.HealthOf(ctx)
	for delay := 200 * time.Millisecond; ; delay = min(2*delay, 10*time.Second) {
		_, err := dyn.Resource(Resource).Namespace(r.cfg.Namespace).Create(ctx, obj, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			health.Report("register", nil)
			break
		}
		health.Report("register", fmt.Errorf("create TinyModule %s: %w", r.cfg.Module, err))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
	<-ctx.Done()
	return nil
}

// publish sets the status this replica would publish as leader, once its
// server listens.
func (r *replica) publish(ctx context.Context) error {
	select {
	case <-r.server.Ready():
	case <-ctx.Done():
		return nil
	}
	host, port, _ := net.SplitHostPort(r.server.Addr())
	if r.cfg.Advertise != "" {
		host = r.cfg.Advertise
	}
	r.desired.Store(types.NamespacedName{Namespace: r.cfg.Namespace, Name: r.cfg.Module}, map[string]any{
		"addr":       net.JoinHostPort(host, port),
		"leader":     r.cfg.Replica,
		"version":    r.cfg.Version,
		"components": r.cfg.Components,
	})
	<-ctx.Done()
	return nil
}

// events says, on standard output, when the replica listens and when it
// starts and stops leading (what a person, or the end-to-end test, follows).
func (r *replica) events(ctx context.Context) error {
	select {
	case <-r.server.Ready():
		fmt.Printf("listening %s\n", r.server.Addr())
	case <-ctx.Done():
		return nil
	}
	leading := false
	for s := range r.writer.Leading().Subscribe(ctx) {
		if now := s.State.Len() > 0; now != leading {
			leading = now
			if leading {
				o, _ := s.State.Get(r.writer.Name())
				fmt.Printf("leading token=%d\n", o.Token)
			} else {
				fmt.Println("not leading")
			}
		}
	}
	return nil
}

// moduleStatus reads what a TinyModule's status says.
func moduleStatus(obj *unstructured.Unstructured) (addr string, components []string) {
	addr, _, _ = unstructured.NestedString(obj.Object, "status", "addr")
	components, _, _ = unstructured.NestedStringSlice(obj.Object, "status", "components")
	return addr, components
}

// moduleSnapshot makes a module a discovery snapshot of one instance, its
// leader, at the address its status publishes (none before it does).
func moduleSnapshot(_ context.Context, _ types.NamespacedName, obj *unstructured.Unstructured) (map[registry.DiscoveryKey]*registry.DiscoverySnapshot, error) {
	addr, _ := moduleStatus(obj)
	if addr == "" {
		return nil, nil
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("TinyModule %s: status.addr %q: %w", obj.GetName(), addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("TinyModule %s: status.addr %q: bad port", obj.GetName(), addr)
	}
	name := obj.GetName()
	key := registry.DiscoveryKey{ServiceID: name, Protocol: "http"}
	return map[registry.DiscoveryKey]*registry.DiscoverySnapshot{key: {
		ServiceID: name, Protocol: "http",
		Nodes: []registry.Instance{{RuntimeInstanceID: name, ServiceID: name, Protocol: "http", Address: host, Port: port, Connected: true}},
	}}, nil
}

// moduleClient is the pool's connection to a module.
type moduleClient struct {
	base   string
	client *http.Client
}

func dialModule(_ context.Context, n *registry.Instance) (*moduleClient, error) {
	transport := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	return &moduleClient{
		base:   "http://" + net.JoinHostPort(n.Address, strconv.Itoa(n.Port)),
		client: &http.Client{Transport: transport, Timeout: 10 * time.Second},
	}, nil
}

func closeModule(c *moduleClient) { c.client.CloseIdleConnections() }

// local handles a message to one of this module's components.
func (r *replica) local(node, port, body string) (string, bool) {
	if !slices.Contains(r.cfg.Components, node) {
		return "", false
	}
	switch node {
	case "upper":
		return strings.ToUpper(body), true
	case "reverse":
		b := []rune(body)
		slices.Reverse(b)
		return string(b), true
	default: // echo, and any other component: the message itself
		return body, true
	}
}

// send delivers a message to node.port: locally when this module serves
// node, else to the module that does, through the pool, waiting up to
// Config.Wait for it to be discovered and connected.
func (r *replica) send(ctx context.Context, to, body string) (answer, by string, err error) {
	node, port, ok := strings.Cut(to, ".")
	if !ok || node == "" || port == "" {
		return "", "", fmt.Errorf("destination %q: want node.port", to)
	}
	if out, ok := r.local(node, port, body); ok {
		return out, r.cfg.Module + "/" + r.cfg.Replica, nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Wait)
	defer cancel()
	changed := make(chan struct{}, 1)
	r.modules.Output().Notify(ctx, changed)
	r.pool.Connections().Notify(ctx, changed)
	for {
		owner := r.owner(node)
		if owner != "" {
			c, err := r.pool.Get(owner)
			if err == nil {
				return r.forward(ctx, c, owner, to, body)
			}
			if ctx.Err() == nil {
				r.log.Debug("waiting for a connection", "module", owner, "error", err)
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			if owner == "" {
				return "", "", fmt.Errorf("message to %s: %w (waited %v for a TinyModule listing %q)", to, ErrNoOwner, r.cfg.Wait, node)
			}
			return "", "", fmt.Errorf("message to %s: module %s: %w (no connection after %v)", to, owner, ErrUnreachable, r.cfg.Wait)
		}
	}
}

// owner returns the module, other than this one, whose status lists node,
// the first by name if several do.
func (r *replica) owner(node string) string {
	var owners []string
	for k, obj := range r.modules.Output().State().All() {
		addr, components := moduleStatus(obj)
		if k.Name != r.cfg.Module && addr != "" && slices.Contains(components, node) {
			owners = append(owners, k.Name)
		}
	}
	if len(owners) == 0 {
		return ""
	}
	return slices.Min(owners)
}

func (r *replica) forward(ctx context.Context, c *moduleClient, owner, to, body string) (string, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/deliver?to="+to, strings.NewReader(body))
	if err != nil {
		return "", "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", "", fmt.Errorf("message to %s: module %s: %w: %w", to, owner, ErrUnreachable, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("message to %s: module %s answered %s: %s: %w", to, owner, resp.Status, out, ErrUnreachable)
	}
	return string(out), resp.Header.Get("X-Handled-By"), nil
}

func (r *replica) handleSend(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, by, err := r.send(req.Context(), req.URL.Query().Get("to"), string(body))
	switch {
	case errors.Is(err, ErrNoOwner), errors.Is(err, ErrUnreachable):
		http.Error(w, err.Error(), http.StatusGatewayTimeout)
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		w.Header().Set("X-Handled-By", by)
		io.WriteString(w, out)
	}
}

// handleDeliver handles a message another module forwarded: locally only,
// so that a message never travels in circles.
func (r *replica) handleDeliver(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	node, port, _ := strings.Cut(req.URL.Query().Get("to"), ".")
	out, ok := r.local(node, port, string(body))
	if !ok {
		http.Error(w, fmt.Sprintf("module %s does not serve %q", r.cfg.Module, node), http.StatusNotFound)
		return
	}
	w.Header().Set("X-Handled-By", r.cfg.Module+"/"+r.cfg.Replica)
	io.WriteString(w, out)
}
