package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/switchyard-go/switchyard/generate"
)

// The built-in generators. Each is a pure function of its request: the
// translator calls it again only when the request changes.

// nameLabel is the label that ties an application's resources together.
const nameLabel = "app.kubernetes.io/name"

// workloadGenerator makes the Deployment, and a Service when the workload
// has ports.
//
// Platform configuration (workspace modules.workload): labels, added to
// every resource; replicas, the default; imagePullPolicy.
func workloadGenerator(_ context.Context, req generate.Request) (generate.Response, error) {
	var w Workload
	if err := req.Workload.Decode(&w); err != nil {
		return generate.Response{}, err
	}
	var platform struct {
		Labels          map[string]string `json:"labels"`
		Replicas        *int              `json:"replicas"`
		ImagePullPolicy string            `json:"imagePullPolicy"`
	}
	if err := req.PlatformConfig.Decode(&platform); err != nil {
		return generate.Response{}, fmt.Errorf("platform configuration: %w", err)
	}
	if len(w.Containers) == 0 {
		return generate.Response{}, errors.New("the workload has no containers")
	}

	labels := map[string]any{nameLabel: req.App, "app.kubernetes.io/managed-by": "appconfig"}
	for k, v := range platform.Labels {
		labels[k] = v
	}
	replicas := 1
	if platform.Replicas != nil {
		replicas = *platform.Replicas
	}
	if w.Replicas != nil {
		replicas = *w.Replicas
	}
	var containers []any
	for _, name := range slices.Sorted(maps.Keys(w.Containers)) {
		c := w.Containers[name]
		container := map[string]any{"name": name, "image": c.Image}
		if len(c.Command) > 0 {
			container["command"] = c.Command
		}
		if len(c.Args) > 0 {
			container["args"] = c.Args
		}
		if platform.ImagePullPolicy != "" {
			container["imagePullPolicy"] = platform.ImagePullPolicy
		}
		var env []any
		for _, k := range slices.Sorted(maps.Keys(c.Env)) {
			env = append(env, map[string]any{"name": k, "value": c.Env[k]})
		}
		if env != nil {
			container["env"] = env
		}
		containers = append(containers, container)
	}
	deployment := generate.Resource{Workload: true, Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   meta(req, req.App, labels),
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{nameLabel: req.App}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": maps.Clone(labels)},
				"spec":     map[string]any{"containers": containers},
			},
		},
	}}
	resp := generate.Response{Resources: []generate.Resource{deployment}}
	if len(w.Ports) == 0 {
		return resp, nil
	}
	var ports []any
	for _, p := range w.Ports {
		protocol := p.Protocol
		if protocol == "" {
			protocol = "TCP"
		}
		target := p.TargetPort
		if target == 0 {
			target = p.Port
		}
		ports = append(ports, map[string]any{
			"name":       fmt.Sprintf("%s-%d", strings.ToLower(protocol), p.Port),
			"port":       p.Port,
			"targetPort": target,
			"protocol":   protocol,
		})
	}
	resp.Resources = append(resp.Resources, generate.Resource{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   meta(req, req.App, labels),
		"spec": map[string]any{
			"selector": map[string]any{nameLabel: req.App},
			"ports":    ports,
		},
	}})
	return resp, nil
}

// mysqlGenerator connects the application to a MySQL database that the
// platform runs: a Secret with the connection details, and environment
// variables for the workload that read them.
//
// Developer configuration (accessories.mysql): database and user, the
// application's name by default. Platform configuration (modules.mysql):
// host (required) and port (3306 by default).
func mysqlGenerator(_ context.Context, req generate.Request) (generate.Response, error) {
	var dev struct {
		Database string `json:"database"`
		User     string `json:"user"`
	}
	if err := req.DevConfig.Decode(&dev); err != nil {
		return generate.Response{}, err
	}
	var platform struct {
		Host string `json:"host"`
		Port int    `json:"port"`
	}
	if err := req.PlatformConfig.Decode(&platform); err != nil {
		return generate.Response{}, fmt.Errorf("platform configuration: %w", err)
	}
	if platform.Host == "" {
		return generate.Response{}, errors.New("the workspace configures no host for mysql (modules.mysql.host)")
	}
	if platform.Port == 0 {
		platform.Port = 3306
	}
	if dev.Database == "" {
		dev.Database = strings.ReplaceAll(req.App, "-", "_")
	}
	if dev.User == "" {
		dev.User = req.App
	}
	name := req.App + "-mysql"
	secret := generate.Resource{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   meta(req, name, map[string]any{nameLabel: req.App}),
		"type":       "Opaque",
		"stringData": map[string]any{
			"host":     platform.Host,
			"port":     strconv.Itoa(platform.Port),
			"database": dev.Database,
			"user":     dev.User,
		},
	}}
	ref := func(key string) map[string]any {
		return map[string]any{"secretKeyRef": map[string]any{"name": name, "key": key}}
	}
	return generate.Response{
		Resources: []generate.Resource{secret},
		Patchers: []generate.Patcher{{Environments: []generate.EnvVar{
			{Name: "DB_HOST", ValueFrom: ref("host")},
			{Name: "DB_PORT", ValueFrom: ref("port")},
			{Name: "DB_NAME", ValueFrom: ref("database")},
			{Name: "DB_USER", ValueFrom: ref("user")},
		}}},
	}, nil
}

// prometheusGenerator has the workload scraped: annotations on its pods,
// and a ServiceMonitor that selects its Service (which the workload
// generator made first).
//
// Developer configuration (accessories.prometheus): path (/metrics by
// default), and port, the Service port to scrape (its first by default).
// Platform configuration (modules.prometheus): interval (30s by default).
func prometheusGenerator(_ context.Context, req generate.Request) (generate.Response, error) {
	var dev struct {
		Path string `json:"path"`
		Port int    `json:"port"`
	}
	if err := req.DevConfig.Decode(&dev); err != nil {
		return generate.Response{}, err
	}
	var platform struct {
		Interval string `json:"interval"`
	}
	if err := req.PlatformConfig.Decode(&platform); err != nil {
		return generate.Response{}, fmt.Errorf("platform configuration: %w", err)
	}
	if dev.Path == "" {
		dev.Path = "/metrics"
	}
	if platform.Interval == "" {
		platform.Interval = "30s"
	}

	// The Service is the workload generator's; it is shared, read only.
	var service map[string]any
	for _, r := range req.WorkloadResources {
		if r.Object["kind"] == "Service" {
			service = r.Object
		}
	}
	if service == nil {
		return generate.Response{}, errors.New("the workload has no Service to scrape: give it a port")
	}
	spec, _ := service["spec"].(map[string]any)
	ports, _ := spec["ports"].([]any)
	var port map[string]any
	for _, p := range ports {
		p, _ := p.(map[string]any)
		if dev.Port == 0 || p["port"] == float64(dev.Port) {
			port = p
			break
		}
	}
	if port == nil {
		return generate.Response{}, fmt.Errorf("the workload's Service has no port %d", dev.Port)
	}
	selector, _ := spec["selector"].(map[string]any)

	monitor := generate.Resource{Object: map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "ServiceMonitor",
		"metadata":   meta(req, req.App, map[string]any{nameLabel: req.App}),
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": selector},
			"endpoints": []any{map[string]any{
				"port":     port["name"],
				"path":     dev.Path,
				"interval": platform.Interval,
			}},
		},
	}}
	return generate.Response{
		Resources: []generate.Resource{monitor},
		Patchers: []generate.Patcher{{PodAnnotations: map[string]string{
			"prometheus.io/scrape": "true",
			"prometheus.io/path":   dev.Path,
			"prometheus.io/port":   fmt.Sprint(port["targetPort"]),
		}}},
	}, nil
}

// meta is the metadata of a resource of req's application: its project is
// its namespace.
func meta(req generate.Request, name string, labels map[string]any) map[string]any {
	return map[string]any{"name": name, "namespace": req.Project, "labels": maps.Clone(labels)}
}
