package browser

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
)

// A launch record says, before a browser starts, where its processes will
// be found: its profile and, once started, its process group. dtb can be
// killed at any moment of a launch (SIGKILL 30 ms into a cold `dtb open`),
// and then the browser it started is in no session file. The record is
// written before the browser starts and removed once the session file holds
// the browser (or the launch failed and cleaned up); a record found later,
// under the session's lock, is what a killed launch left: ReapLaunch ends
// it. Launches happen under that lock, so no live launch has a record then.

// writeLaunchRecord writes b (its profile, group, binary) to path atomically.
func writeLaunchRecord(path string, b *BrowserInfo) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// ReadLaunchRecord reads the record at path (nil when there is none).
func ReadLaunchRecord(path string) *BrowserInfo {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var b BrowserInfo
	if json.Unmarshal(data, &b) != nil || b.ProfileDir == "" {
		return nil
	}
	return &b
}

// ReapLaunch ends every process of the browser a killed launch left (by its
// group and its profile), removes its temporary profile and the record. It
// reports what it found (nil: no record).
func ReapLaunch(path string) *BrowserInfo {
	b := ReadLaunchRecord(path)
	if b == nil {
		os.Remove(path)
		return nil
	}
	if EndProcesses(b, 0) && b.TempProfile {
		RemoveProfile(b.ProfileDir)
	}
	os.Remove(path)
	return b
}

// newProfilePath names a fresh temporary profile folder (not yet created).
func newProfilePath(session string) string {
	var r [8]byte
	rand.Read(r[:])
	return filepath.Join(os.TempDir(), "dtb-profile-"+session+"-"+hex.EncodeToString(r[:]))
}
