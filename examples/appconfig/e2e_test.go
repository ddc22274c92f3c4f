package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFollowsChanges runs appconfig over a directory and edits it: only the
// files of the applications that change are written again, a broken
// configuration is reported and leaves the last good output in place, and
// an application removed loses its file.
func TestFollowsChanges(t *testing.T) {
	in, out := t.TempDir(), t.TempDir()
	copyDir(t, "testdata/in", in)
	editFile(t, filepath.Join(out, "gone_app.yaml"), header+" from AppConfiguration gone/app. Do not edit.\n")
	editFile(t, filepath.Join(out, "mine.yaml"), "kind: NotGenerated\n")
	editFile(t, filepath.Join(out, "notes.txt"), "not ours\n")

	p := start(t, in, out)
	waitWrites(t, p, map[string]int{"blog_site.yaml": 1, "shop_web.yaml": 1, "shop_worker.yaml": 1})
	if got, want := files(t, out), []string{"blog_site.yaml", "mine.yaml", "notes.txt", "shop_web.yaml", "shop_worker.yaml"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("files %q, want %q", got, want)
	}
	os.Remove(filepath.Join(out, "mine.yaml"))
	os.Remove(filepath.Join(out, "notes.txt"))
	compareDirs(t, "testdata/golden", out)
	mtimes := modTimes(t, out)

	shop := read(t, filepath.Join(in, "shop.yaml"))

	t.Run("editing one application writes its file only", func(t *testing.T) {
		// shop.yaml holds web and worker: the provider reads both again,
		// and only worker changed.
		editFile(t, filepath.Join(in, "shop.yaml"), strings.Replace(shop, "shop-worker:1.4.2", "shop-worker:1.5.0", 1))
		waitWrites(t, p, map[string]int{"blog_site.yaml": 1, "shop_web.yaml": 1, "shop_worker.yaml": 2})
		if !strings.Contains(read(t, filepath.Join(out, "shop_worker.yaml")), "image: ghcr.io/example/shop-worker:1.5.0") {
			t.Error("shop_worker.yaml does not have the new image")
		}
		now := modTimes(t, out)
		for _, name := range []string{"blog_site.yaml", "shop_web.yaml"} {
			if !now[name].Equal(mtimes[name]) {
				t.Errorf("%s was modified", name)
			}
		}
	})

	t.Run("a broken document is reported and keeps the last good output", func(t *testing.T) {
		before := read(t, filepath.Join(out, "shop_web.yaml"))
		broken := strings.Replace(shop, "    containers:\n      web:", "    replica: 2\n    containers:\n      web:", 1)
		editFile(t, filepath.Join(in, "shop.yaml"), broken)
		waitProblem(t, p.group, "config", filepath.Join(in, "shop.yaml"), "document 1 (kind AppConfiguration, name shop/web)", `unknown field "replica"`)
		if now := read(t, filepath.Join(out, "shop_web.yaml")); now != before {
			t.Errorf("shop_web.yaml changed with the broken document:\n%s", now)
		}
		// Fixed, with another change: the file is written once, with it.
		editFile(t, filepath.Join(in, "shop.yaml"), strings.Replace(shop, "LOG_LEVEL: info", "LOG_LEVEL: debug", 1))
		waitProblem(t, p.group, "config", filepath.Join(in, "shop.yaml"))
		waitWrites(t, p, map[string]int{"blog_site.yaml": 1, "shop_web.yaml": 2, "shop_worker.yaml": 3})
		after := read(t, filepath.Join(out, "shop_web.yaml"))
		if strings.Replace(before, "value: info", "value: debug", 1) != after {
			t.Errorf("shop_web.yaml after the fix:\n%s\nwant the one before with LOG_LEVEL debug:\n%s", after, before)
		}
	})

	t.Run("a configuration a generator rejects is reported and keeps the last good output", func(t *testing.T) {
		before := read(t, filepath.Join(out, "shop_web.yaml"))
		editFile(t, filepath.Join(in, "shop.yaml"), strings.Replace(shop, "database: shop\n    prometheus", "databse: shop\n    prometheus", 1))
		waitProblem(t, p.group, "generate", "translator generate", "key shop/web", `generator "mysql"`, `unknown field "databse"`)
		if now := read(t, filepath.Join(out, "shop_web.yaml")); now != before {
			t.Errorf("shop_web.yaml changed with the rejected configuration:\n%s", now)
		}
		editFile(t, filepath.Join(in, "shop.yaml"), strings.Replace(shop, "LOG_LEVEL: info", "LOG_LEVEL: debug", 1))
		waitProblem(t, p.group, "generate", "translator generate")
		// Back to what it was: nothing to write.
		waitWrites(t, p, map[string]int{"blog_site.yaml": 1, "shop_web.yaml": 2, "shop_worker.yaml": 3})
		if after := read(t, filepath.Join(out, "shop_web.yaml")); after != before {
			t.Errorf("shop_web.yaml changed:\n%s", after)
		}
	})

	t.Run("a workspace change writes the files of the applications it concerns", func(t *testing.T) {
		ws := read(t, filepath.Join(in, "workspaces.yaml"))
		editFile(t, filepath.Join(in, "workspaces.yaml"), strings.Replace(ws, "interval: 15s", "interval: 1m", 1))
		// Only web, in prod, uses prometheus there.
		waitWrites(t, p, map[string]int{"blog_site.yaml": 1, "shop_web.yaml": 3, "shop_worker.yaml": 3})
		if !strings.Contains(read(t, filepath.Join(out, "shop_web.yaml")), "interval: 1m") {
			t.Error("shop_web.yaml does not have the new interval")
		}
	})

	t.Run("an application removed loses its file", func(t *testing.T) {
		if err := os.Remove(filepath.Join(in, "blog.yaml")); err != nil {
			t.Fatal(err)
		}
		waitWrites(t, p, map[string]int{"shop_web.yaml": 3, "shop_worker.yaml": 3})
		if got := files(t, out); strings.Join(got, " ") != "shop_web.yaml shop_worker.yaml" {
			t.Errorf("files %q after blog.yaml was removed", got)
		}
	})
}

func read(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func modTimes(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	out := make(map[string]time.Time)
	for _, name := range files(t, dir) {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = info.ModTime()
	}
	return out
}
