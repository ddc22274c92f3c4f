// Package integration is what tests that need a real server binary share:
// where the repository's hack scripts put their builds, and the rule for a
// binary that is not there.
//
// The rule: such a test skips, naming the script that builds what it needs,
// so that `go test ./...` passes on a machine that has not run the scripts;
// but when SWITCHYARD_REQUIRE_INTEGRATION=1 (as CI sets it) it fails instead,
// so that a missing install step can never pass as a green run.
package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// RequireEnv names the environment variable that turns a missing dependency
// from a skip into a failure when it is set to 1.
const RequireEnv = "SWITCHYARD_REQUIRE_INTEGRATION"

// Required reports whether missing dependencies fail tests instead of
// skipping them.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Unavailable ends the test because something it needs is missing: it skips,
// or fails when Required. The message should say how to provide it.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		tb.Fatalf("%s (and %s=1 forbids skipping)", msg, RequireEnv)
		return
	}
	tb.Skip(msg)
}

// CacheDir is the directory the hack scripts build into by default:
// $SWITCHYARD_CACHE_DIR if set, else switchyard under the user's cache
// directory (os.UserCacheDir, the same place the scripts compute).
func CacheDir() (string, error) {
	if dir := os.Getenv("SWITCHYARD_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache directory: %w", err)
	}
	return filepath.Join(dir, "switchyard"), nil
}

// Lookup is where to look for one executable, in order.
type Lookup struct {
	// Env names an environment variable holding the executable's path; when
	// set, nothing else is tried, and a path that is not an executable fails
	// the test, since someone meant it.
	Env string
	// Dirs name environment variables holding directories to look in, in
	// order, each tried only when set.
	Dirs []string
	// Cached is the executable's path relative to CacheDir.
	Cached string
	// Script is the repository's script that builds the executable, named in
	// the message when it is missing.
	Script string
}

// Find returns the path of the executable l describes, or ends the test with
// Unavailable.
func Find(tb testing.TB, l Lookup) string {
	tb.Helper()
	name := filepath.Base(l.Cached)
	if l.Env != "" {
		if path := os.Getenv(l.Env); path != "" {
			if err := executable(path); err != nil {
				tb.Fatalf("%s=%s: %v", l.Env, path, err)
			}
			return path
		}
	}
	var tried []string
	for _, env := range l.Dirs {
		if dir := os.Getenv(env); dir != "" {
			path := filepath.Join(dir, name)
			if executable(path) == nil {
				return path
			}
			tried = append(tried, path)
		}
	}
	if cache, err := CacheDir(); err == nil {
		path := filepath.Join(cache, l.Cached)
		if executable(path) == nil {
			return path
		}
		tried = append(tried, path)
	}
	var via string
	if l.Env != "" {
		via = " or set " + l.Env
	}
	if len(l.Dirs) > 0 {
		via += " or set " + strings.Join(l.Dirs, " or ") + " to the directory it prints"
	}
	Unavailable(tb, "no %s executable (looked for %q): run %s%s", name, tried, l.Script, via)
	return ""
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}
