//go:build !linux

package interact

import "os"

// copyFile copies the first size bytes of src into dst.
func copyFile(dst, src *os.File, size int64) error { return plainCopy(dst, src, size) }
