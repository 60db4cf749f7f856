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
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", output.Wrap("io-error", err, "cannot write the "+what).With("path", path)
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return "", output.Wrap("io-error", err, "cannot write the "+what).With("path", path)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return "", output.Wrap("io-error", err, "cannot write the "+what).With("path", path)
	}
	if err := f.Close(); err != nil {
		return "", output.Wrap("io-error", err, "cannot write the "+what).With("path", path)
	}
	return path, nil
}

// WritePDF writes the PDF with mode 0600 to path, or, when path is empty, to
// a new file under CacheDir()/pdf/. It returns the path.
func WritePDF(doc *cdp.PDF, path, session string) (string, error) {
	return writePrivate(doc.Data, path, session, "pdf", ".pdf", "PDF")
}
