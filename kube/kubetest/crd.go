package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRD creates the CustomResourceDefinition in manifest (YAML or JSON,
// apiextensions.k8s.io/v1) and waits until it is established and its
// resource is served, so that clients and informers can use it at once. It
// returns the resource at the CRD's storage version.
func InstallCRD(tb testing.TB, cfg *rest.Config, manifest []byte) schema.GroupVersionResource {
	tb.Helper()
	gvr, crd, err := parseCRD(manifest)
	if err != nil {
		tb.Fatalf("install CRD: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	crds := client.Resource(crdResource)
	if _, err := crds.Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("create CRD %s: %v", crd.GetName(), err)
	}

	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return established(got), nil
	})
	if err != nil {
		tb.Fatalf("wait for CRD %s to be established: %v", crd.GetName(), err)
	}

	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	err = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		list, err := disco.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			return false, nil // not served yet
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		tb.Fatalf("wait for %s to be served: %v", gvr, err)
	}
	return gvr
}

// parseCRD decodes a CRD manifest and finds the resource it defines.
func parseCRD(manifest []byte) (schema.GroupVersionResource, *unstructured.Unstructured, error) {
	var obj map[string]any
	if err := yaml.Unmarshal(manifest, &obj); err != nil {
		return schema.GroupVersionResource{}, nil, fmt.Errorf("decode the manifest: %w", err)
	}
	crd := &unstructured.Unstructured{Object: obj}
	if gvk := crd.GroupVersionKind(); gvk.GroupKind() != (schema.GroupKind{Group: crdResource.Group, Kind: "CustomResourceDefinition"}) {
		return schema.GroupVersionResource{}, nil, fmt.Errorf("manifest is a %s, not a CustomResourceDefinition", gvk)
	}
	group, _, _ := unstructured.NestedString(obj, "spec", "group")
	plural, _, _ := unstructured.NestedString(obj, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(obj, "spec", "versions")
	for _, v := range versions {
		v, _ := v.(map[string]any)
		if storage, _ := v["storage"].(bool); storage {
			name, _ := v["name"].(string)
			return schema.GroupVersionResource{Group: group, Version: name, Resource: plural}, crd, nil
		}
	}
	return schema.GroupVersionResource{}, nil, fmt.Errorf("CRD %s has no storage version", crd.GetName())
}

func established(crd *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
	for _, c := range conds {
		c, _ := c.(map[string]any)
		if c["type"] == "Established" && c["status"] == "True" {
			return true
		}
	}
	return false
}
