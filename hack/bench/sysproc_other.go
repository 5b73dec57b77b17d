//go:build unix && !linux

package main

import "syscall"

// sysProcAttr puts the server in its own process group, so a Ctrl-C reaches
// only bench, which then stops the server with SIGTERM.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
