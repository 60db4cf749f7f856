// Package userdirs places dtb's files: the state and cache folders and the
// names of sessions. It imports nothing heavy: the dtb front (cmd/dtb) uses it
// on every command.
package userdirs

import (
	"os"
	"path/filepath"
)

// StateDir is the directory of dtb's state: $DTB_STATE_DIR, else
// $XDG_STATE_HOME/dtb, else ~/.local/state/dtb; always absolute (a relative
// variable is taken from the working folder): the session host works from /.
func StateDir() (string, error) {
	if d := os.Getenv("DTB_STATE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "dtb"))
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "dtb"), nil
}

// CacheDir is dtb's cache directory: $DTB_CACHE_DIR (absolute, as for
// StateDir), else the user cache dir + /dtb.
func CacheDir() (string, error) {
	if d := os.Getenv("DTB_CACHE_DIR"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "dtb"), nil
}

// ValidSessionName: letters, digits, '.', '_' and '-', starting with a letter
// or digit, at most 64 (no regexp: package init is on every command's hot
// path).
func ValidSessionName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !alnum && (i == 0 || r != '.' && r != '_' && r != '-') {
			return false
		}
	}
	return true
}
