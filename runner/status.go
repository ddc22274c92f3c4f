package runner

import "time"

// State is the stage of a runner's lifetime.
type State string

// The states a runner goes through: StateStarting, then StateRunning once
// its Run has been called, StateReady once it is ready (see Readier; a runner
// that does not implement Readier is ready as soon as it runs), and finally
// StateStopped or StateFailed.
const (
	// StateStarting: the group has accepted the runner but not called Run yet.
	StateStarting State = "starting"
	// StateRunning: Run has been called; a Readier is not ready yet.
	StateRunning State = "running"
	// StateReady: Run has been called and the runner is ready.
	StateReady State = "ready"
	// StateStopped: Run returned nil, or the context error after the group
	// was cancelled.
	StateStopped State = "stopped"
	// StateFailed: Run returned an error or panicked, or did not return
	// within the grace period after the group was cancelled.
	StateFailed State = "failed"
)

// Status is what a group publishes about one of its runners.
//
// Status holds no references (time.Time's location is immutable), so it is
// stored in a watchable.Map as it is; its JSON form suits an admin page.
type Status struct {
	// State is the runner's stage.
	State State `json:"state"`
	// Err is why the runner failed, when State is StateFailed; for a panic
	// it includes the stack.
	Err string `json:"err,omitempty"`
	// Problem is the latest problem the runner reported through Report and
	// has not cleared. It survives state changes.
	Problem string `json:"problem,omitempty"`
	// Since is when the runner entered State.
	Since time.Time `json:"since"`
}

// DeepCopy returns s: a Status shares no mutable memory.
func (s Status) DeepCopy() Status { return s }

// Equal reports whether s and o are the same status, comparing Since with
// time.Time.Equal.
func (s Status) Equal(o Status) bool {
	return s.State == o.State && s.Err == o.Err && s.Problem == o.Problem && s.Since.Equal(o.Since)
}
