package kubetest

import "k8s.io/apimachinery/pkg/runtime/schema"

// WidgetCRD is the manifest of a small custom resource for tests: Widget,
// namespaced, in group test.switchyard.dev at version v1, with a status
// subresource and free-form spec and status.
const WidgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.test.switchyard.dev
spec:
  group: test.switchyard.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// WidgetResource is the resource WidgetCRD defines.
var WidgetResource = schema.GroupVersionResource{Group: "test.switchyard.dev", Version: "v1", Resource: "widgets"}
