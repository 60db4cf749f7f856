package browser

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dtb-cli/dtb/internal/browser/chromeflags"
	"github.com/dtb-cli/dtb/internal/proc"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/systeminfo"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// headlessNames are tried first for headless use; fullNames for both.
var (
	headlessNames = []string{"chromium-headless-shell", "chrome-headless-shell", "headless_shell"}
	fullNames     = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome", "google-chrome-beta", "microsoft-edge"}
	macApps       = []string{
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
		"/Applications/Chromium.app/Contents/MacOS/Chromium",
		"/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary",
	}
)

// IsHeadlessShell reports whether a browser binary is a headless shell, which
// cannot show a window.
func IsHeadlessShell(path string) bool {
	b := strings.ToLower(filepath.Base(path))
	return strings.Contains(b, "headless")
}

// FindBrowser resolves the browser binary: explicit (--chrome / DTB_CHROME) when
// given, else chromium-headless-shell for headless use, else Chromium or Chrome on
// the PATH (and the usual macOS app paths). It returns what it looked for.
func FindBrowser(explicit string, headed bool) (string, []string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", []string{explicit}, output.Wrap("no-browser", err, "browser binary "+explicit+" not found").With("chrome", explicit)
		}
		if headed && IsHeadlessShell(p) {
			return "", []string{explicit}, output.Usage("--headed needs a full browser, %s is a headless shell", p)
		}
		return p, []string{explicit}, nil
	}
	var names []string
	if !headed {
		names = append(names, headlessNames...)
	}
	names = append(names, fullNames...)
	tried := append([]string(nil), names...)
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p, tried, nil
		}
	}
	if runtime.GOOS == "darwin" {
		for _, p := range macApps {
			tried = append(tried, p)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, tried, nil
			}
		}
	}
	return "", tried, output.Errorf("no-browser", "no Chrome or Chromium found on the PATH; install chromium-headless-shell or chromium, or set DTB_CHROME").With("tried", tried)
}

// LaunchOptions configure a browser launch.
type LaunchOptions struct {
	Binary      string        // resolved binary
	Headed      bool          // show a window
	UserDataDir string        // profile; empty for a fresh temporary one
	WindowSize  string        // WxH
	LogPath     string        // browser stdout/stderr; empty for none
	Timeout     time.Duration // how long to wait for DevToolsActivePort
	Session     string        // for the temporary profile's name
	// RecordPath is where the launch is recorded before the browser starts
	// (see launchrecord.go); the caller removes it once the session file
	// holds the browser. Empty: no record.
	RecordPath string
}

// Launch starts a browser detached from dtb (own session and process group,
// Setsid) so that it outlives the command, and waits until its DevTools
// endpoint answers. The PID recorded is the browser's own (see browserPID);
// Group is the group dtb started, which browser stop ends whole.
func Launch(ctx context.Context, o LaunchOptions) (*BrowserInfo, error) {
	profile := o.UserDataDir
	temp := false
	record := func(b *BrowserInfo) {
		if o.RecordPath != "" {
			writeLaunchRecord(o.RecordPath, b)
		}
	}
	if profile == "" {
		// Recorded before it exists, so nothing of the launch is unrecorded.
		profile, temp = newProfilePath(o.Session), true
		record(&BrowserInfo{Source: "launched", Binary: o.Binary, ProfileDir: profile, TempProfile: true})
		if err := os.Mkdir(profile, 0o700); err != nil {
			os.Remove(o.RecordPath)
			return nil, output.Wrap("launch-failed", err, "cannot create a browser profile")
		}
	} else {
		abs, err := filepath.Abs(profile)
		if err != nil {
			return nil, output.Wrap("launch-failed", err, "bad --user-data-dir")
		}
		profile = abs
		if err := os.MkdirAll(profile, 0o700); err != nil {
			return nil, output.Wrap("launch-failed", err, "cannot create the browser profile")
		}
	}
	os.Remove(filepath.Join(profile, "DevToolsActivePort")) // never read a stale one
	args := append([]string(nil), chromeflags.Base...)
	headless := !o.Headed
	if headless {
		args = append(args, "--headless")
	}
	args = append(args, "--user-data-dir="+profile)
	if o.WindowSize != "" {
		w, h, ok := ParseSize(o.WindowSize)
		if !ok {
			return nil, output.Usage("--window-size wants WxH, got %q", o.WindowSize)
		}
		args = append(args, fmt.Sprintf("--window-size=%d,%d", w, h))
	}
	args = append(args, "about:blank")
	cmd := exec.Command(o.Binary, args...)
	cmd.Stdin = nil
	var logf *os.File
	if o.LogPath != "" {
		if f, err := os.OpenFile(o.LogPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
			logf = f
			cmd.Stdout, cmd.Stderr = f, f
		}
	}
	record(&BrowserInfo{Source: "launched", Binary: o.Binary, ProfileDir: profile, TempProfile: temp})
	detach(cmd)
	if err := cmd.Start(); err != nil {
		if o.RecordPath != "" {
			os.Remove(o.RecordPath)
		}
		if logf != nil {
			logf.Close()
		}
		if temp {
			os.RemoveAll(profile)
		}
		return nil, output.Wrap("launch-failed", err, "cannot start "+o.Binary).With("binary", o.Binary)
	}
	if logf != nil {
		logf.Close()
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps the browser if it dies while dtb runs
	pid := cmd.Process.Pid
	record(&BrowserInfo{Source: "launched", Binary: o.Binary, PID: pid, Group: pid, ProfileDir: profile, TempProfile: temp})
	cleanup := func() {
		KillGroup(pid, syscall.SIGKILL)
		if temp {
			RemoveProfile(profile)
		}
		if o.RecordPath != "" {
			os.Remove(o.RecordPath)
		}
	}
	fail := func(err error, msg string) (*BrowserInfo, error) {
		cleanup()
		e := output.Wrap("launch-failed", err, msg).With("binary", o.Binary)
		if tail := logTail(o.LogPath); tail != "" {
			e.With("log", tail)
		}
		return nil, e
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var port int
	var path string
	for port == 0 {
		select {
		case err := <-exited:
			if err == nil {
				err = errors.New("exited")
			}
			cleanup()
			e := output.Wrap("launch-failed", err, "the browser exited at start").With("binary", o.Binary)
			if tail := logTail(o.LogPath); tail != "" {
				e.With("log", tail)
			}
			return nil, e
		case <-ctx.Done():
			return fail(ctx.Err(), "interrupted while the browser started")
		case <-deadline.C:
			return fail(errors.New("no DevToolsActivePort"), fmt.Sprintf("the browser did not open its DevTools port within %s", timeout))
		case <-tick.C:
			if p, pa, err := readActivePort(profile); err == nil && pa != "" {
				port, path = p, pa
			}
		}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	info := &BrowserInfo{
		Source:      "launched",
		Endpoint:    base,
		WebSocket:   fmt.Sprintf("ws://127.0.0.1:%d%s", port, path),
		PID:         pid,
		Group:       pid,
		Binary:      o.Binary,
		Headless:    headless,
		ProfileDir:  profile,
		TempProfile: temp,
		StartedAt:   time.Now().UTC(),
	}
	if v, err := FetchVersion(ctx, base, nil); err == nil {
		info.Version = v.Browser
	}
	if bp := browserPID(ctx, info.WebSocket); bp > 0 && processIs(bp, profile) {
		info.PID = bp
	}
	return info, nil
}

// browserPID is the browser process's own PID as the browser reports it
// (SystemInfo.getProcessInfo): not the PID dtb started when that is a
// launcher script that runs the browser without exec (Debian's
// /usr/bin/chromium-headless-shell). 0 when the browser does not say.
func browserPID(ctx context.Context, ws string) int {
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := cdp.Dial(cctx, ws, nil)
	if err != nil {
		return 0
	}
	defer c.Close()
	res, err := proto.Call(cctx, c.Target(""), systeminfo.GetProcessInfo, proto.Empty{})
	if err != nil {
		return 0
	}
	for _, p := range res.ProcessInfo {
		if p != nil && p.Type == "browser" {
			return int(p.ID)
		}
	}
	return 0
}

// ParseSize parses "WxH" (or "W,H").
func ParseSize(s string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.ToLower(s), "x")
	if !ok {
		a, b, ok = strings.Cut(s, ",")
	}
	if !ok {
		return 0, 0, false
	}
	w, err1 := strconv.Atoi(strings.TrimSpace(a))
	h, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || w <= 0 || h <= 0 {
		return 0, 0, false
	}
	return w, h, true
}

func logTail(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, _ := f.Stat()
	if st != nil && st.Size() > 2048 {
		f.Seek(st.Size()-2048, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	return strings.TrimSpace(string(b))
}

// RemoveProfile deletes a temporary profile. The browser's helpers may still
// be writing for a moment after the browser exits (a write in flight when the
// kill came re-creates a folder), so the profile counts as removed only once it
// has stayed gone for a moment.
func RemoveProfile(dir string) error {
	var err error
	for range 40 {
		if err = os.RemoveAll(dir); err == nil {
			time.Sleep(25 * time.Millisecond)
			if _, statErr := os.Lstat(dir); os.IsNotExist(statErr) {
				return nil
			}
			err = fmt.Errorf("%s re-appeared after removal", dir)
			continue
		}
		time.Sleep(25 * time.Millisecond)
	}
	return err
}

// WaitExit waits until pid is gone (or a zombie) or the timeout passes.
func WaitExit(pid int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !proc.Alive(pid) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return !proc.Alive(pid)
}
