package interact

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/output"
)

func TestSensitiveComponents(t *testing.T) {
	refusedPaths := map[string]string{
		"/home/u/.ssh/config":                          ".ssh",
		"/home/u/.SSH/known":                           ".SSH",
		"/home/u/.gnupg/pubring.kbx":                   ".gnupg",
		"/Users/u/Library/Keychains/login.keychain-db": "Keychains",
		"/tmp/x.keychain":                              "x.keychain",
		"/home/u/.config/chromium/Default/Cookies":     "Cookies",
		"/home/u/cookies.txt":                          "cookies.txt",
		"/home/u/id_rsa":                               "id_rsa",
		"/home/u/id_rsa.pub":                           "id_rsa.pub",
		"/home/u/id_ed25519":                           "id_ed25519",
		"/home/u/id_ecdsa":                             "id_ecdsa",
		"/home/u/id_dsa":                               "id_dsa",
		"/srv/app/.env":                                ".env",
		"/srv/app/.env.production":                     ".env.production",
		"/srv/app/.ENV":                                ".ENV",
		"/etc/ssl/server.pem":                          "server.pem",
		"/etc/ssl/server.key":                          "server.key",
		"/etc/ssl/cert.p12":                            "cert.p12",
		"/etc/ssl/cert.pfx":                            "cert.pfx",
		"/home/u/private_key.txt":                      "private_key.txt",
		"/home/u/my-private-key":                       "my-private-key",
		"/home/u/PrivateKey.der":                       "PrivateKey.der",
		"/home/u/secrets/a.txt":                        "secrets",
		"/home/u/client_secret.json":                   "client_secret.json",
		"/home/u/token":                                "token",
		"/home/u/github-token.txt":                     "github-token.txt",
		"/home/u/.aws/credentials":                     ".aws",
		"/home/u/credentials.json":                     "credentials.json",
		"/home/u/.netrc":                               ".netrc",
		"/home/u/.kube/config":                         ".kube",
		"/home/u/.docker/config.json":                  ".docker",
		"/home/u/passwords.kdbx":                       "passwords.kdbx",
		"/home/u/.pgpass":                              ".pgpass",
		"/home/u/.npmrc":                               ".npmrc",
		// Histories, keyrings, browser profiles, CLI credential stores, system secrets.
		"/home/u/.bash_history":                                    ".bash_history",
		"/home/u/.zsh_history":                                     ".zsh_history",
		"/home/u/.local/share/fish/fish_history":                   "fish_history",
		"/home/u/.local/share/fish/fish_variables":                 "fish",
		"/home/u/.python_history":                                  ".python_history",
		"/home/u/.psql_history":                                    ".psql_history",
		"/home/u/.local/share/keyrings/login.keyring":              "keyrings",
		"/home/u/.mozilla/firefox/ab.default/logins.json":          ".mozilla",
		"/home/u/backup/logins.json":                               "logins.json",
		"/home/u/backup/key4.db":                                   "key4.db",
		"/home/u/.config/chromium/Default/Login Data":              "Login Data",
		"/home/u/.config/chromium/Default/History":                 "chromium",
		"/home/u/copy/Login Data":                                  "Login Data",
		"/home/u/copy/Web Data":                                    "Web Data",
		"/home/u/.config/google-chrome/Default/History":            "google-chrome",
		"/Users/u/Library/Application Support/Firefox/p/x.sqlite":  "Firefox",
		"/Users/u/Library/Application Support/Google/Chrome/x.txt": "Google",
		"/home/u/.config/gh/hosts.yml":                             "gh",
		"/home/u/.config/gcloud/application_default.json":          "gcloud",
		"/home/u/.s3cfg":                                           ".s3cfg",
		"/home/u/.boto":                                            ".boto",
		"/home/u/.git-credentials":                                 ".git-credentials",
		"/home/u/.azure/az.json":                                   ".azure",
		"/etc/shadow":                                              "shadow",
		"/etc/gshadow":                                             "gshadow",
		"/etc/shadow-":                                             "shadow-",
		"/etc/sudoers":                                             "sudoers",
		"/etc/ssh/ssh_host_ed25519_key":                            "ssh",
		"/etc/ssl/private/site.crt":                                "private",
		"/etc/krb5.keytab":                                         "krb5.keytab",
		// Stores known by where they are, not what they are called (issue 23.7).
		"/home/u/.config/containers/auth.json":           "containers",
		"/run/user/1000/containers/auth.json":            "auth.json",
		"/home/u/kubeconfig":                             "kubeconfig",
		"/home/u/prod-kubeconfig.yaml":                   "prod-kubeconfig.yaml",
		"/home/u/gcp-service-account.json":               "gcp-service-account.json",
		"/home/u/my_service_account_key.json":            "my_service_account_key.json",
		"/etc/kubernetes/admin.conf":                     "kubernetes",
		"/home/u/.config/helm/repositories.yaml":         "helm",
		"/home/u/.config/doctl/config.yaml":              "doctl",
		"/home/u/.terraform.d/plugins/x":                 ".terraform.d",
		"/home/u/.config/sops/age/keys.txt":              "sops",
		"/home/u/release.jks":                            "release.jks",
		"/home/u/work.ovpn":                              "work.ovpn",
		"/home/u/.thunderbird/p.default/prefs.js":        ".thunderbird",
		"/home/u/.minikube/profiles/minikube/client.crt": ".minikube",
		"/home/u/stripe-apikey.txt":                      "stripe-apikey.txt",
	}
	for p, comp := range refusedPaths {
		if c, _ := sensitiveComponent(p); c != comp {
			t.Errorf("sensitiveComponent(%q) = %q, want %q", p, c, comp)
		}
	}
	for _, p := range []string{"/home/u/report.pdf", "/tmp/photo.png", "/home/u/keys.txt.bak/../a", "/home/u/environment.txt", "/srv/app/envs/a", "/home/u/monkey.png", "/data/idea.txt",
		"/home/u/history.txt", "/home/u/shadow.png", "/srv/ansible/hosts.yml", "/home/u/chromium/src/a.txt", "/home/u/.config/app/x.json"} {
		if c, rule := sensitiveComponent(p); c != "" {
			t.Errorf("sensitiveComponent(%q) = %q (%s), want none", p, c, rule)
		}
	}
}

func TestCheckUploadPaths(t *testing.T) {
	dir := t.TempDir()
	ok := filepath.Join(dir, "report.txt")
	os.WriteFile(ok, []byte("12345"), 0o644)
	link := filepath.Join(dir, "link.txt")
	os.Symlink(ok, link)
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	sshDir := filepath.Join(dir, ".ssh")
	os.Mkdir(sshDir, 0o700)
	keyFile := filepath.Join(sshDir, "notes.txt")
	os.WriteFile(keyFile, []byte("x"), 0o600)
	// A directory symlink into .ssh: the canonical path is refused.
	viaLink := filepath.Join(dir, "innocent")
	os.Symlink(sshDir, viaLink)
	os.Symlink(dir, filepath.Join(dir, "plain-link"))
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "locked.txt")
	os.WriteFile(unreadable, []byte("x"), 0o000)

	files, err := CheckUploadPaths([]string{ok})
	if err != nil || len(files) != 1 || files[0].Name != "report.txt" || files[0].Size != 5 || files[0].Path != ok {
		t.Fatalf("ok: %v %+v", err, files)
	}
	cases := []struct {
		path, reason, contains string
	}{
		{"relative.txt", "path-refused", "not absolute"},
		{"", "path-refused", "not absolute"},
		{filepath.Join(dir, "missing.txt"), "no-such-file", "no file"},
		{link, "path-refused", "symlink"},
		{sub, "path-refused", "not a regular file"},
		{keyFile, "path-refused", `".ssh"`},
		{filepath.Join(viaLink, "notes.txt"), "path-refused", "symlinked folder"},
		// Under a symlinked folder, even one that leads somewhere harmless.
		{filepath.Join(dir, "plain-link", "report.txt"), "path-refused", "symlinked folder"},
		// Not a regular file: a folder, a FIFO, a device.
		{fifo, "path-refused", "a FIFO"},
		{"/dev/null", "path-refused", "a device"},
		{dir, "path-refused", "a folder"},
		{filepath.Join(dir, "server.key"), "path-refused", `"server.key"`},
	}
	if os.Geteuid() != 0 { // root reads anything
		cases = append(cases, struct{ path, reason, contains string }{unreadable, "path-refused", "not readable"})
	}
	for _, c := range cases {
		_, err := CheckUploadPaths([]string{c.path})
		e := output.AsError(err)
		if e == nil || e.Reason != c.reason || !strings.Contains(e.Message, c.contains) {
			t.Errorf("%q: got %v, want %s containing %q", c.path, err, c.reason, c.contains)
		}
	}
	// Exit codes.
	if output.ExitCodeFor("path-refused") != 6 || output.ExitCodeFor("too-many-files") != 2 {
		t.Fatal("exit codes of the guard changed")
	}
	// At most 20 files.
	var many []string
	for i := 0; i < 21; i++ {
		many = append(many, ok)
	}
	if _, err := CheckUploadPaths(many); output.AsError(err).Reason != "too-many-files" {
		t.Fatalf("21 files: %v", err)
	}
	if _, err := CheckUploadPaths(many[:20]); err != nil {
		t.Fatalf("20 files: %v", err)
	}
	if _, err := CheckUploadPaths(nil); output.AsError(err).Reason != "usage" {
		t.Fatalf("no files: %v", err)
	}
	// One refused path refuses the whole upload, naming the component.
	_, err = CheckUploadPaths([]string{ok, "/home/u/.gnupg/x"})
	if e := output.AsError(err); e.Reason != "path-refused" || e.Details["component"] != ".gnupg" {
		t.Fatalf("mixed: %v", err)
	}
}

// The open itself refuses a symlink in any component, so a file or folder
// swapped for a symlink after the Lstat checks cannot lead elsewhere.
func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o700)
	os.WriteFile(filepath.Join(real, "a.txt"), []byte("a"), 0o600)
	os.Symlink(real, filepath.Join(dir, "swapped"))
	os.Symlink(filepath.Join(real, "a.txt"), filepath.Join(real, "b.txt"))
	f, err := openNoFollow(filepath.Join(real, "a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, p := range []string{filepath.Join(dir, "swapped", "a.txt"), filepath.Join(real, "b.txt")} {
		var le *linkError
		if f, err := openNoFollow(p); !errors.As(err, &le) {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: %v, want a symlink refusal", p, err)
		}
	}
}

// StageUploads copies what it checked into a private folder: the copy holds
// the checked bytes after the original is swapped for a symlink to a secret,
// the folder is 0700, and each file keeps its base name.
func TestStageUploads(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a", "report.txt")
	b := filepath.Join(dir, "b", "report.txt")
	os.MkdirAll(filepath.Dir(a), 0o755)
	os.MkdirAll(filepath.Dir(b), 0o755)
	os.WriteFile(a, []byte("harmless"), 0o644)
	os.WriteFile(b, []byte("second"), 0o644)
	secret := filepath.Join(dir, "id_rsa")
	os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600)
	root := filepath.Join(dir, "uploads")
	s, err := StageUploads([]string{a, b}, root)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(a)
	os.Symlink(secret, a)
	if got, _ := os.ReadFile(s.Files[0].Path); string(got) != "harmless" {
		t.Fatalf("copy holds %q", got)
	}
	if got, _ := os.ReadFile(s.Files[1].Path); string(got) != "second" {
		t.Fatalf("second copy holds %q", got)
	}
	if s.Files[0].Name != "report.txt" || filepath.Base(s.Files[1].Path) != "report.txt" || s.Files[0].Path == s.Files[1].Path {
		t.Fatalf("names: %+v", s.Files)
	}
	if st, err := os.Stat(s.Dir); err != nil || st.Mode().Perm() != 0o700 || filepath.Dir(s.Dir) != root {
		t.Fatalf("private folder %s: %v %v", s.Dir, st.Mode(), err)
	}
	// Staging the swapped path now refuses it, and leaves no folder behind.
	if _, err := StageUploads([]string{a}, root); output.AsError(err).Reason != "path-refused" {
		t.Fatalf("swapped: %v", err)
	}
	s.Remove()
	if left, _ := os.ReadDir(root); len(left) != 0 {
		t.Fatalf("left in %s: %v", root, left)
	}
}

// A staged copy keeps the file's modification time (the page's
// File.lastModified) and its holes: a sparse file costs its data, not its
// size, on disk (issue 23.6, 23.7).
func TestStageKeepsTimeAndHoles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "disk.img")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("middle"), size/2)
	f.WriteAt([]byte("end"), size-3)
	f.Close()
	when := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	os.Chtimes(p, when, when)
	s, err := StageUploads([]string{p}, filepath.Join(dir, "uploads"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Remove()
	st, err := os.Stat(s.Files[0].Path)
	if err != nil || st.Size() != size {
		t.Fatalf("copy: %v %v", st, err)
	}
	if !st.ModTime().Equal(when) {
		t.Fatalf("copy's time %v, want the file's %v", st.ModTime(), when)
	}
	c, _ := os.Open(s.Files[0].Path)
	defer c.Close()
	buf := make([]byte, 6)
	c.ReadAt(buf, size/2)
	if string(buf) != "middle" {
		t.Fatalf("data in the middle: %q", buf)
	}
	c.ReadAt(buf[:3], size-3)
	if string(buf[:3]) != "end" {
		t.Fatalf("data at the end: %q", buf[:3])
	}
	if src, _ := os.Stat(p); diskBytes(src) >= size/2 {
		t.Skipf("the file system here does not keep holes (%d bytes on disk)", diskBytes(src))
	}
	if used := diskBytes(st); used > 1<<20 {
		t.Fatalf("the copy of a sparse file takes %d bytes on disk", used)
	}
}
