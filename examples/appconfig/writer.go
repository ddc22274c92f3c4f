package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/runner"
	"github.com/switchyard-go/switchyard/watchable"
)

// writer is a runner that keeps a directory holding one file per entry of
// files (named by fileName). A file is written only when its content
// differs from what is on disk, atomically: to a temporary file in the same
// directory, then renamed over the old one, so a reader never sees half a
// file. Files that an earlier run generated (they start with the header
// render writes) for applications that are gone are removed; other files
// are left alone.
//
// Nothing is written until files is initialized, so that a partial picture
// never removes the file of an application that is merely not generated
// yet. The writer is ready once the files of the first complete picture are
// on disk.
type writer struct {
	dir   string
	files watchable.View[types.NamespacedName, string]
	log   *slog.Logger

	// written holds, for every file the writer keeps, how many times it
	// wrote it: what tests and the -once mode wait on. Its initialization
	// is the writer's readiness.
	written     watchable.Map[string, int]
	initialized func()
}

func newWriter(dir string, files watchable.View[types.NamespacedName, string], log *slog.Logger) *writer {
	w := &writer{dir: dir, files: files, log: log}
	w.initialized = w.written.RegisterInitializer("write " + dir)
	return w
}

func (w *writer) Name() string                         { return "write" }
func (w *writer) Ready() <-chan struct{}               { return w.written.Initialized() }
func (w *writer) Written() watchable.View[string, int] { return w.written.View() }
func (w *writer) path(app types.NamespacedName) (string, string) {
	return fileName(app), filepath.Join(w.dir, fileName(app))
}

// Run writes until ctx is done. A file that cannot be written is reported
// through the runner's Health under its path, and tried again with the
// next change of any file.
func (w *writer) Run(ctx context.Context) error {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return fmt.Errorf("output directory: %w", err)
	}
	health := runner.HealthOf(ctx)
	failed := make(map[types.NamespacedName]bool)
	synced := false
	for snap := range w.files.Subscribe(ctx) {
		if !snap.Initialized {
			continue
		}
		counts := w.written.State()
		changes := make(map[string]int) // file → new count, -1: removed
		write := func(app types.NamespacedName, content string) {
			name, path := w.path(app)
			wrote, err := writeFile(path, []byte(content))
			health.Report(path, err)
			if err != nil {
				failed[app] = true
				return
			}
			delete(failed, app)
			n, _ := counts.Get(name)
			if wrote {
				n++
				w.log.Info("wrote", "runner", runner.NameOf(ctx), "file", path)
			}
			changes[name] = n
		}
		if !synced {
			keep := make(map[string]bool)
			for app, content := range snap.State.All() {
				keep[fileName(app)] = true
				write(app, content)
			}
			w.removeStale(ctx, keep, changes)
		} else {
			for _, u := range snap.Updates {
				if u.Delete {
					name, path := w.path(u.Key)
					delete(failed, u.Key)
					err := os.Remove(path)
					if errors.Is(err, fs.ErrNotExist) {
						err = nil
					}
					health.Report(path, err)
					if err == nil {
						w.log.Info("removed", "runner", runner.NameOf(ctx), "file", path)
						changes[name] = -1
					}
					continue
				}
				write(u.Key, u.Value)
			}
			for app := range failed {
				if content, ok := snap.State.Get(app); ok {
					write(app, content)
				}
			}
		}
		// One write to the map per snapshot: whoever sees a file's count
		// change sees every file of the same change written.
		w.written.Batch(func(b *watchable.Batch[string, int]) {
			for name, n := range changes {
				if n < 0 {
					b.Delete(name)
				} else {
					b.Store(name, n)
				}
			}
		})
		if !synced {
			synced = true
			w.initialized()
		}
	}
	return nil
}

// removeStale removes the generated .yaml files of the directory that are
// not in keep, and temporary files that a crash may have left behind.
func (w *writer) removeStale(ctx context.Context, keep map[string]bool, changes map[string]int) {
	entries, err := os.ReadDir(w.dir)
	if err != nil {
		runner.HealthOf(ctx).Report(w.dir, err)
		return
	}
	for _, e := range entries {
		name := e.Name()
		stale := strings.HasSuffix(name, ".yaml") && !keep[name] && !strings.HasPrefix(name, ".") && generated(filepath.Join(w.dir, name))
		temp := strings.HasPrefix(name, ".") && strings.Contains(name, ".yaml.tmp-")
		if e.IsDir() || !stale && !temp {
			continue
		}
		path := filepath.Join(w.dir, name)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			runner.HealthOf(ctx).Report(path, err)
			continue
		}
		if stale {
			w.log.Info("removed", "runner", runner.NameOf(ctx), "file", path)
			changes[name] = -1
		}
	}
}

// generated reports whether the file at path starts with the header that
// render writes.
func generated(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, len(header))
	_, err = io.ReadFull(f, buf)
	return err == nil && string(buf) == header
}

// writeFile makes path hold content, atomically, and reports whether it
// had to write: not when the file holds content already.
func writeFile(path string, content []byte) (wrote bool, err error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, content) {
		return false, nil
	}
	dir, base := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(content); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}
