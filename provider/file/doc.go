// Package file is a provider that reads a directory of YAML and JSON files
// into watchable maps, and keeps the maps in step with the files as they are
// edited, added and deleted.
//
// Each file (.yaml, .yml or .json) holds one or more documents (YAML
// documents separated by "---", or concatenated JSON objects) shaped like
// Kubernetes objects:
//
//	kind: Backend
//	metadata:
//	  name: web
//	  namespace: shop
//	spec:
//	  port: 8080
//
// Each kind is registered with its own Go type. The provider creates the
// kind's map, keyed by namespace and name, and returns a read-only view of
// it, since the provider is its only writer:
//
//	p := file.New("/etc/myapp")
//	backends := file.Register[file.Object[BackendSpec]](p, "Backend")
//	// run p, for example in a runner group; subscribe to backends
//
// The maps are initialized (watchable.View.Initialized) once the provider
// has published its first reading of the directory to all of them, so a
// consumer can wait for its input instead of being started after the
// provider; Provider.Ready is closed then too.
//
// Documents are decoded strictly: a field that the Go type does not have is
// an error, and so is a key repeated in one object, in YAML as in JSON. A
// file owns its documents: when it changes, its whole new set replaces the
// old one in one batch per map; when it is deleted, its documents are
// deleted. A file with a problem (invalid YAML or JSON, an unknown kind, a
// missing name, a field of the wrong type) keeps its last good documents
// published, and the problem is reported naming the file and the document:
// in the runner's status (runner.HealthOf) under the file's path, cleared
// when the file is fixed or removed; in the log (slog.Default() unless
// WithLogger says otherwise); to WithErrorHandler; and in Provider.Errors.
// The other files are not affected.
//
// When two files define the same kind, namespace and name, the one that
// already provides it keeps it: the other gets an error naming both files
// (its other documents still apply), and its definition takes over, with the
// error cleared, once the first file no longer defines it (edited out, or
// the file deleted). Only when both are read in the same scan, as in the
// first one, does the file whose name sorts first win.
//
// Changes are noticed through filesystem events (fsnotify) and debounced, so
// that an editor's burst of writes becomes one update, and by a periodic
// rescan that catches anything the events missed. Saves through a temporary
// file and a rename, Kubernetes ConfigMap volumes (which swap a symlinked
// directory inside the directory), and a directory that is itself a symlink
// switched to another target are all followed by events. Only the directory
// itself is read, not its subdirectories, and names starting with "." are
// ignored.
//
// A scan skips a file whose size and modification time are those of the
// very file it last read, when that time is more than a few seconds old; it
// reads any other file and compares it by content. A file larger than
// WithMaxFileSize (4 MiB by default) is not read: it is reported and keeps
// its last good documents. A file emptied (zero bytes) keeps its documents
// until it is still empty one debounce period later, so that a writer that
// truncates it before writing does not delete them for a moment; but a
// writer that stalls longer than that does, and a file written in place can
// be read half-written: write through a temporary file and a rename where
// you can.
//
// NewFS reads the same documents from a directory of an fs.FS instead, such
// as configuration compiled in with go:embed: once, when it runs, without
// watching (and so it refuses the options about watching).
package file
