//go:build unix

package hostwire

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// Dial connects to the unix socket at path, trying for at most wait while
// the host's backlog is full. It uses the socket calls themselves, not
// package net: net links the C resolver, which makes the front a
// dynamically linked program that starts about 1.5 ms slower.
func Dial(path string, wait time.Duration) (Conn, error) {
	if len(path) >= 104 {
		return nil, &Unavailable{Why: "the socket path is too long for a unix socket: " + path}
	}
	deadline := time.Now().Add(wait)
	for {
		fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
		if err != nil {
			return nil, os.NewSyscallError("socket", err)
		}
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
		if err == nil {
			// Non-blocking: the file goes to the runtime's poller, so reads
			// wait without a thread and deadlines work.
			return os.NewFile(uintptr(fd), path), nil
		}
		syscall.Close(fd)
		if !errors.Is(err, syscall.EAGAIN) || time.Now().After(deadline) {
			return nil, &os.PathError{Op: "connect", Path: path, Err: err}
		}
		time.Sleep(time.Millisecond)
	}
}
