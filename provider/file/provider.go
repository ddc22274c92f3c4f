package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Provider is a runner that keeps the maps created by Register in step with
// the documents in a directory. It also implements runner.Readier.
//
// Register kinds before running it. Its methods are safe for concurrent use;
// Run must not be called again while it is running. A Provider must not be
// copied.
type Provider struct {
	dir    string // as given, cleaned: used in names and errors
	watch  string // absolute, when it could be determined: used for events
	src    source
	static bool // made by NewFS: read once, not watched
	cfg    config

	ready     chan struct{}
	readyOnce sync.Once

	mu      sync.Mutex
	kinds   map[string]sink
	started bool // Run has been called: no more kinds
	running bool
	errs    map[string]error // current problems by file path
}

// New returns a provider for the documents in dir. dir need not exist yet:
// until it does, the registered maps are empty (or keep what they had, if it
// disappears later) and a problem is reported. Its runner name is "file:"
// followed by dir, unless WithName says otherwise.
func New(dir string, opts ...Option) *Provider {
	dir = filepath.Clean(dir)
	watch := dir
	if abs, err := filepath.Abs(dir); err == nil {
		watch = abs
	}
	return &Provider{
		dir:   dir,
		watch: watch,
		src:   osSource{dir: dir},
		cfg:   newConfig(opts),
		ready: make(chan struct{}),
		kinds: make(map[string]sink),
		errs:  make(map[string]error),
	}
}

// NewFS returns a provider for the documents in the directory dir of fsys
// ("." for its root), such as the contents of an embed.FS. They are read and
// published once, when the provider runs, and it is ready after that: fsys
// is taken to be static, so it is neither watched nor read again. Documents
// are decoded, and problems reported, exactly as for New; file paths in
// errors are paths within fsys. Its runner name is "file:fs:" followed by
// dir, unless WithName says otherwise.
//
// NewFS panics when given an option about following changes
// (WithDebounce, WithRescanInterval, WithFSNotify), naming it: there are
// none to follow, and an option silently ignored would mislead.
func NewFS(fsys fs.FS, dir string, opts ...Option) *Provider {
	dir = path.Clean(dir)
	cfg := newConfig(opts)
	if len(cfg.watching) > 0 {
		names := make([]string, len(cfg.watching))
		for i, name := range cfg.watching {
			names[i] = "file." + name
		}
		panic(fmt.Sprintf("file.NewFS(%q): %s: an fs.FS is read once, not watched: options about watching apply to file.New only",
			dir, strings.Join(names, ", ")))
	}
	return &Provider{
		dir:    dir,
		src:    fsSource{fsys: fsys, dir: dir},
		static: true,
		cfg:    cfg,
		ready:  make(chan struct{}),
		kinds:  make(map[string]sink),
		errs:   make(map[string]error),
	}
}

// Name returns the name given with WithName; by default, "file:" followed
// by the directory, or "file:fs:" followed by the directory within fsys for
// a provider made by NewFS.
func (p *Provider) Name() string {
	if p.cfg.name != "" {
		return p.cfg.name
	}
	if p.static {
		return "file:fs:" + p.dir
	}
	return "file:" + p.dir
}

// Ready is closed once the first reading of the directory has been published
// (even if the directory does not exist or holds bad files): when every map
// made by Register is initialized, or after the first reading when no kind
// is registered. Consumers of one kind can wait on that map's Initialized
// instead.
func (p *Provider) Ready() <-chan struct{} { return p.ready }

// Errors returns the current problems, by file path: for each file whose
// last good documents are published in place of its current contents, or
// whose documents lose to another file's, a *DocumentError (joined with
// errors.Join when there are several). A problem with the directory itself
// is listed under the directory's path. A problem disappears once fixed.
// Each reading of the directory updates Errors before it publishes its
// documents, so once a map shows a reading's documents, Errors shows that
// reading's problems (or their absence).
func (p *Provider) Errors() map[string]error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.errs)
}

// errAlreadyRunning is returned by Run when it is called while running.
var errAlreadyRunning = errors.New("file provider: already running")

// Run reads the directory, publishes its documents, and then follows its
// changes until ctx is done, when it returns nil. A provider made by NewFS
// only waits for ctx after the first reading.
//
// In a runner group, each problem listed by Errors is also reported through
// runner.HealthOf(ctx) under its key there (the file's path, or the
// directory's), and cleared under that key once fixed: one file's fix never
// clears another's problem.
func (p *Provider) Run(ctx context.Context) error {
	p.mu.Lock()
	if p.running {
		p.mu.Unlock()
		return errAlreadyRunning
	}
	p.started, p.running = true, true
	kinds := maps.Clone(p.kinds)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = false
		p.mu.Unlock()
	}()

	s := newScanner(p, kinds)
	loaded := func() {
		for _, k := range kinds {
			k.initialized()
		}
		p.readyOnce.Do(func() { close(p.ready) })
	}
	if p.static {
		s.scan(ctx, true)
		loaded()
		<-ctx.Done()
		return nil
	}

	log := p.cfg.logger.With("runner", p.Name())
	w := newWatcher(p.watch, p.cfg.notify, log)
	defer w.close()

	recheck := s.scan(ctx, true)
	loaded()

	var tick <-chan time.Time
	if p.cfg.rescan > 0 {
		t := time.NewTicker(p.cfg.rescan)
		defer t.Stop()
		tick = t.C
	}
	debounce := time.NewTimer(time.Hour)
	debounce.Stop()
	var pendingSince time.Time // zero when no scan is pending
	schedule := func() {
		now := time.Now()
		if pendingSince.IsZero() {
			pendingSince = now
		}
		// Wait for quiet, but not forever.
		wait := min(p.cfg.debounce, pendingSince.Add(10*p.cfg.debounce).Sub(now))
		debounce.Reset(max(wait, 0))
	}
	if recheck {
		schedule()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.events:
			if !ok {
				w.events = nil
				continue
			}
			if w.relevant(ev) {
				schedule()
			}
		case err, ok := <-w.errors:
			if !ok {
				w.errors = nil
				continue
			}
			// Events may have been lost (an overflow): read everything.
			log.Warn("watching the directory", "error", err)
			schedule()
		case <-debounce.C:
			pendingSince = time.Time{}
			w.rewatch()
			if s.scan(ctx, false) {
				schedule()
			}
		case <-tick:
			w.rewatch()
			if s.scan(ctx, false) {
				schedule()
			}
		}
	}
}
