package relay

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"syscall"
)

// staticFiles serves a folder for --static. It never serves anything outside the
// folder: files are opened through an os.Root, which refuses a path or a symbolic
// link (at any depth) that leads out of it, at the moment of opening, so a link
// swapped in after a check cannot win. A link that stays inside is followed. A
// directory is served only through its index.html (no listings), and only
// regular files are served (a FIFO or a device would block or never end).
type staticFiles struct {
	root *os.Root
	logf func(format string, args ...any)
}

func newStaticFiles(dir string, logf func(string, ...any)) (*staticFiles, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &staticFiles{root: root, logf: logf}, nil
}

func (sf *staticFiles) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed: --static serves files only", http.StatusMethodNotAllowed)
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
	if name == "" {
		name = "."
	}
	f, err := sf.open(name)
	if err == nil {
		if fi, serr := f.Stat(); serr == nil && fi.IsDir() {
			f.Close()
			f, err = sf.open(path.Join(name, "index.html"))
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, errNotRegular):
			http.Error(w, "403 forbidden: not a regular file", http.StatusForbidden)
		case isEscape(err):
			sf.logf("relay: refused %s: it leads outside the --static folder (%v)", r.URL.Path, err)
			http.Error(w, "403 forbidden: the path leads outside the --static folder", http.StatusForbidden)
		default:
			http.Error(w, "404 page not found", http.StatusNotFound)
		}
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.Error(w, "404 page not found", http.StatusNotFound)
		return
	}
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

var errNotRegular = errors.New("not a regular file")

// open opens name inside the root without blocking on a FIFO, and returns only a
// regular file or a directory.
func (sf *staticFiles) open(name string) (*os.File, error) {
	f, err := sf.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
		f.Close()
		if err == nil {
			err = errNotRegular
		}
		return nil, err
	}
	return f, nil
}

// isEscape reports an os.Root refusal: a path or link that leaves the root.
func isEscape(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes from parent")
}
