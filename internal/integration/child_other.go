//go:build !linux

package integration

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
