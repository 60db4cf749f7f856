package session

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// WriteScreenshot writes the capture with mode 0600 to path, or, when path is
// empty, to a new file under CacheDir()/screenshots/. It returns the path.
func WriteScreenshot(shot *cdp.Screenshot, path, session string) (string, error) {
	ext := ".jpg"
	if shot.Format == "png" {
		ext = ".png"
	}
	return writePrivate(shot.Data, path, session, "screenshots", ext, "screenshot")
}

// writePrivate writes data with mode 0600 to path, or, when path is empty, to
// a new file named after the session and the time under CacheDir()/dir/. what
// names the file in errors. It returns the absolute path.
func writePrivate(data []byte, path, session, dir, ext, what string) (string, error) {
	if path == "" {
		base, err := CacheDir()
		if err != nil {
			return "", output.Wrap("io-error", err, "cannot find the cache directory")
		}
		base = filepath.Join(base, dir)
		if err := os.MkdirAll(base, 0o700); err != nil {
			return "", output.Wrap("io-error", err, "cannot create the "+what+" directory")
		}
		var rb [4]byte
		rand.Read(rb[:])
		path = filepath.Join(base, fmt.Sprintf("%s-%s-%s%s", session, time.Now().Format("20060102-150405.000"), hex.EncodeToString(rb[:]), ext))
	} else if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// Writing through it would overwrite whatever it points at.
		return "", output.Errorf("path-refused", "%s is a symlink: dtb does not write the %s through it; give the real path", path, what).With("path", path)
	}
	// A temporary file beside the target, renamed over it once complete: a
	// full disk or a failed write leaves the old file (or none), never a
	// truncated one, and the rename replaces a symlink put there meanwhile
	// instead of following it.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return "", output.Wrap("io-error", err, "cannot write the "+what).With("path", path)
	}
	fail := func(err error) (string, error) {
		f.Close()
		os.Remove(f.Name())
		return "", output.Wrap("io-error", err, "cannot write the "+what).With("path", path)
	}
	if err := writeData(f, data); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fail(err)
	}
	return path, nil
}

// writeData writes data to f (a variable: tests make it fail as a full disk
// does).
var writeData = func(f *os.File, data []byte) error {
	_, err := f.Write(data)
	return err
}

// WritePDF writes the PDF with mode 0600 to path, or, when path is empty, to
// a new file under CacheDir()/pdf/. It returns the path.
func WritePDF(doc *cdp.PDF, path, session string) (string, error) {
	return writePrivate(doc.Data, path, session, "pdf", ".pdf", "PDF")
}

// WriteHAR writes a HAR document with mode 0600 to path, or, when path is
// empty, to a new file under CacheDir()/har/. It returns the path.
func WriteHAR(data []byte, path, session string) (string, error) {
	return writePrivate(data, path, session, "har", ".har", "HAR file")
}
