// Package provider is where the world outside the program enters it. A
// provider watches something external (a directory of files, a service
// registry, the environment, a clock) and writes what it sees into watchable
// maps, which translators and consumers subscribe to. The rest of the program
// never talks to the outside world directly; it only reads maps.
//
// A provider is nothing more than a runner.Runner with that role, so writing
// one takes a constructor, a Name and a Run method (see the example). Good
// providers:
//
//   - own their maps: the constructor creates each map the provider fills,
//     and hands out only its watchable.View, so that nobody else can write
//     to it. The provider makes each map exactly what it sees, deleting what
//     disappeared;
//   - publish related changes together, with Map.Batch or Map.Replace, so
//     subscribers never see half of an update;
//   - put readiness on the data: the constructor registers an initializer on
//     each map (Map.RegisterInitializer), and Run calls it once the first
//     complete contents are published. Consumers then wait on the map's
//     Initialized, or see Snapshot.Initialized, instead of being started in
//     the right order. A provider that implements runner.Readier derives
//     Ready from its maps' Initialized;
//   - survive bad input: keep the last good contents, and report each
//     problem with runner.HealthOf(ctx).Report under a key naming its source
//     (a file, a variable, a connection), clearing that key with a nil error
//     once it is fixed, so that one fix never hides another problem.
//     Returning an error from Run would stop the program: Run returns an
//     error only when the provider cannot go on, and nil when its context is
//     done;
//   - take what they cannot work without as arguments, and everything else
//     as functional options (opts ...Option); a WithLogger option whose nil
//     (or absence) means slog.Default(), so that nothing fails silently; and
//     a default name that says what is watched, which a WithName option can
//     replace by a stable one.
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
