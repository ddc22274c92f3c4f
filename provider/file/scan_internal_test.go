package file

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// countingSource counts the files opened.
type countingSource struct {
	source
	opened []string
}

func (c *countingSource) open(name string) (fs.File, error) {
	c.opened = append(c.opened, name)
	return c.source.open(name)
}

// TestRescanSkipsUnchangedFiles checks that a scan reads only the files
// whose size, modification time or identity changed, or whose modification
// time is too recent to vouch for their contents.
func TestRescanSkipsUnchangedFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	doc := func(name string, port int) string {
		return "kind: Backend\nmetadata: {name: " + name + "}\nspec: {port: " + string(rune('0'+port)) + "}\n"
	}
	save := func(name, content string, mtime time.Time) {
		t.Helper()
		tmp := filepath.Join(dir, ".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			if err := os.Chtimes(tmp, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	touch := func(name string, mtime time.Time) {
		t.Helper()
		if err := os.Chtimes(filepath.Join(dir, name), mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	type Spec struct {
		Port int `json:"port"`
	}
	p := New(dir)
	m := Register[Object[Spec]](p, "Backend")
	src := &countingSource{source: p.src}
	p.src = src
	s := newScanner(p, p.kinds)

	save("a.yaml", doc("a", 1), old)
	save("b.yaml", doc("b", 1), old)
	for i, step := range []struct {
		what   string
		change func()
		opened int
		port   int // of b, after the scan
	}{
		{"first scan", func() {}, 2, 1},
		{"nothing changed", func() {}, 0, 1},
		{"b written now", func() { save("b.yaml", doc("b", 2), time.Time{}) }, 1, 2},
		{"b too recent to trust", func() {}, 1, 2},
		{"b's time set back", func() { touch("b.yaml", old) }, 1, 2},
		{"b settled", func() {}, 0, 2},
		{"b replaced by a file of the same size and time", func() { save("b.yaml", doc("b", 3), old) }, 1, 3},
		{"settled again", func() {}, 0, 3},
		{"b's time changed only", func() { touch("b.yaml", old.Add(time.Minute)) }, 1, 3},
	} {
		step.change()
		src.opened = nil
		s.scan(context.Background(), i == 0)
		if len(src.opened) != step.opened {
			t.Errorf("%s: opened %v, want %d files", step.what, src.opened, step.opened)
		}
		if b, _ := m.Load(types.NamespacedName{Name: "b"}); b.Spec.Port != step.port {
			t.Errorf("%s: b has port %d, want %d", step.what, b.Spec.Port, step.port)
		}
	}
	if errs := p.Errors(); len(errs) != 0 {
		t.Errorf("Errors() = %v, want none", errs)
	}
}
