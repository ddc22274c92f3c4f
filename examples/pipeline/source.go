package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

//go:embed config/*.yaml
var embeddedConfig embed.FS

// configSource reads Route and DirectRegistry documents from the YAML or
// JSON files of a directory into the routes and directs maps, and re-reads
// them when the files change. Bad files are reported in the runner's status
// and leave the maps as they were.
//
// TODO(pipeline): replace with provider/file once it lands on main.
type configSource struct {
	fsys    fs.FS
	poll    time.Duration // 0: read once
	routes  *watchable.Map[types.NamespacedName, *Route]
	directs *watchable.Map[types.NamespacedName, *DirectRegistry]
	ready   chan struct{}
}

func (c *configSource) Name() string           { return "config" }
func (c *configSource) Ready() <-chan struct{} { return c.ready }

func (c *configSource) Run(ctx context.Context) error {
	var last []byte
	for {
		fingerprint, routes, directs, err := loadConfig(c.fsys)
		switch {
		case err != nil:
			runner.Report(ctx, err)
		case !bytes.Equal(fingerprint, last):
			last = fingerprint
			c.routes.Replace(routes)
			c.directs.Replace(directs)
			runner.Report(ctx, nil)
		}
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
		if c.poll == 0 {
			<-ctx.Done()
			return nil
		}
		t := time.NewTimer(c.poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// document is the envelope of every configuration document.
type document struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// loadConfig reads every .yaml, .yml and .json file at the top of fsys.
func loadConfig(fsys fs.FS) ([]byte, map[types.NamespacedName]*Route, map[types.NamespacedName]*DirectRegistry, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("read config directory: %w", err)
	}
	var all []byte
	routes := map[types.NamespacedName]*Route{}
	directs := map[types.NamespacedName]*DirectRegistry{}
	for _, e := range entries {
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, path.Ext(e.Name())) {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, nil, nil, fmt.Errorf("read %s: %w", e.Name(), err)
		}
		all = append(append(all, e.Name()...), data...)
		r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for i := 0; ; i++ {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, nil, nil, fmt.Errorf("%s: document %d: %w", e.Name(), i, err)
			}
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			if err := decodeDocument(doc, routes, directs); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: document %d: %w", e.Name(), i, err)
			}
		}
	}
	return all, routes, directs, nil
}

func stripComments(doc []byte) []byte {
	var out []byte
	for line := range strings.SplitSeq(string(doc), "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") && t != "---" {
			out = append(out, line...)
		}
	}
	return out
}

func decodeDocument(doc []byte, routes map[types.NamespacedName]*Route, directs map[types.NamespacedName]*DirectRegistry) error {
	var env document
	if err := yaml.Unmarshal(doc, &env); err != nil {
		return err
	}
	name := types.NamespacedName{Namespace: env.Metadata.Namespace, Name: env.Metadata.Name}
	if name.Name == "" {
		return errors.New("metadata.name is required")
	}
	switch env.Kind {
	case "Route":
		var d struct {
			document
			Spec *Route `json:"spec"`
		}
		if err := yaml.UnmarshalStrict(doc, &d); err != nil {
			return fmt.Errorf("Route %s: %w", name.Name, err)
		}
		if d.Spec == nil {
			return fmt.Errorf("Route %s: spec is required", name.Name)
		}
		routes[name] = d.Spec
	case "DirectRegistry":
		var d struct {
			document
			Spec *DirectRegistry `json:"spec"`
		}
		if err := yaml.UnmarshalStrict(doc, &d); err != nil {
			return fmt.Errorf("DirectRegistry %s: %w", name.Name, err)
		}
		if d.Spec == nil {
			return fmt.Errorf("DirectRegistry %s: spec is required", name.Name)
		}
		directs[name] = d.Spec
	default:
		return fmt.Errorf("unknown kind %q", env.Kind)
	}
	return nil
}
