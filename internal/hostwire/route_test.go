package hostwire

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestHostRoute(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		args    []string
		env     func(string) string
		session string
		ok      bool
	}{
		{[]string{"dtb", "eval", "1+1"}, env(), "default", true},
		{[]string{"dtb", "eval", "1+1", "--session", "w"}, env(), "w", true},
		{[]string{"dtb", "eval", "1+1", "--session=w"}, env("DTB_SESSION", "x"), "w", true},
		{[]string{"dtb", "click", "#a"}, env("DTB_SESSION", "x"), "x", true},
		{[]string{"dtb", "eval"}, env(), "", false},      // the expression from stdin
		{[]string{"dtb", "eval", "-"}, env(), "", false}, // stdin
		{[]string{"dtb", "eval", "1", "--help"}, env(), "", false},
		{[]string{"dtb", "click", "--generate-bash-completion"}, env(), "", false}, // shell completion: no host for it
		{[]string{"dtb", "eval", "1"}, env("DTB_HOST", "off"), "", false},
		{[]string{"dtb", "eval", "1", "--cdp", "http://h:1"}, env(), "", false},
		{[]string{"dtb", "eval", "1", "--cdp", "http://h:1"}, env("DTB_HOST", "always"), "default", true},
		{[]string{"dtb", "eval", "1"}, env("DTB_CDP", "http://h:1"), "", false},
		{[]string{"dtb", "screenshot", "--out", "a.png"}, env(), "default", true}, // made absolute: NewRequest
		{[]string{"dtb", "screenshot", "--out", "/tmp/a.png"}, env(), "default", true},
		{[]string{"dtb", "status"}, env(), "", false},
		{[]string{"dtb", "upload", "#f", "/tmp/x"}, env(), "", false},
		{[]string{"dtb", "state"}, env(), "", false},
		{[]string{"dtb", "eval", "1", "--session", "../x"}, env(), "", false},
		{[]string{"dtb", "--version"}, env(), "", false},
	}
	for _, c := range cases {
		session, ok := Route(c.args, c.env)
		if session != c.session || ok != c.ok {
			t.Errorf("Route(%q) = %q, %v; want %q, %v", c.args, session, ok, c.session, c.ok)
		}
	}
}

// Toolbar commands go through a running host, never with stdin.
func TestRouteIfRunning(t *testing.T) {
	cases := []struct {
		args []string
		ok   bool
	}{
		{[]string{"dtb", "state"}, true},
		{[]string{"dtb", "run", "flags.set", "key=a"}, true},
		{[]string{"dtb", "run", "flags.set", "-"}, false},
		{[]string{"dtb", "run", "flags.set", "--input-file", "-"}, false},
		{[]string{"dtb", "run", "flags.set", "--input-file=-"}, false},
		{[]string{"dtb", "run", "flags.set", "--input-file", "in.json"}, true},
		{[]string{"dtb", "eval", "1"}, false},
		{[]string{"dtb", "relay"}, false},
		{[]string{"dtb", "mcp"}, false},
	}
	for _, c := range cases {
		if _, ok := RouteIfRunning(c.args, func(string) string { return "" }); ok != c.ok {
			t.Errorf("RouteIfRunning(%q) = %v, want %v", c.args, ok, c.ok)
		}
	}
}

// The files a command names are the CLI's: relative ones are made absolute
// against its working folder, in flags and in the variables that stand for
// flags; a program name without a slash stays a name to look up.
func TestNewRequestPaths(t *testing.T) {
	args := []string{"dtb", "screenshot", "--out", "a.png", "-o=b/c.png", "--body", "@x.json", "--body=text", "--har=h.har",
		"--chrome", "chromium", "--chrome=./bin/chrome", "--user-data-dir", "/abs/p", "-f", "e.js", "--jq", "out", "--", "--out", "z"}
	env := []string{"DTB_CDP_CA=ca.pem", "DTB_CHROME=chromium", "DTB_USER_DATA_DIR=prof", "HOME=/h", "DTB_FRONT_HOST_GONE=x"}
	r := NewRequest(args, "/w", env, false, true)
	want := []string{"dtb", "screenshot", "--out", "/w/a.png", "-o=/w/b/c.png", "--body", "@/w/x.json", "--body=text", "--har=/w/h.har",
		"--chrome", "chromium", "--chrome=/w/bin/chrome", "--user-data-dir", "/abs/p", "-f", "/w/e.js", "--jq", "out", "--", "--out", "z"}
	if !slices.Equal(r.Argv, want) {
		t.Errorf("argv\n got %q\nwant %q", r.Argv, want)
	}
	wantEnv := map[string]string{"DTB_CDP_CA": "/w/ca.pem", "DTB_CHROME": "chromium", "DTB_USER_DATA_DIR": "/w/prof"}
	if len(r.Env) != len(wantEnv) {
		t.Errorf("env %v, want %v", r.Env, wantEnv)
	}
	for k, v := range wantEnv {
		if r.Env[k] != v {
			t.Errorf("env %s = %q, want %q", k, r.Env[k], v)
		}
	}
	if r.Cwd != "/w" || r.OutTTY || !r.ErrTTY {
		t.Errorf("request %+v", r)
	}
}

// The host works from /: what places the session's files reaches it
// absolute; the settings of one request do not reach it at all.
func TestHostEnv(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	got := HostEnv([]string{"DTB_STATE_DIR=st", "DTB_CACHE_DIR=/c", "XDG_STATE_HOME=x", "DTB_TIMEOUT=5s", "NO_COLOR=1", "HOME=/h"})
	want := []string{"DTB_STATE_DIR=" + filepath.Join(wd, "st"), "DTB_CACHE_DIR=/c", "XDG_STATE_HOME=" + filepath.Join(wd, "x"), "HOME=/h"}
	if !slices.Equal(got, want) {
		t.Errorf("HostEnv\n got %q\nwant %q", got, want)
	}
}
