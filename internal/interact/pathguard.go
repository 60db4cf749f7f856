package interact

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

// MaxUploadFiles is the most paths one upload takes.
const MaxUploadFiles = 20

// UploadFile is a path the guard let through: its clean path (or, once staged,
// the private copy handed to the browser), base name and size. Only Name and
// Size are ever printed.
type UploadFile struct {
	Path string `json:"-"`
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// Sensitive path components, compared case-insensitively. exact: the whole
// component; prefix/suffix/contains: part of it; sequences: consecutive
// components (a folder that is a secret only under its parent, such as a
// browser profile or a tool's config).
var (
	sensitiveExact = []string{
		// keys and credential stores
		".ssh", ".gnupg", ".gpg", ".aws", ".azure", ".kube", ".docker", ".netrc", ".pgpass", ".npmrc", ".pypirc",
		".s3cfg", ".boto", ".dockercfg", ".htpasswd", ".my.cnf", ".git-credentials", ".vault-token", ".terraformrc", ".oci",
		"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", ".env", "known_hosts", "authorized_keys",
		// keyrings and wallets
		"keychains", "keyrings", ".password-store", "kwalletd", "kwallet5", "kwallet6", "wallet.dat",
		// shell and REPL histories (plus *_history below)
		".history", ".histfile", ".lesshst", ".viminfo",
		// browser profiles: stores of saved logins, cookies and keys
		".mozilla", "logins.json", "logins-backup.json", "key3.db", "key4.db", "cert9.db", "signons.sqlite",
		"formhistory.sqlite", "places.sqlite", "login data", "login data for account", "web data", "local state",
		"credentials",
		// cluster, VPN and mail-client stores kept by location
		"kubeconfig", ".minikube", ".talos", ".thunderbird", ".icedove", ".password-store-git",
	}
	sensitivePrefix = []string{".env.", "id_rsa.", "id_dsa.", "id_ecdsa.", "id_ed25519."}
	sensitiveSuffix = []string{".pem", ".key", ".p12", ".pfx", ".keychain", ".keychain-db", ".kdbx", ".gpg", ".asc", ".keytab", ".kwl", "_history",
		".jks", ".keystore", ".p8", ".ppk", ".ovpn", ".kubeconfig", ".agekey"}
	sensitiveContains = []string{"private_key", "private-key", "privatekey", "secret", "token", "cookie", "keychain", "password", "credential",
		"kubeconfig", "service-account", "service_account", "serviceaccount", "apikey", "api-key", "api_key"}
	sensitiveSequence = [][]string{
		{".config", "gh"}, {".config", "hub"}, {".config", "gcloud"}, {".config", "op"}, {".config", "rclone"},
		{".config", "chromium"}, {".config", "google-chrome"}, {".config", "google-chrome-beta"}, {".config", "google-chrome-unstable"},
		{".config", "bravesoftware"}, {".config", "microsoft-edge"}, {".config", "vivaldi"}, {".config", "opera"},
		{"application support", "google"}, {"application support", "chromium"}, {"application support", "firefox"},
		{"application support", "bravesoftware"}, {"application support", "microsoft edge"},
		{"appdata", "roaming", "mozilla"}, {"appdata", "local", "google"}, {"appdata", "local", "microsoft", "edge"},
		{".local", "share", "fish"}, {"ssl", "private"}, {".m2", "settings.xml"}, {".gradle", "gradle.properties"},
		// the stores of container, cloud and cluster tools, by location:
		// what they hold has no telling name (auth.json, config, hosts)
		{".config", "containers"}, {"containers", "auth.json"}, {".config", "doctl"}, {".config", "hcloud"},
		{".config", "helm"}, {".config", "sops"}, {".config", "age"}, {".config", "configstore"}, {".config", "filezilla"},
		{".config", "remmina"}, {".config", "bitwarden"}, {".config", "bitwarden cli"}, {".config", "1password"},
		{".config", "heroku"}, {".config", "flyctl"}, {".fly"}, {".config", "netlify"}, {".config", "vercel"},
		{".config", "stripe"}, {".config", "twilio"}, {".config", "git", "credentials"}, {".terraform.d"},
		{".cargo", "credentials"}, {".gem", "credentials"}, {"etc", "kubernetes"}, {"etc", "wireguard"},
		{"etc", "rancher"}, {"var", "lib", "kubelet"},
		// system secrets
		{"etc", "shadow"}, {"etc", "shadow-"}, {"etc", "gshadow"}, {"etc", "gshadow-"}, {"etc", "sudoers"},
		{"etc", "sudoers.d"}, {"etc", "master.passwd"}, {"etc", "spwd.db"}, {"etc", "ssh"},
	}
)

// sensitiveComponent returns the first component of path that looks like a
// secret (and the rule it met), or "": the rules of one component first, then
// the sequences.
func sensitiveComponent(path string) (string, string) {
	comps := strings.Split(filepath.ToSlash(path), "/")
	for _, c := range comps {
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
	for i := range comps {
		for _, seq := range sensitiveSequence {
			if i+len(seq) <= len(comps) && equalFold(comps[i:i+len(seq)], seq) {
				return comps[i+len(seq)-1], strings.Join(seq, "/")
			}
		}
	}
	return "", ""
}

func equalFold(a, b []string) bool {
	for i := range b {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// CheckUploadPaths is the upload guard: at most MaxUploadFiles paths, each
// absolute, with no symlink anywhere on its way (neither the file nor a folder
// above it), a readable regular file (not a folder, FIFO or device), with no
// component that looks like a secret: keys and credential stores (.ssh,
// .gnupg, .aws, .netrc, .s3cfg, .config/gh, id_rsa, .env, *.pem, *.key,
// private_key, secret, token …), shell histories, keyrings, browser profiles
// (logins.json, key4.db, Login Data, Cookies …) and system secrets
// (/etc/shadow …). It returns the clean paths, names and sizes; it opens each
// file to check it, and closes it.
func CheckUploadPaths(paths []string) ([]UploadFile, error) {
	if err := checkCount(paths); err != nil {
		return nil, err
	}
	out := make([]UploadFile, 0, len(paths))
	for _, p := range paths {
		f, uf, err := openUploadPath(p)
		if err != nil {
			return nil, err
		}
		f.Close()
		out = append(out, uf)
	}
	return out, nil
}

func checkCount(paths []string) error {
	if len(paths) == 0 {
		return output.Usage("upload wants one or more absolute file paths")
	}
	if len(paths) > MaxUploadFiles {
		return output.Errorf("too-many-files", "upload takes at most %d files, got %d", MaxUploadFiles, len(paths)).With("max", MaxUploadFiles).With("count", len(paths))
	}
	return nil
}

func refused(path, why string) *output.Error {
	return output.Errorf("path-refused", "refusing to upload %s: %s", path, why).With("path", path)
}

// openUploadPath checks one path and returns it opened: every component
// walked without following a symlink (openNoFollow), and the file that was
// opened (fstat) is the regular file that was checked.
func openUploadPath(p string) (*os.File, UploadFile, error) {
	if p == "" || !filepath.IsAbs(p) {
		return nil, UploadFile{}, refused(p, "the path is not absolute")
	}
	clean := filepath.Clean(p)
	for _, q := range []string{p, clean} {
		if c, rule := sensitiveComponent(q); c != "" {
			return nil, UploadFile{}, refused(p, "its component "+quote(c)+" looks like a secret ("+rule+")").With("component", c)
		}
	}
	// Lstat every component first, for a clear answer; the open below is what
	// holds, whatever changes in between.
	st, err := lstatNoLinks(p, clean)
	if err != nil {
		return nil, UploadFile{}, err
	}
	if !st.Mode().IsRegular() {
		return nil, UploadFile{}, refused(p, "it is not a regular file ("+fileKind(st.Mode())+")")
	}
	f, err := openNoFollow(clean)
	if err != nil {
		var le *linkError
		switch {
		case errors.As(err, &le):
			return nil, UploadFile{}, refused(p, le.Path+" became a symlink while it was checked")
		case errors.Is(err, fs.ErrNotExist):
			return nil, UploadFile{}, output.Errorf("no-such-file", "no file %s", p).With("path", p)
		case errors.Is(err, fs.ErrPermission):
			return nil, UploadFile{}, refused(p, "it is not readable")
		}
		return nil, UploadFile{}, refused(p, err.Error())
	}
	fst, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, UploadFile{}, refused(p, err.Error())
	}
	if !fst.Mode().IsRegular() || !os.SameFile(st, fst) {
		f.Close()
		return nil, UploadFile{}, refused(p, "it changed while it was checked")
	}
	return f, UploadFile{Path: clean, Name: filepath.Base(clean), Size: fst.Size()}, nil
}

// lstatNoLinks refuses a path with a symlink in any component (the file or a
// folder above it) and returns the file's own Lstat.
func lstatNoLinks(p, clean string) (fs.FileInfo, error) {
	var st fs.FileInfo
	cur := string(filepath.Separator)
	if v := filepath.VolumeName(clean); v != "" {
		cur = v + string(filepath.Separator)
	}
	rest := strings.TrimPrefix(clean[len(filepath.VolumeName(clean)):], string(filepath.Separator))
	parts := strings.Split(rest, string(filepath.Separator))
	for i, c := range parts {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, output.Errorf("no-such-file", "no file %s", p).With("path", p)
			}
			return nil, refused(p, err.Error())
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			real, _ := filepath.EvalSymlinks(clean)
			why := "it is a symlink (give the file it points to)"
			if i < len(parts)-1 {
				why = "it is under the symlinked folder " + cur + " (give the real path)"
			}
			e := refused(p, why)
			if real != "" {
				if c, _ := sensitiveComponent(real); c == "" {
					e.With("realPath", real)
				}
			}
			return nil, e
		}
		st = fi
	}
	return st, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// linkError is a path component found to be a symlink by openNoFollow.
type linkError struct{ Path string }

func (e *linkError) Error() string { return e.Path + " is a symlink" }

// Staged is a set of checked files copied into a private folder: the browser
// is handed the copies, so the page receives exactly the bytes that were
// checked, whatever happens to the originals afterwards.
type Staged struct {
	Dir   string       // 0700, made for this upload
	Files []UploadFile // Path is the copy's
}

// Remove deletes the copies.
func (s *Staged) Remove() error { return os.RemoveAll(s.Dir) }

// stagedTTL is how long an upload's copies are kept when nothing removes them
// (the page reads a chosen file lazily, as late as a form's submit).
const stagedTTL = 24 * time.Hour

// StageUploads runs the guard over paths and copies each file, read from the
// descriptor the guard checked, into a new 0700 folder under root (the
// session's uploads folder, which browser stop removes; "" for one in the
// system temp folder). Copies older than a day under root are removed.
func StageUploads(paths []string, root string) (*Staged, error) {
	if err := checkCount(paths); err != nil {
		return nil, err
	}
	if root == "" {
		root = filepath.Join(os.TempDir(), fmt.Sprintf("dtb-uploads-%d", os.Getuid()))
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, output.Wrap("upload-failed", err, "cannot create the uploads folder")
	}
	pruneStaged(root)
	dir, err := os.MkdirTemp(root, "upload-")
	if err != nil {
		return nil, output.Wrap("upload-failed", err, "cannot create the upload's private folder")
	}
	s := &Staged{Dir: dir}
	for i, p := range paths {
		uf, err := stageOne(p, filepath.Join(dir, fmt.Sprint(i)))
		if err != nil {
			s.Remove()
			return nil, err
		}
		s.Files = append(s.Files, uf)
	}
	return s, nil
}

// stageOne copies the checked file p into dir (its own folder, so two files of
// one name keep their names: the page sees the original base name).
func stageOne(p, dir string) (UploadFile, error) {
	f, uf, err := openUploadPath(p)
	if err != nil {
		return uf, err
	}
	defer f.Close()
	if err := os.Mkdir(dir, 0o700); err != nil {
		return uf, output.Wrap("upload-failed", err, "cannot stage "+p)
	}
	copyPath := filepath.Join(dir, uf.Name)
	dst, err := os.OpenFile(copyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return uf, output.Wrap("upload-failed", err, "cannot stage "+p)
	}
	err = copyFile(dst, f, uf.Size)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	var shrunk errShrunk
	if errors.As(err, &shrunk) {
		return uf, refused(p, "it changed while it was copied")
	}
	if err != nil {
		return uf, output.Wrap("upload-failed", err, "cannot copy "+p)
	}
	if info, err := f.Stat(); err == nil {
		if info.Size() != uf.Size {
			return uf, refused(p, "it changed while it was copied")
		}
		// The page sees the file's own time as File.lastModified, not the
		// time of the copy.
		os.Chtimes(copyPath, time.Time{}, info.ModTime())
	}
	uf.Path = copyPath
	return uf, nil
}

// plainCopy copies the first size bytes of src into dst.
func plainCopy(dst, src *os.File, size int64) error {
	n, err := io.Copy(dst, io.LimitReader(src, size))
	if err == nil && n != size {
		return errShrunk{n}
	}
	return err
}

// errShrunk: the file ended before the size it had when checked.
type errShrunk struct{ n int64 }

func (e errShrunk) Error() string { return fmt.Sprintf("the file ended after %d bytes", e.n) }

// pruneStaged removes upload folders under root older than stagedTTL.
func pruneStaged(root string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, e := range entries {
		if info, err := e.Info(); err == nil && e.IsDir() && strings.HasPrefix(e.Name(), "upload-") && time.Since(info.ModTime()) > stagedTTL {
			os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

func quote(s string) string { return "\"" + s + "\"" }
