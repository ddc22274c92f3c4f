package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary builds the pipeline binary once for the tests that run it.
var binary = sync.OnceValues(func() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("go is not on PATH: cannot build the binary")
	}
	dir, err := os.MkdirTemp("", "pipeline-binary")
	if err != nil {
		return "", err
	}
	binaryDir = dir
	bin := filepath.Join(dir, "pipeline")
	if out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
})

// binaryDir is where binary built it; TestMain removes it.
var binaryDir string

// buildBinary returns the binary, or skips the test when it cannot be
// built here.
func buildBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, err := binary()
	if err != nil {
		if strings.Contains(err.Error(), "not on PATH") {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	return bin
}

// process is a pipeline binary run by a test, its output lines kept.
type process struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	stderr *syncBuffer
	done   chan struct{} // closed once stdout is read to its end and the process waited for
	err    error         // what Wait returned; read it only once done is closed

	mu    sync.Mutex
	lines []string
	more  chan struct{} // closed and replaced at each line

	seen int            // lines the waits have gone past; the test's goroutine only
	sent syscall.Signal // the last signal sent, for the messages
}

// startProcess runs bin with args, and env added to the test's own
// environment; when the test ends it kills the process if it is still
// running, and waits until its output is read and it has exited.
func startProcess(t *testing.T, name, bin string, env []string, args ...string) *process {
	t.Helper()
	p := &process{t: t, name: name, cmd: exec.Command(bin, args...), stderr: newSyncBuffer(), done: make(chan struct{}), more: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stderr = p.stderr
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// output returns the lines the process has printed so far.
func (p *process) output() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lines[:len(p.lines):len(p.lines)]
}

// await waits up to d for a line matching re among those printed after
// the line an earlier wait matched, and returns the output up to and
// including it. If the process exits without printing one, it returns
// its whole output and exited; it fails the test when d passes first.
func (p *process) await(re string, d time.Duration) (upTo []string, exited bool) {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		p.mu.Lock()
		lines, more := p.lines, p.more
		p.mu.Unlock()
		for ; p.seen < len(lines); p.seen++ {
			if rx.MatchString(lines[p.seen]) {
				p.seen++
				return lines[:p.seen:p.seen], false
			}
		}
		if exited {
			return lines, true
		}
		select {
		case <-more:
		case <-p.done:
			exited = true // all lines are in: look at the last ones once more
		case <-timer.C:
			p.t.Fatalf("%s: no line %q after %v; output:\n%s\nstderr:\n%s", p.name, re, d, strings.Join(lines, "\n"), p.stderr.String())
		}
	}
}

// waitLine waits up to 60 s for a line matching re, as await does, and
// returns it; it fails the test if the process exits first.
func (p *process) waitLine(re string) string {
	p.t.Helper()
	lines, exited := p.await(re, 60*time.Second)
	if exited {
		p.t.Fatalf("%s exited (%v) before printing %q; output:\n%s\nstderr:\n%s", p.name, p.err, re, strings.Join(lines, "\n"), p.stderr.String())
	}
	return lines[len(lines)-1]
}

// signal sends sig to the process.
func (p *process) signal(sig syscall.Signal) {
	p.t.Helper()
	p.sent = sig
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// waitExit waits up to d for the process to exit after a signal, and
// returns what Wait returned: nil for an exit with code 0. It fails the
// test when d passes first.
func (p *process) waitExit(d time.Duration) error {
	p.t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.done:
		return p.err
	case <-timer.C:
		p.t.Fatalf("%s still running %v after %v\nstderr:\n%s", p.name, d, p.sent, p.stderr.String())
		return nil
	}
}

// stop signals the process, checks that it exits with code 0 within d,
// and returns how long it took to exit after the signal.
func (p *process) stop(sig syscall.Signal, d time.Duration) time.Duration {
	p.t.Helper()
	start := time.Now()
	p.signal(sig)
	if err := p.waitExit(d); err != nil {
		p.t.Errorf("%s: exit after %v: %v, want code 0\nstderr:\n%s", p.name, sig, err, p.stderr.String())
	}
	return time.Since(start)
}

// kill kills the process, as a crash would, and waits until it has
// exited.
func (p *process) kill() {
	p.t.Helper()
	_ = p.cmd.Process.Kill()
	<-p.done
}
