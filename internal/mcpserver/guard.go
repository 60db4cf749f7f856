package mcpserver

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtb-cli/dtb/internal/output"
)

// guard checks the arguments that reach outside the page before a call: a URL
// the browser would navigate to must be a web address (a file: URL would let
// the model read local files), and a file the command writes must be inside
// the output folder; such a path is rewritten to its absolute form there.
func (s *server) guard(t Tool, args map[string]json.RawMessage) error {
	for _, p := range t.Params {
		raw, ok := args[p.Name]
		if !ok || p.Kind == "" {
			continue
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			continue // argv reports the type
		}
		switch p.Kind {
		case KindURL:
			if !s.opts.AllowFileURLs {
				if err := webURL(p.Name, v); err != nil {
					return err
				}
			}
		case KindPath:
			abs, err := s.inOutputDir(p.Name, v)
			if err != nil {
				return err
			}
			args[p.Name], _ = json.Marshal(abs)
		}
	}
	for _, p := range t.Params {
		raw, ok := args[p.Name]
		if !ok || p.Kind != KindUpload {
			continue
		}
		var files []string
		if json.Unmarshal(raw, &files) != nil {
			var one string
			if json.Unmarshal(raw, &one) != nil {
				continue
			}
			files = []string{one}
		}
		for i, f := range files {
			abs, err := inFolder(p.Name, f, s.opts.UploadRoot, "upload folder")
			if err != nil {
				return err
			}
			files[i] = abs
		}
		args[p.Name], _ = json.Marshal(files)
	}
	return nil
}

// webURL refuses a URL whose scheme reaches local things: file:, chrome:,
// view-source:, javascript: (page code past a denied eval), blob: and the like.
// Only http, https, data: and about:blank pass; a URL without a scheme
// ("example.com", "localhost:8080/x") is a web address (dtb adds http or https).
func webURL(name, v string) error {
	v = strings.TrimSpace(v)
	scheme := urlScheme(v)
	switch {
	case scheme == "", scheme == "http", scheme == "https", scheme == "data":
		return nil
	case scheme == "about" && strings.EqualFold(v, "about:blank"):
		return nil
	}
	return output.Errorf("url-refused", "%s %q: %s: URLs are refused; this server opens web addresses only (a host started with --allow-file-urls allows local files and browser pages)", name, v, scheme).With("url", v)
}

// urlScheme is the scheme of v in lower case, or "" when v has none: a
// "host:port" start is no scheme.
func urlScheme(v string) string {
	i := strings.Index(v, ":")
	if i <= 0 {
		return ""
	}
	scheme := strings.ToLower(v[:i])
	for j, r := range scheme {
		if !(r >= 'a' && r <= 'z' || j > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')) {
			return ""
		}
	}
	rest := v[i+1:]
	port := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if port != 0 && (port == -1 || rest[port] == '/' || rest[port] == '?' || rest[port] == '#') {
		return "" // localhost:8080, example.com:443/x
	}
	return scheme
}

// inOutputDir resolves a path argument inside the output folder: a relative
// path is taken from there; any path that leads outside it, through ".." or a
// symbolic link, is refused.
func (s *server) inOutputDir(name, v string) (string, error) {
	dir := s.opts.OutputDir
	if dir == "" {
		return "", output.Errorf("path-refused", "%s: this server writes no files where the model says; leave %s out (files go to the output folder)", name, name)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", output.Wrap("io-error", err, "creating the output folder")
	}
	return inFolder(name, v, dir, "output folder")
}

// inFolder resolves v inside dir (relative paths from there) and refuses a
// path that leads outside it, through ".." or a symbolic link.
func inFolder(name, v, dir, what string) (string, error) {
	if dir == "" {
		return "", output.Errorf("path-refused", "%s: this server has no %s", name, what)
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", output.Wrap("io-error", err, "the "+what)
	}
	p := v
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	refused := output.Errorf("path-refused", "%s %q is outside the %s %s; give a name inside it", name, v, what, root).With("path", v).With("folder", root)
	parent, err := filepath.EvalSymlinks(filepath.Dir(p))
	if errors.Is(err, fs.ErrNotExist) {
		// A new sub-folder: check the part that exists.
		parent, err = resolveExisting(filepath.Dir(p))
	}
	if err != nil {
		return "", refused
	}
	if !within(root, parent) {
		return "", refused
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", refused.With("symlink", true)
	}
	return filepath.Join(parent, filepath.Base(p)), nil
}

// resolveExisting resolves the symbolic links of the longest existing prefix of p.
func resolveExisting(p string) (string, error) {
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
