//go:build unix

// Package rawfile reads small files with plain system calls. os.ReadFile
// on Linux also offers every file to the runtime's poller (set non-blocking,
// a refused epoll registration, set blocking again) and asks for its size:
// ten calls where four do, and in the VMs dtb runs on each call costs 10–30 µs.
// The session host reads the session file and the browser's /proc entry on
// every command.
package rawfile

import (
	"io/fs"
	"syscall"
)

// Read returns the contents of the file at path. Its errors are
// *fs.PathError, as os.ReadFile's (errors.Is(err, fs.ErrNotExist) holds).
func Read(path string) ([]byte, error) {
	fd, err := open(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	b := make([]byte, 0, 4096)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

func open(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}
