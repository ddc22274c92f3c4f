package generate

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sentinel errors, for callers that branch on why an application failed.
// Each reaches the translator's reports wrapped in a *translator.KeyError
// whose Key is the application's key.
var (
	// ErrUnknownWorkspace: the application names a workspace that the
	// workspaces map does not hold.
	ErrUnknownWorkspace = errors.New("unknown workspace")
	// ErrUnknownModule: the application has an accessory for which no
	// generator is registered.
	ErrUnknownModule = errors.New("no generator for module")
	// ErrInvalidResource: a generator returned a resource without an ID
	// that none can be made for, one that does not encode to JSON, or
	// marked as the workload by another generator than the workload's.
	ErrInvalidResource = errors.New("invalid resource")
	// ErrNoWorkload: the workload generator returned no resource, or
	// several without marking exactly one as the workload.
	ErrNoWorkload = errors.New("no workload")
	// ErrPatch: a patcher cannot be applied to the workload (it has no
	// containers for environment variables, a field on the way is not an
	// object, or the patch changes the workload's ID).
	ErrPatch = errors.New("cannot apply patch")
	// ErrConflict is matched (errors.Is) by every *ConflictError.
	ErrConflict = errors.New("generators conflict")
)

// GeneratorError is the failure of one generator for one application: the
// error it returned, or what was wrong with its response.
type GeneratorError struct {
	Module string // the generator's module name
	Err    error
}

// Error names the generator, then the failure.
func (e *GeneratorError) Error() string {
	return fmt.Sprintf("generator %q: %v", e.Module, e.Err)
}

// Unwrap returns Err.
func (e *GeneratorError) Unwrap() error { return e.Err }

// ConflictError reports that two generators set the same key of an
// application to different values, or that one sets a value that the
// other's change lies within (a merge patch replacing the containers, and
// an environment variable for them). The application keeps its last good
// resources until the conflict is resolved. Generators that set a key to
// equal values do not conflict.
type ConflictError struct {
	// Generators are the two generators' module names, in the order they
	// ran.
	Generators [2]string
	// Keys say what each generator sets: a `label "team"`, an
	// `environment variable "DB_HOST"`, a `field spec.replicas`, a
	// `resource "v1:Secret:shop:web-mysql"`. They are equal unless one lies
	// within the other.
	Keys [2]string
	// Values are the values each generator sets (nil: deleted by a merge
	// patch).
	Values [2]any
}

// Error names both generators and what they set.
func (e *ConflictError) Error() string {
	if e.Keys[0] == e.Keys[1] {
		return fmt.Sprintf("generators %q and %q set %s to different values: %s and %s",
			e.Generators[0], e.Generators[1], e.Keys[0], brief(e.Values[0]), brief(e.Values[1]))
	}
	return fmt.Sprintf("generators %q and %q conflict: %q sets %s to %s, %q sets %s to %s",
		e.Generators[0], e.Generators[1],
		e.Generators[0], e.Keys[0], brief(e.Values[0]),
		e.Generators[1], e.Keys[1], brief(e.Values[1]))
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// brief renders a value for an error message: as JSON, cut short.
func brief(v any) string {
	const max = 60
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(data) > max {
		return string(data[:max]) + "…"
	}
	return string(data)
}
