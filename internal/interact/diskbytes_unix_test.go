//go:build unix

package interact

import (
	"io/fs"
	"syscall"
)

// diskBytes is what a file takes on disk.
func diskBytes(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Blocks * 512
	}
	return fi.Size()
}
