package file

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// watcher follows filesystem events in the directory. While the directory
// does not exist, or when it is a symlink, it also watches the parent: to
// notice the directory's creation, and the switch of the symlink to another
// target (which the directory's own watch, on the old target, never sees).
// It only tells the provider that something may have changed: the provider
// then reads the directory.
type watcher struct {
	dir, parent   string
	fw            *fsnotify.Watcher // nil when events are off or unavailable
	events        <-chan fsnotify.Event
	errors        <-chan error
	dirWatched    bool
	parentWatched bool
	log           *slog.Logger
}

func newWatcher(dir string, enabled bool, log *slog.Logger) *watcher {
	w := &watcher{dir: dir, parent: filepath.Dir(dir), log: log}
	if !enabled {
		return w
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("cannot watch for filesystem events; relying on the rescan", "error", err)
		return w
	}
	w.fw, w.events, w.errors = fw, fw.Events, fw.Errors
	w.rewatch()
	return w
}

// rewatch makes sure the directory is watched, and the parent too when it
// is needed.
func (w *watcher) rewatch() {
	if w.fw == nil {
		return
	}
	if !w.dirWatched {
		w.dirWatched = w.fw.Add(w.dir) == nil
	}
	needParent := !w.dirWatched || isSymlink(w.dir)
	switch {
	case needParent && !w.parentWatched && w.parent != w.dir:
		w.parentWatched = w.fw.Add(w.parent) == nil
	case !needParent && w.parentWatched:
		_ = w.fw.Remove(w.parent)
		w.parentWatched = false
	}
}

func isSymlink(path string) bool {
	info, err := os.Lstat(path)
	return err == nil && info.Mode()&fs.ModeSymlink != 0
}

// relevant reports whether ev may change what the directory holds, and
// follows changes of the directory itself.
func (w *watcher) relevant(ev fsnotify.Event) bool {
	if ev.Name == w.dir {
		// Created, removed, renamed, or a symlink switched: watch whatever
		// the path leads to now.
		if w.dirWatched {
			_ = w.fw.Remove(w.dir)
			w.dirWatched = false
		}
		w.rewatch()
		return true
	}
	return filepath.Dir(ev.Name) == w.dir
}

func (w *watcher) close() {
	if w.fw != nil {
		_ = w.fw.Close()
	}
}
