// Package status writes what a program decides about Kubernetes objects
// back to them: a Writer keeps the status subresource of each object equal to
// the value a map of desired statuses holds for it, and only while the
// process leads an election, so that of several replicas computing the same
// statuses exactly one writes them.
//
// The writer compares before it writes: it reads the object from a map the
// program already keeps (an informer's output) and sends nothing when the
// status there is the desired one. An update made from a stale copy is
// refused by the API server with 409 Conflict; the writer then reads the
// object afresh and tries again, comparing again first, so it never
// overwrites a newer change to the rest of the object and never writes a
// status that is already there. (A map that lags behind the API server
// can cost an update that the server refuses in this way, never one it
// accepts.)
package status
