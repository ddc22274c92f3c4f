// Package provider is where the world outside the program enters it. A
// provider watches something external (a directory of files, a service
// registry, the environment, a clock) and writes what it sees into watchable
// maps, which translators and consumers subscribe to. The rest of the program
// never talks to the outside world directly; it only reads maps.
//
// A provider is nothing more than a runner.Runner with that role, so writing
// one takes a Name and a Run method (see the example). Good providers:
//
//   - own their maps: a provider is the only writer of the maps it fills, and
//     makes them exactly what it sees, deleting what disappeared;
//   - publish related changes together, with Map.Batch or Map.Replace, so
//     subscribers never see half of an update;
//   - implement runner.Readier, closing the channel once the initial contents
//     are published, so that dependants can wait for a complete picture;
//   - survive bad input: keep the last good contents, and report the problem
//     with runner.Report instead of returning an error, which would stop the
//     program. Run returns an error only when the provider cannot go on, and
//     nil when its context is done.
//
// Subpackages hold the providers that come with switchyard: file watches a
// directory of YAML and JSON documents, and registry is a service-discovery
// control plane.
package provider

import "github.com/switchyard-go/switchyard/runner"

// Provider is a runner.Runner that writes what it watches outside the program
// into watchable maps. It is an alias: any runner is accepted where a
// Provider is expected, and a Provider runs in a runner group like any other
// runner. See the package documentation for what makes a good one.
type Provider = runner.Runner
