package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// TestBrowserProcessesCLI launches the browser through a launcher script that
// runs the real binary without exec (Debian's /usr/bin/chromium-headless-shell,
// or one like it): dtb records the browser's own PID, keeps a browser that
// answers (and its profile) when the script dies, replaces one whose PID was
// killed without leaving any of its processes behind, and browser stop ends
// every process of the browser.
func TestBrowserProcessesCLI(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	bin := browsertest.Find().Preferred()
	browsertest.Need(t, bin, "Chromium")
	wrapper := launcherScript(t, bin)
	e := newCLI(t)
	e.Env = append(e.Env, "DTB_CHROME="+wrapper)
	type launched struct {
		PID        int
		ProfileDir string
	}
	var seen []launched
	t.Cleanup(func() {
		for _, l := range seen {
			for _, pid := range procsOfProfile(l.ProfileDir) {
				browsertest.Kill(pid)
			}
		}
	})
	launch := func(t *testing.T) launched {
		var l launched
		r := e.Run(t, "browser", "launch")
		r.Exit(t, 0)
		r.Decode(t, &l)
		seen = append(seen, l)
		return l
	}
	status := func(t *testing.T) launched {
		var st struct{ Browser launched }
		e.Run(t, "status").Decode(t, &st)
		return st.Browser
	}

	b1 := launch(t)
	t.Run("the recorded PID is the browser, not the script", func(t *testing.T) {
		if exe := exeName(b1.PID); exe == "sh" || exe == "dash" || exe == "bash" || !slices.Contains(procsOfProfile(b1.ProfileDir), b1.PID) {
			t.Fatalf("recorded pid %d is %q (processes of the profile: %v)", b1.PID, exe, procsOfProfile(b1.ProfileDir))
		}
	})
	t.Run("a dead launcher script leaves an answering browser in use", func(t *testing.T) {
		script := parentOf(b1.PID)
		if script <= 1 || exeName(script) == exeName(b1.PID) {
			t.Fatalf("no launcher script above pid %d (parent %d %q)", b1.PID, script, exeName(script))
		}
		// The script alone (it leads the browser's process group: not -pid).
		syscall.Kill(script, syscall.SIGKILL)
		for i := 0; browsertest.Alive(script) && i < 500; i++ {
			time.Sleep(10 * time.Millisecond)
		}
		r := e.Run(t, "eval", "1+1")
		r.Exit(t, 0)
		if len(r.Warnings()) != 0 || strings.TrimSpace(r.Stdout) != "2" {
			t.Fatalf("eval after the script died: %q %q", r.Stdout, r.Stderr)
		}
		if st := status(t); st.PID != b1.PID {
			t.Fatalf("browser replaced: %+v, want pid %d", st, b1.PID)
		}
		if _, err := os.Stat(b1.ProfileDir); err != nil {
			t.Fatalf("the profile of an answering browser was removed: %v", err)
		}
	})
	t.Run("browser stop ends the whole browser", func(t *testing.T) {
		r := e.Run(t, "browser", "stop")
		r.Exit(t, 0)
		if !strings.Contains(r.Stdout, `"stopped":true`) || !strings.Contains(r.Stdout, `"profileRemoved":true`) {
			t.Fatalf("stop: %s", r.Stdout)
		}
		if left := procsOfProfile(b1.ProfileDir); len(left) != 0 {
			t.Fatalf("processes of the stopped browser remain: %v", left)
		}
	})
	b2 := launch(t)
	t.Run("a killed browser is replaced and nothing of it remains", func(t *testing.T) {
		syscall.Kill(b2.PID, syscall.SIGKILL)
		r := e.Run(t, "eval", "1+1")
		r.Exit(t, 0)
		if !slices.Contains(r.Warnings(), "browser-gone") {
			t.Fatalf("no browser-gone warning: %q", r.Stderr)
		}
		b3 := status(t)
		seen = append(seen, b3)
		if b3.PID == 0 || b3.PID == b2.PID {
			t.Fatalf("not replaced: %+v", b3)
		}
		if left := procsOfProfile(b2.ProfileDir); len(left) != 0 {
			t.Fatalf("processes of the killed browser remain: %v", left)
		}
		if _, err := os.Stat(b2.ProfileDir); err == nil {
			t.Fatalf("the killed browser's temporary profile %s remains", b2.ProfileDir)
		}
		e.Run(t, "browser", "stop").Exit(t, 0)
		if left := procsOfProfile(b3.ProfileDir); len(left) != 0 {
			t.Fatalf("processes of the stopped browser remain: %v", left)
		}
	})
}

// launcherScript is Debian's launcher of bin when bin is one (a shell script
// that runs the binary without exec), else such a script around bin.
func launcherScript(t *testing.T, bin string) string {
	if b, err := os.ReadFile(bin); err == nil && bytes.HasPrefix(b, []byte("#!")) && !bytes.Contains(b, []byte("exec ")) {
		return bin
	}
	p := filepath.Join(t.TempDir(), "chromium-launcher")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n\""+bin+"\" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// procsOfProfile lists the live processes whose command line names profile,
// with the members of their process groups.
func procsOfProfile(profile string) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	groups := map[int]bool{}
	members := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !browsertest.Alive(pid) {
			continue
		}
		pgrp := statField(pid, 2)
		members[pgrp] = append(members[pgrp], pid)
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmd, []byte("--user-data-dir="+profile+"\x00")) {
			out = append(out, pid)
			groups[pgrp] = true
		}
	}
	for g := range groups {
		for _, pid := range members[g] {
			if !slices.Contains(out, pid) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// statField is field n (0: state, 1: ppid, 2: pgrp) after the command name
// of /proc/PID/stat.
func statField(pid, n int) int {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) <= n {
		return 0
	}
	v, _ := strconv.Atoi(f[n])
	return v
}

func parentOf(pid int) int { return statField(pid, 1) }

func exeName(pid int) string {
	p, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe")
	if err != nil {
		return ""
	}
	return filepath.Base(p)
}
