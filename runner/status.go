package runner

import "time"

// Phase is the stage of a runner's lifetime.
type Phase string

// The phases a runner goes through: PhaseStarting, then PhaseRunning once
// its Run has been called, PhaseReady once it is ready (see Readier; a
// runner that does not implement Readier is ready as soon as it runs), and
// finally PhaseStopped or PhaseFailed.
const (
	// PhaseStarting: the group has accepted the runner but not called Run yet.
	PhaseStarting Phase = "starting"
	// PhaseRunning: Run has been called; a Readier is not ready yet.
	PhaseRunning Phase = "running"
	// PhaseReady: Run has been called and the runner is ready.
	PhaseReady Phase = "ready"
	// PhaseStopped: Run returned nil, or the context error after the group
	// was cancelled.
	PhaseStopped Phase = "stopped"
	// PhaseFailed: Run returned an error or panicked, or did not return
	// within the grace period after the group was cancelled.
	PhaseFailed Phase = "failed"
)

// MaxProblems is the most problems a Status lists. A runner that reports a
// problem per entry of a large input (a file, a key) could otherwise make
// its Status, which is copied whenever it changes, as large as the input.
const MaxProblems = 100

// Status is what a group publishes about one of its runners. Its JSON form
// suits an admin page.
type Status struct {
	// Phase is the runner's stage.
	Phase Phase `json:"phase"`
	// Err is why the runner failed, when Phase is PhaseFailed; for a panic
	// it includes the stack.
	Err string `json:"err,omitempty"`
	// Problems are the problems the runner reported through its Health and
	// has not cleared, by key (see Health.Report), at most MaxProblems of
	// them. They survive phase changes.
	Problems map[string]string `json:"problems,omitempty"`
	// MoreProblems counts the problems the runner reported and has not
	// cleared beyond those in Problems. When one in Problems is cleared,
	// one of these takes its place.
	MoreProblems int `json:"moreProblems,omitempty"`
	// Since is when the runner entered Phase.
	Since time.Time `json:"since"`
}
