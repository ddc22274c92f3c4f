package file

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Sentinel errors wrapped by DocumentError, for callers that branch on the
// kind of problem.
var (
	// ErrInvalid: the file is not valid YAML or JSON, a key appears twice
	// in one object, a document is not an object, or a document does not
	// decode into its kind's Go type (a field of the wrong type, or one the
	// type does not have).
	ErrInvalid = errors.New("invalid document")
	// ErrMissingKind: a document has no kind.
	ErrMissingKind = errors.New("missing kind")
	// ErrUnknownKind: a document's kind was not registered.
	ErrUnknownKind = errors.New("unknown kind")
	// ErrMissingName: a document has no metadata.name.
	ErrMissingName = errors.New("missing metadata.name")
	// ErrDuplicate: another document has the same kind, namespace and
	// name, in the same file or in another file that provides it.
	ErrDuplicate = errors.New("duplicate name")
	// ErrTooLarge: the file is larger than the limit set by
	// WithMaxFileSize; it was not read.
	ErrTooLarge = errors.New("too large")
)

// DocumentError is a problem with a file or with one document in it. It
// wraps one of the sentinel errors above, or the error from reading the
// file or the directory. A DocumentError is not modified after it is
// reported, so it may be kept and read from any goroutine.
type DocumentError struct {
	File  string               // the file's path
	Index int                  // the document's position in the file, from 1; 0 when the whole file is concerned
	Kind  string               // the document's kind, when known
	Name  types.NamespacedName // the document's namespace and name, when known
	Err   error
}

// Error names the file, then the document's position, kind and name when
// known, then the problem.
func (e *DocumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "file %s", e.File)
	if e.Index > 0 {
		fmt.Fprintf(&b, ": document %d", e.Index)
		var known []string
		if e.Kind != "" {
			known = append(known, "kind "+e.Kind)
		}
		if e.Name.Name != "" && e.Name.Namespace != "" {
			known = append(known, "name "+e.Name.Namespace+"/"+e.Name.Name)
		} else if e.Name.Name != "" {
			known = append(known, "name "+e.Name.Name)
		}
		if len(known) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(known, ", "))
		}
	}
	fmt.Fprintf(&b, ": %v", e.Err)
	return b.String()
}

// Unwrap returns Err, so errors.Is matches the sentinel errors.
func (e *DocumentError) Unwrap() error { return e.Err }
