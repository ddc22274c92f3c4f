package main

import "testing"

// BenchmarkRemoteControllerFirstRoute is BenchmarkRegistrationToFirstRoute
// through a remote controller: two pipelines in this process, a controller
// and a gateway of it (-registry-url), talking over a loopback WebSocket.
// One op registers a backend with the controller (POST /v1/services) and
// sends requests through the gateway until one reaches it; deregistering
// it and waiting for the gateway's route to lose it are outside the
// timing. It reports p50 and p99 over the ops.
//
//	go test -run '^$' -bench 'RemoteControllerFirstRoute|RegistrationToFirstRoute' -benchtime 300x -count 3 ./examples/pipeline
func BenchmarkRemoteControllerFirstRoute(b *testing.B) {
	ctrl := startPipeline(b, map[string]string{"routes.yaml": remoteRoutes})
	benchFirstRoute(b, ctrl, startGatewayOf(b, ctrl.control, nil))
}
