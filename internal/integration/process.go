package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a server running as a child process of a test, which the test
// can kill and start again with the same command line. Its methods are safe
// for concurrent use.
type Process struct {
	name    string
	path    string
	args    []string
	env     []string
	logPath string
	ready   func(context.Context) error
	timeout time.Duration

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has exited
}

// Command describes a server process for StartProcess.
type Command struct {
	// Name names the server in messages ("etcd", "kube-apiserver").
	Name string
	// Path and Args are the executable and its arguments (without argv[0]).
	Path string
	Args []string
	// Env is added to the test's environment for the process ("KEY=value").
	Env []string
	// Log is the file the server's output is appended to, across restarts.
	Log string
	// Ready reports nil once the server serves; it is polled until then.
	Ready func(context.Context) error
	// Timeout bounds each start; zero means a minute.
	Timeout time.Duration
}

// StartProcess starts c, waits until it is ready, and kills it when the test
// ends. It returns an error, with the tail of the server's log, if the server
// exits or is not ready in time; the caller may retry (for instance with
// other ports).
func StartProcess(tb testing.TB, c Command) (*Process, error) {
	tb.Helper()
	p := &Process{name: c.Name, path: c.Path, args: c.Args, env: c.Env, logPath: c.Log, ready: c.Ready, timeout: c.Timeout}
	if p.timeout == 0 {
		p.timeout = time.Minute
	}
	if err := p.start(); err != nil {
		return nil, err
	}
	tb.Cleanup(func() { p.kill() })
	return p, nil
}

// Kill sends SIGKILL and waits until the process has exited, like a crash:
// nothing is flushed or closed in an orderly way. It fails the test if the
// process was not running.
func (p *Process) Kill(tb testing.TB) {
	tb.Helper()
	if !p.kill() {
		tb.Fatalf("kill %s: it was not running", p.name)
	}
}

// Restart starts the process again with the same command line and waits
// until it is ready; a process still running is killed first.
func (p *Process) Restart(tb testing.TB) {
	tb.Helper()
	p.kill()
	if err := p.start(); err != nil {
		tb.Fatalf("restart %s: %v", p.name, err)
	}
}

// Running reports whether the process is alive.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil && !closed(p.done)
}

// LogTail returns the last few kilobytes of the process's output.
func (p *Process) LogTail() string {
	b, _ := os.ReadFile(p.logPath)
	if len(b) > 8<<10 {
		b = b[len(b)-8<<10:]
	}
	return string(b)
}

func (p *Process) start() error {
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("open the log of %s: %w", p.name, err)
	}
	defer log.Close() // the child has its own descriptor
	cmd := exec.Command(p.path, p.args...)
	if len(p.env) > 0 {
		cmd.Env = append(os.Environ(), p.env...)
	}
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("run %s: %w", p.path, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()

	if err := p.waitReady(done); err != nil {
		p.kill()
		return fmt.Errorf("%w; its log ends:\n%s", err, p.LogTail())
	}
	return nil
}

// waitReady polls p.ready until it succeeds, the process exits, or the start
// timeout passes.
func (p *Process) waitReady(exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), p.timeout)
	defer cancel()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		last := p.ready(ctx)
		if last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%s exited before it was ready (last check: %v)", p.name, last)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready after %v: %w", p.name, p.timeout, last)
		case <-tick.C:
		}
	}
}

// kill sends SIGKILL and waits for the exit; it reports whether the process
// was running.
func (p *Process) kill() bool {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || closed(done) {
		return false
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	return true
}

// FreePorts returns n distinct TCP ports of 127.0.0.1 that were free a moment
// ago. Another process may take one before the caller binds it, so a caller
// that starts a server on them should retry with new ports when the server
// reports the address in use.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// StartWithPorts starts the command that command builds for n free ports of
// 127.0.0.1, as StartProcess does. Free ports can be taken by another process
// before the server binds them, so when the server reports an address in use
// it tries again with new ports, three times at most. It returns the process
// and the ports it listens on.
func StartWithPorts(tb testing.TB, n int, command func(ports []int, attempt int) Command) (*Process, []int, error) {
	tb.Helper()
	var err error
	for attempt := range 3 {
		var ports []int
		if ports, err = FreePorts(n); err != nil {
			return nil, nil, err
		}
		var p *Process
		if p, err = StartProcess(tb, command(ports, attempt)); err == nil {
			return p, ports, nil
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	return nil, nil, err
}
