//go:build unix

package interact

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// openNoFollow opens the clean absolute path p for reading without following
// a symlink anywhere: each folder is opened relative to the one before with
// O_NOFOLLOW, so a component swapped for a symlink after any check fails here
// instead of leading elsewhere. O_NONBLOCK: a FIFO put in the file's place
// does not block the open (the caller's fstat refuses it).
func openNoFollow(p string) (*os.File, error) {
	dfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: "/", Err: err}
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	for i, c := range parts {
		last := i == len(parts)-1
		flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_CLOEXEC
		if last {
			flags |= unix.O_NONBLOCK
		} else {
			flags |= unix.O_DIRECTORY
		}
		fd, err := unix.Openat(dfd, c, flags, 0)
		unix.Close(dfd)
		cur = filepath.Join(cur, c)
		if err != nil {
			if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return nil, &linkError{Path: cur}
			}
			return nil, &fs.PathError{Op: "open", Path: cur, Err: err}
		}
		if last {
			return os.NewFile(uintptr(fd), p), nil
		}
		dfd = fd
	}
	return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid}
}
