package file

import (
	"log/slog"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// watcher follows filesystem events in the directory. While the directory
// does not exist, it watches the parent to notice its creation; when the
// directory goes away, it goes back to that. It only tells the provider
// that something may have changed: the provider then reads the directory.
type watcher struct {
	dir, parent string
	fw          *fsnotify.Watcher // nil when events are off or unavailable
	events      <-chan fsnotify.Event
	errors      <-chan error
	dirWatched  bool
	parentSeen  bool // the parent is watched
	log         *slog.Logger
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

// rewatch makes sure the directory is watched, or else its parent.
func (w *watcher) rewatch() {
	if w.fw == nil || w.dirWatched {
		return
	}
	if err := w.fw.Add(w.dir); err == nil {
		w.dirWatched = true
		if w.parentSeen {
			_ = w.fw.Remove(w.parent)
			w.parentSeen = false
		}
		return
	}
	if !w.parentSeen && w.parent != w.dir {
		if err := w.fw.Add(w.parent); err == nil {
			w.parentSeen = true
		}
	}
}

// relevant reports whether ev may change what the directory holds, and
// follows the directory's own removal and creation.
func (w *watcher) relevant(ev fsnotify.Event) bool {
	if ev.Name == w.dir {
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
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
