package interact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	}
	for p, comp := range refusedPaths {
		if c, _ := sensitiveComponent(p); c != comp {
			t.Errorf("sensitiveComponent(%q) = %q, want %q", p, c, comp)
		}
	}
	for _, p := range []string{"/home/u/report.pdf", "/tmp/photo.png", "/home/u/keys.txt.bak/../a", "/home/u/environment.txt", "/srv/app/envs/a", "/home/u/monkey.png", "/data/idea.txt"} {
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
		{filepath.Join(viaLink, "notes.txt"), "path-refused", `".ssh"`},
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
