package rawfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestReadIsReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, size := range []int{0, 1, 4095, 4096, 4097, 100000} {
		p := filepath.Join(dir, "f")
		want := bytes.Repeat([]byte("0123456789abcdef"), size/16+1)[:size]
		if err := os.WriteFile(p, want, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Read(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("size %d: %d bytes, %v", size, len(got), err)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := Read(dir); err == nil {
		t.Fatal("reading a folder: no error")
	}
	// /proc files report no size: read to their end.
	if b, err := Read("/proc/self/stat"); err == nil && !bytes.Contains(b, []byte(")")) {
		t.Fatalf("/proc/self/stat: %q", b)
	}
}
