package interact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dtb-cli/dtb/internal/output"
)

// MaxUploadFiles is the most paths one upload takes.
const MaxUploadFiles = 20

// UploadFile is a path the guard let through: canonical path, base name and
// size. Only Name and Size are ever printed.
type UploadFile struct {
	Path string `json:"-"`
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Sensitive path components, compared case-insensitively. exact: the whole
// component; prefix/suffix/contains: part of it.
var (
	sensitiveExact    = []string{".ssh", ".gnupg", ".gpg", ".aws", ".kube", ".docker", ".netrc", ".pgpass", ".npmrc", ".pypirc", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", ".env", "keychains", "credentials", "known_hosts", "authorized_keys"}
	sensitivePrefix   = []string{".env.", "id_rsa.", "id_dsa.", "id_ecdsa.", "id_ed25519."}
	sensitiveSuffix   = []string{".pem", ".key", ".p12", ".pfx", ".keychain", ".keychain-db", ".kdbx", ".gpg", ".asc"}
	sensitiveContains = []string{"private_key", "private-key", "privatekey", "secret", "token", "cookie", "keychain", "password", "credential"}
)

// sensitiveComponent returns the first component of path that looks like a
// secret (and the rule it met), or "".
func sensitiveComponent(path string) (string, string) {
	for _, c := range strings.Split(filepath.ToSlash(path), "/") {
		if c == "" {
			continue
		}
		l := strings.ToLower(c)
		for _, s := range sensitiveExact {
			if l == s {
				return c, s
			}
		}
		for _, s := range sensitivePrefix {
			if strings.HasPrefix(l, s) {
				return c, s + "*"
			}
		}
		for _, s := range sensitiveSuffix {
			if strings.HasSuffix(l, s) {
				return c, "*" + s
			}
		}
		for _, s := range sensitiveContains {
			if strings.Contains(l, s) {
				return c, "*" + s + "*"
			}
		}
	}
	return "", ""
}

// CheckUploadPaths is the upload guard: at most MaxUploadFiles paths, each
// absolute, not a symlink, a readable regular file, with no component that
// looks like a secret (.ssh, .gnupg, keychains, cookies, id_rsa, .env, *.pem,
// *.key, private_key, secret, token and the like) in the path as given or in
// its canonical form. It returns the canonical paths.
func CheckUploadPaths(paths []string) ([]UploadFile, error) {
	if len(paths) == 0 {
		return nil, output.Usage("upload wants one or more absolute file paths")
	}
	if len(paths) > MaxUploadFiles {
		return nil, output.Errorf("too-many-files", "upload takes at most %d files, got %d", MaxUploadFiles, len(paths)).With("max", MaxUploadFiles).With("count", len(paths))
	}
	out := make([]UploadFile, 0, len(paths))
	for _, p := range paths {
		f, err := checkUploadPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

func refused(path, why string) *output.Error {
	return output.Errorf("path-refused", "refusing to upload %s: %s", path, why).With("path", path)
}

func checkUploadPath(p string) (UploadFile, error) {
	if p == "" || !filepath.IsAbs(p) {
		return UploadFile{}, refused(p, "the path is not absolute")
	}
	if c, rule := sensitiveComponent(p); c != "" {
		return UploadFile{}, refused(p, "its component "+quote(c)+" looks like a secret ("+rule+")").With("component", c)
	}
	st, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return UploadFile{}, output.Errorf("no-such-file", "no file %s", p).With("path", p)
		}
		return UploadFile{}, refused(p, err.Error())
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		return UploadFile{}, refused(p, "it is a symlink (give the file it points to)")
	}
	if !st.Mode().IsRegular() {
		return UploadFile{}, refused(p, "it is not a regular file")
	}
	canon, err := filepath.EvalSymlinks(p)
	if err != nil {
		return UploadFile{}, refused(p, err.Error())
	}
	canon, _ = filepath.Abs(canon)
	if c, rule := sensitiveComponent(canon); c != "" {
		return UploadFile{}, refused(p, "its real path "+canon+" has the component "+quote(c)+" that looks like a secret ("+rule+")").With("component", c)
	}
	fh, err := os.Open(canon)
	if err != nil {
		return UploadFile{}, refused(p, "it is not readable")
	}
	fh.Close()
	return UploadFile{Path: canon, Name: filepath.Base(canon), Size: st.Size()}, nil
}

func quote(s string) string { return "\"" + s + "\"" }
