package admin

import (
	"net/http"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// Readiness returns the handler of /readyz for the runner group whose
// status map is status (runner.Group.Status): it answers 200 and
//
//	{"ready": true}
//
// when the group has started every runner and each is ready (PhaseReady),
// and otherwise 503 and
//
//	{"ready": false, "notReady": {"<runner>": <its runner.Status>, ...}}
//
// naming the runners that are not, with their phase and problems; before the
// group has started them all, "pendingInitializers" names whom the status
// map waits for. A group with no runners is ready once it runs, as
// runner.Group.Ready is.
func Readiness(status watchable.View[string, runner.Status]) http.Handler {
	status.Len() // a zero View panics here, rather than in a request
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var answer struct {
			Ready               bool                     `json:"ready"`
			NotReady            map[string]runner.Status `json:"notReady,omitempty"`
			PendingInitializers []string                 `json:"pendingInitializers,omitempty"`
		}
		select {
		case <-status.Initialized():
		default:
			answer.PendingInitializers = status.PendingInitializers()
		}
		for name, s := range status.State().All() {
			if s.Phase != runner.PhaseReady {
				if answer.NotReady == nil {
					answer.NotReady = make(map[string]runner.Status)
				}
				answer.NotReady[name] = s
			}
		}
		answer.Ready = answer.NotReady == nil && answer.PendingInitializers == nil
		code := http.StatusOK
		if !answer.Ready {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, answer)
	})
}

// Runners returns the handler of /debug/runners for the runner group whose
// status map is status: it answers 200 and a JSON object with the Status of
// each runner (phase, error, problems, since) under its name.
func Runners(status watchable.View[string, runner.Status]) http.Handler {
	status.Len() // a zero View panics here, rather than in a request
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, status.State().Map())
	})
}
