package file

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/switchyard-go/switchyard/runner"
)

// scanner holds what the provider knows about the directory, and turns a
// reading of it into writes to the maps. It is used by the Run goroutine
// only.
type scanner struct {
	p     *Provider
	kinds map[string]sink
	files map[string]*fileState // by name in the directory
	// claims lists the files defining each document, in the order they
	// started to: claims[k][0] provides it. Files read in the same scan
	// join in name order, since the directory is read in that order.
	claims map[docKey][]string
	dirErr error

	recheck  bool              // a file is to be read again a debounce period after this scan
	dupsSeen map[string]bool   // messages of the duplicate errors already announced
	reported map[string]string // the problems reported through Health: message by key
}

// fileState is one file: the documents it provides (its last good contents)
// and the problem with its current contents, if any.
type fileState struct {
	sum  [sha256.Size]byte // of the contents last decoded
	read bool              // sum is set
	info fs.FileInfo       // of the file last read; nil unless it vouches for sum (see sameFile)
	// emptySince is when the file was first found empty while it provided
	// documents; zero when it was not.
	emptySince time.Time
	docs       map[docKey]document
	err        error
}

func newScanner(p *Provider, kinds map[string]sink) *scanner {
	return &scanner{
		p:        p,
		kinds:    kinds,
		files:    make(map[string]*fileState),
		claims:   make(map[docKey][]string),
		dupsSeen: make(map[string]bool),
		reported: make(map[string]string),
	}
}

// wanted reports whether a directory entry is a document file.
func wanted(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (s *scanner) path(name string) string { return s.p.src.path(name) }

// scan reads the directory, publishes what changed (everything when first)
// and reports the problems. It returns true when the directory should be
// read again a debounce period later.
func (s *scanner) scan(ctx context.Context, first bool) (recheck bool) {
	s.recheck = false
	var fresh []*DocumentError // problems found now, to announce
	affected := make(map[docKey]bool)
	entries, err := s.p.src.readDir()
	if err != nil {
		// Keep the documents: a directory that is being replaced should not
		// empty the maps for a moment.
		derr := &DocumentError{File: s.p.dir, Err: fmt.Errorf("read directory: %w", err)}
		if s.dirErr == nil || s.dirErr.Error() != derr.Error() {
			fresh = append(fresh, derr)
		}
		s.dirErr = derr
	} else {
		s.dirErr = nil
		present := make(map[string]bool)
		start := time.Now()
		for _, e := range entries {
			if name := e.Name(); wanted(name) && s.read(name, start, affected, &fresh) {
				present[name] = true
			}
		}
		for name := range s.files {
			if !present[name] {
				s.setDocs(name, nil, affected)
				delete(s.files, name)
			}
		}
	}
	// Problems first: a reader that sees a scan's documents in the maps
	// (or Ready) then finds the same scan's problems in Errors.
	s.report(ctx, fresh)
	s.publish(affected, first)
	return s.recheck
}

// read reads one file, if it may have changed since it was last read, and
// reports whether it exists. start is when the scan started.
func (s *scanner) read(name string, start time.Time, affected map[docKey]bool, fresh *[]*DocumentError) bool {
	path := s.path(name)
	info, err := s.p.src.stat(name)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !info.Mode().IsRegular()) {
		return false // gone since the directory was read, a dangling symlink, or not a file
	}
	f := s.files[name]
	if err == nil && f != nil && f.read && sameFile(f.info, info) {
		return true // unchanged: not even read
	}
	var data []byte
	limit := s.p.cfg.maxSize
	if err == nil {
		if limit > 0 && info.Size() > limit {
			err = tooLarge(info.Size(), limit)
		} else {
			data, info, err = readFile(s.p.src, name, limit)
			if errors.Is(err, fs.ErrNotExist) {
				return false
			}
		}
	}
	if f == nil {
		f = &fileState{}
		s.files[name] = f
	}
	if err != nil {
		derr := &DocumentError{File: path, Err: err}
		if !errors.Is(err, ErrTooLarge) {
			derr.Err = fmt.Errorf("read: %w", err)
		}
		if f.err == nil || f.err.Error() != derr.Error() {
			*fresh = append(*fresh, derr)
		}
		f.err, f.read, f.info = derr, false, nil
		return true
	}
	// Only a file last modified a while ago can be trusted to show a
	// change in its size or modification time.
	f.info = nil
	if info.ModTime().Before(start.Add(-racyWindow)) {
		f.info = info
	}
	if len(data) == 0 && len(f.docs) > 0 && !s.p.static {
		// A writer may have truncated the file and not written yet: keep
		// its documents until a scan a debounce period later still finds
		// it empty.
		if f.emptySince.IsZero() {
			f.emptySince = start
		}
		if start.Sub(f.emptySince) < s.p.cfg.debounce {
			f.info = nil // read it again
			s.recheck = true
			return true
		}
	}
	f.emptySince = time.Time{}
	sum := sha256.Sum256(data)
	if f.read && sum == f.sum {
		return true // unchanged
	}
	f.sum, f.read = sum, true
	docs, err := decodeFile(path, data, s.kinds)
	if err != nil {
		f.err = err
		*fresh = append(*fresh, err.(*DocumentError))
		return true
	}
	f.err = nil
	s.setDocs(name, docs, affected)
	return true
}

// setDocs makes docs the documents that file name provides.
func (s *scanner) setDocs(name string, docs map[docKey]document, affected map[docKey]bool) {
	f := s.files[name]
	for key := range f.docs {
		if _, still := docs[key]; !still {
			c := s.claims[key]
			if i := slices.Index(c, name); i >= 0 {
				c = slices.Delete(c, i, i+1)
			}
			if len(c) == 0 {
				delete(s.claims, key)
			} else {
				s.claims[key] = c
			}
			affected[key] = true
		}
	}
	for key := range docs {
		if _, had := f.docs[key]; !had {
			s.claims[key] = append(s.claims[key], name)
		}
		affected[key] = true // the value may have changed; equal values are not written
	}
	f.docs = docs
}

// publish writes the affected documents to their maps, one batch per map,
// or makes every map exactly what the directory holds when first.
func (s *scanner) publish(affected map[docKey]bool, first bool) {
	if first {
		all := make(map[string]map[types.NamespacedName]any)
		for key, c := range s.claims {
			if all[key.kind] == nil {
				all[key.kind] = make(map[types.NamespacedName]any)
			}
			all[key.kind][key.name] = s.files[c[0]].docs[key].value
		}
		for kind, sk := range s.kinds {
			sk.replace(all[kind])
		}
		return
	}
	ops := make(map[string][]op)
	for key := range affected {
		o := op{name: key.name}
		if c := s.claims[key]; len(c) > 0 {
			o.value = s.files[c[0]].docs[key].value
		}
		ops[key.kind] = append(ops[key.kind], o)
	}
	for kind, list := range ops {
		s.kinds[kind].apply(list)
	}
}

// report works out the current problems, announces the new ones, and
// publishes them in Provider.Errors and through the runner's Health, each
// under its file's path.
func (s *scanner) report(ctx context.Context, fresh []*DocumentError) {
	dups := make(map[string][]error)
	dupsSeen := make(map[string]bool)
	for key, c := range s.claims {
		for _, loser := range c[1:] {
			derr := &DocumentError{
				File: s.path(loser), Index: s.files[loser].docs[key].index, Kind: key.kind, Name: key.name,
				Err: fmt.Errorf("%w: already defined in %s", ErrDuplicate, s.path(c[0])),
			}
			dups[loser] = append(dups[loser], derr)
			msg := derr.Error()
			dupsSeen[msg] = true
			if !s.dupsSeen[msg] {
				fresh = append(fresh, derr)
			}
		}
	}
	s.dupsSeen = dupsSeen

	errs := make(map[string]error)
	if s.dirErr != nil {
		errs[s.p.dir] = s.dirErr
	}
	for name, f := range s.files {
		var list []error
		if f.err != nil {
			list = append(list, f.err)
		}
		d := dups[name]
		slices.SortFunc(d, func(a, b error) int {
			return cmp.Compare(a.(*DocumentError).Index, b.(*DocumentError).Index)
		})
		list = append(list, d...)
		switch len(list) {
		case 0:
		case 1:
			errs[s.path(name)] = list[0]
		default:
			errs[s.path(name)] = errors.Join(list...)
		}
	}
	s.p.mu.Lock()
	s.p.errs = errs
	s.p.mu.Unlock()

	slices.SortFunc(fresh, func(a, b *DocumentError) int { return strings.Compare(a.Error(), b.Error()) })
	for _, derr := range fresh {
		s.p.cfg.logger.Warn("bad document file", "runner", s.p.Name(), "file", derr.File, "error", derr)
		if s.p.cfg.onError != nil {
			s.p.cfg.onError(derr)
		}
	}

	// Each problem under its own key, so that fixing one file clears its
	// problem only; in path order, for a readable log.
	health := runner.HealthOf(ctx)
	for _, key := range slices.Sorted(maps.Keys(s.reported)) {
		if _, still := errs[key]; !still {
			health.Report(key, nil)
			delete(s.reported, key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(errs)) {
		if msg := errs[key].Error(); s.reported[key] != msg {
			health.Report(key, errs[key])
			s.reported[key] = msg
		}
	}
}
