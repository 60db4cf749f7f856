//go:build linux

package interact

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyFile copies the first size bytes of src into dst keeping src's holes:
// only the data regions are read and written (SEEK_DATA/SEEK_HOLE), and the
// file is extended to size, so a sparse file of 2 GiB with little data costs
// little disk per upload. It falls back to a plain copy where the file
// system cannot tell its holes.
func copyFile(dst, src *os.File, size int64) error {
	var off int64
	for off < size {
		data, err := unix.Seek(int(src.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // only a hole is left
		}
		if err != nil {
			if off == 0 {
				return plainCopy(dst, src, size)
			}
			return err
		}
		if data >= size {
			break
		}
		hole, err := unix.Seek(int(src.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return err
		}
		hole = min(hole, size)
		if _, err := src.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if _, err := dst.Seek(data, io.SeekStart); err != nil {
			return err
		}
		if n, err := io.CopyN(dst, src, hole-data); err != nil {
			if err == io.EOF {
				return errShrunk{n}
			}
			return err
		}
		off = hole
	}
	return dst.Truncate(size)
}
