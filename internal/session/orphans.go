package session

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dtb-cli/dtb/internal/hostwire"
	"github.com/dtb-cli/dtb/internal/proc"
)

// Forget removes the session's files (state, lock, browser log, launch
// record, upload copies): for a session nobody will use again, such as an
// MCP server's own once its browser is stopped.
func (s *Session) Forget() {
	dir := filepath.Dir(s.st.path)
	files := []string{s.st.path, s.st.lock, filepath.Join(dir, s.cfg.Session+".browser.log"), s.launchRecord()}
	if hp, err := hostwire.PathsFor(filepath.Dir(dir), s.cfg.Session); err == nil {
		// The host's start lock and log (a running host removes its socket
		// and info itself when it ends).
		files = append(files, hp.Lock, hp.Log)
	}
	for _, f := range files {
		os.Remove(f)
	}
	os.RemoveAll(s.UploadDir())
}

// ReapOrphans ends what the sessions named prefix+PID left when their
// process died without stopping them (an MCP server killed by its host):
// their browser is stopped and their files go. A session whose process still
// runs is left alone; it returns the sessions reaped.
func ReapOrphans(ctx context.Context, stateDir, prefix string) []string {
	if stateDir == "" {
		d, err := StateDir()
		if err != nil {
			return nil
		}
		stateDir = d
	}
	files, _ := filepath.Glob(filepath.Join(stateDir, "sessions", prefix+"*.json"))
	var reaped []string
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		pid, err := strconv.Atoi(strings.TrimPrefix(name, prefix))
		if err != nil || pid <= 0 || pid == os.Getpid() || proc.Alive(pid) {
			continue
		}
		s, err := Open(ctx, Config{Session: name, StateDir: stateDir})
		if err != nil {
			continue
		}
		s.StopBrowser(ctx)
		s.Forget()
		s.Close()
		reaped = append(reaped, name)
	}
	return reaped
}
