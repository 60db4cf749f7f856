package mcpserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dtb-cli/dtb/internal/output"
)

func TestWebURL(t *testing.T) {
	for v, ok := range map[string]bool{
		"https://example.com": true, "http://127.0.0.1:8080/x": true, "example.com": true,
		"localhost:8080/page": true, "localhost:8080": true, "data:text/html,<p>hi": true, "about:blank": true,
		"file:///etc/passwd": false, "FILE:///etc/passwd": false, " file:/etc/passwd": false,
		"chrome://settings": false, "view-source:https://x": false, "javascript:alert(1)": false,
		"blob:https://x/1": false, "about:config": false, "chrome-extension://abc/x.html": false,
		"filesystem:https://x/temporary/a": false, "devtools://devtools/x": false,
	} {
		err := webURL("url", v)
		if (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", v, err, ok)
		}
		if err != nil && output.AsError(err).Reason != "url-refused" {
			t.Errorf("%q: reason %v", v, err)
		}
	}
}

func TestInOutputDir(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "file-link.png")); err != nil {
		t.Fatal(err)
	}
	s := &server{opts: Options{OutputDir: dir}}
	root, _ := filepath.EvalSymlinks(dir)
	for v, want := range map[string]string{
		"shot.png":                  filepath.Join(root, "shot.png"),
		"sub/new/shot.png":          filepath.Join(root, "sub/new/shot.png"),
		filepath.Join(dir, "a.png"): filepath.Join(root, "a.png"),
		"../escape.png":             "",
		"/etc/passwd":               "",
		filepath.Join(outside, "x"): "",
		"link/x.png":                "",
		"file-link.png":             "",
	} {
		got, err := s.inOutputDir("out", v)
		if want == "" {
			if err == nil || output.AsError(err).Reason != "path-refused" {
				t.Errorf("%q: %q %v, want path-refused", v, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", v, got, err, want)
		}
	}
	if _, err := (&server{}).inOutputDir("out", "x.png"); err == nil {
		t.Error("no output folder: a path was taken")
	}
}
