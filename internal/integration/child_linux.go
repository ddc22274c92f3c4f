package integration

import "syscall"

// childAttr has the kernel kill the server if the test binary dies without
// running its cleanups (a panic in another goroutine, a test timeout), so no
// server outlives the test that started it.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
