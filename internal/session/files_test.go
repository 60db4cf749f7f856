package session

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dtb-cli/dtb/internal/output"
)

// --out through a symlink is refused and its target left alone; a write that
// fails (a full disk) leaves the old file whole and no temporary file; a
// written file is 0600 (issue 23.7).
func TestWritePrivate(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "precious.txt")
	os.WriteFile(target, []byte("keep me"), 0o644)
	link := filepath.Join(dir, "shot.png")
	os.Symlink(target, link)
	if _, err := writePrivate([]byte("PNG"), link, "s", "screenshots", ".png", "screenshot"); output.AsError(err).Reason != "path-refused" {
		t.Fatalf("through a symlink: %v, want path-refused", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep me" {
		t.Fatalf("the symlink's target now holds %q", b)
	}

	out := filepath.Join(dir, "page.pdf")
	os.WriteFile(out, []byte("old pdf"), 0o600)
	write := writeData
	writeData = func(*os.File, []byte) error { return &os.PathError{Op: "write", Path: out, Err: syscall.ENOSPC} }
	_, err := writePrivate([]byte("new pdf"), out, "s", "pdf", ".pdf", "PDF")
	writeData = write
	if output.AsError(err).Reason != "io-error" || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("full disk: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old pdf" {
		t.Fatalf("after a failed write the file holds %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	p, err := writePrivate([]byte("new pdf"), out, "s", "pdf", ".pdf", "PDF")
	if err != nil || p != out {
		t.Fatalf("write: %s %v", p, err)
	}
	if fi, _ := os.Stat(out); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if b, _ := os.ReadFile(out); string(b) != "new pdf" {
		t.Fatalf("holds %q", b)
	}
}
