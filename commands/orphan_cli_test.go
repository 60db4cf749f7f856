package commands

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// A cold `dtb open` killed (SIGKILL) while its browser starts leaves no
// unrecorded browser: `browser stop` finds and ends what the launch left, and
// so does the next command that needs a browser (issue 23.4).
func TestKilledLaunchLeavesNoOrphan(t *testing.T) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("needs /proc")
	}
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	e.Env = append(e.Env, "DTB_HOST=off") // the launch is this process's
	record := filepath.Join(e.State, "sessions", "default.launch.json")

	// killedLaunch starts a cold open, kills it once its browser runs and
	// returns the profile of that browser.
	killedLaunch := func(t *testing.T) string {
		t.Helper()
		cmd := exec.Command(e.Bin, "open", "about:blank")
		cmd.Env = append(e.Environ(), e.Env...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Wait()
		deadline := time.Now().Add(20 * time.Second)
		for {
			var rec struct {
				Group      int
				ProfileDir string
			}
			if b, err := os.ReadFile(record); err == nil && json.Unmarshal(b, &rec) == nil && rec.Group > 0 && len(procsOfProfile(rec.ProfileDir)) > 0 {
				cmd.Process.Signal(syscall.SIGKILL)
				t.Cleanup(func() {
					for _, pid := range procsOfProfile(rec.ProfileDir) {
						browsertest.Kill(pid)
					}
					os.RemoveAll(rec.ProfileDir)
				})
				return rec.ProfileDir
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatal("the launch never started a browser")
			}
			time.Sleep(2 * time.Millisecond)
		}
	}

	t.Run("browser stop ends what the launch left", func(t *testing.T) {
		profile := killedLaunch(t)
		if len(procsOfProfile(profile)) == 0 {
			t.Fatal("precondition: the killed launch left no browser")
		}
		if st, err := readSession(e); err == nil && st.Browser.PID != 0 {
			t.Skip("the launch recorded its browser before it was killed")
		}
		var res struct {
			Stopped, Orphan bool
			ProfileDir      string
		}
		r := e.Run(t, "browser", "stop")
		r.Exit(t, 0)
		r.Decode(t, &res)
		if !res.Orphan || res.ProfileDir != profile {
			t.Fatalf("browser stop: %+v, want the orphan of %s", res, profile)
		}
		if left := procsOfProfile(profile); len(left) != 0 {
			t.Fatalf("processes of the orphaned browser remain: %v", left)
		}
		if _, err := os.Stat(profile); !os.IsNotExist(err) {
			t.Fatalf("its temporary profile remains: %v", err)
		}
	})

	t.Run("the next command ends what the launch left", func(t *testing.T) {
		profile := killedLaunch(t)
		r := e.Run(t, "eval", "1+1")
		r.Exit(t, 0)
		if left := procsOfProfile(profile); len(left) != 0 {
			t.Fatalf("processes of the orphaned browser remain beside the new one: %v", left)
		}
		e.Run(t, "browser", "stop").Exit(t, 0)
	})
}
