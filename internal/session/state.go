package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"

	"github.com/dtb-cli/dtb/internal/browser"
	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/rawfile"
	"github.com/dtb-cli/dtb/internal/userdirs"
)

// StateVersion is the version of the session file format.
const StateVersion = 1

// TabTTL is how long an owned tab's bookkeeping lives without use.
const TabTTL = 30 * time.Minute

// State is the session file: which browser the session uses, the tabs dtb
// created in it, aliases, workspaces and the current tab. It is extensible:
// Refs is reserved for element refs, Ext holds any other extension by name.
// Unknown keys are not preserved, so extensions must live in Refs or Ext.
type State struct {
	Version      int                        `json:"version"`
	Name         string                     `json:"name"`
	Browser      *browser.BrowserInfo       `json:"browser,omitempty"`
	CurrentTab   string                     `json:"currentTab,omitempty"`
	AliasCounter int                        `json:"aliasCounter"`
	Aliases      map[string]string          `json:"aliases,omitempty"`    // alias (t1, t2 …) → target id
	Tabs         map[string]*OwnedTab       `json:"tabs,omitempty"`       // owned tabs by target id
	Workspaces   map[string]*Workspace      `json:"workspaces,omitempty"` // by name
	Contexts     []string                   `json:"contexts,omitempty"`   // incognito browser contexts dtb created
	Dialogs      map[string]*TabDialog      `json:"dialogs,omitempty"`    // by target id: a dialog left open, an armed answer, a tab left busy
	Refs         json.RawMessage            `json:"refs,omitempty"`
	Ext          map[string]json.RawMessage `json:"ext,omitempty"`
	UpdatedAt    time.Time                  `json:"updatedAt"`
}

// OwnedTab is the bookkeeping of a tab dtb created.
type OwnedTab struct {
	Alias          string    `json:"alias,omitempty"`
	Workspace      string    `json:"workspace,omitempty"`
	BrowserContext string    `json:"browserContext,omitempty"`
	Created        time.Time `json:"created"`
	LastUse        time.Time `json:"lastUse"`
}

// TabDialog is what the session knows of a tab's dialogs: one an earlier
// command left open, and an answer armed for the next one (dtb dialog
// accept|dismiss with no dialog open).
type TabDialog struct {
	Open  *cdp.Dialog       `json:"open,omitempty"`
	Armed *cdp.DialogPolicy `json:"armed,omitempty"`
	// Busy: the tab's main thread did not answer when an earlier command
	// ended (a script of the page's that runs on): the next command checks
	// before it waits on the tab.
	Busy bool `json:"busy,omitempty"`
}

// Workspace is a named window dtb created and keeps tabs in.
type Workspace struct {
	Window         int       `json:"window,omitempty"`
	ActiveTab      string    `json:"activeTab,omitempty"`
	Incognito      bool      `json:"incognito"`
	BrowserContext string    `json:"browserContext,omitempty"`
	Created        time.Time `json:"created"`
}

// AliasOf returns the alias of a target id, or "".
func (s *State) AliasOf(id string) string {
	for a, t := range s.Aliases {
		if t == id {
			return a
		}
	}
	return ""
}

// EnsureAlias returns the alias of id, assigning the next one (never reused in
// the session) when it has none.
func (s *State) EnsureAlias(id string) string {
	if a := s.AliasOf(id); a != "" {
		return a
	}
	if s.Aliases == nil {
		s.Aliases = map[string]string{}
	}
	s.AliasCounter++
	a := fmt.Sprintf("t%d", s.AliasCounter)
	s.Aliases[a] = id
	return a
}

// Own records id as a tab dtb created.
func (s *State) Own(id, workspace, browserContext string, now time.Time) *OwnedTab {
	if s.Tabs == nil {
		s.Tabs = map[string]*OwnedTab{}
	}
	t := &OwnedTab{Alias: s.EnsureAlias(id), Workspace: workspace, BrowserContext: browserContext, Created: now, LastUse: now}
	s.Tabs[id] = t
	return t
}

// Forget drops every trace of a target that no longer exists (its alias stays
// retired: the counter never goes back).
func (s *State) Forget(id string) {
	delete(s.Tabs, id)
	delete(s.Dialogs, id)
	for a, t := range s.Aliases {
		if t == id {
			delete(s.Aliases, a)
		}
	}
	if s.CurrentTab == id {
		s.CurrentTab = ""
	}
	for _, w := range s.Workspaces {
		if w.ActiveTab == id {
			w.ActiveTab = ""
		}
	}
}

// Sweep removes owned-tab entries unused for longer than TabTTL and reports
// whether it removed any.
func (s *State) Sweep(now time.Time) bool {
	changed := false
	for id, t := range s.Tabs {
		if now.Sub(t.LastUse) > TabTTL {
			delete(s.Tabs, id)
			changed = true
		}
	}
	return changed
}

// needsSweep reports whether Sweep would change anything.
func (s *State) needsSweep(now time.Time) bool {
	for _, t := range s.Tabs {
		if now.Sub(t.LastUse) > TabTTL {
			return true
		}
	}
	return false
}

// resetBrowser forgets everything bound to the previous browser.
func (s *State) resetBrowser(b *browser.BrowserInfo) {
	s.Browser = b
	s.CurrentTab = ""
	s.Aliases = nil
	s.Tabs = nil
	s.Workspaces = nil
	s.Contexts = nil
	s.Refs = nil
	s.Dialogs = nil
}

// StateDir is the directory of dtb's state (userdirs.StateDir).
func StateDir() (string, error) { return userdirs.StateDir() }

// CacheDir is dtb's cache directory (userdirs.CacheDir).
func CacheDir() (string, error) { return userdirs.CacheDir() }

// store reads and writes one session file.
type store struct {
	name string
	path string
	lock string
}

func newStore(stateDir, name string) (*store, error) {
	if !userdirs.ValidSessionName(name) {
		return nil, output.Usage("invalid session name %q: use letters, digits, '.', '_' and '-' (at most 64)", name)
	}
	if stateDir == "" {
		d, err := StateDir()
		if err != nil {
			return nil, output.Wrap("io-error", err, "cannot find the state directory")
		}
		stateDir = d
	}
	dir := filepath.Join(stateDir, "sessions")
	return &store{name: name, path: filepath.Join(dir, name+".json"), lock: filepath.Join(dir, name+".lock")}, nil
}

// load reads the session file without a lock (writes are atomic renames, so a
// reader sees a whole file). A missing file is a fresh state.
func (st *store) load() (*State, error) {
	b, err := rawfile.Read(st.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &State{Version: StateVersion, Name: st.name}, nil
	}
	if err != nil {
		return nil, output.Wrap("io-error", err, "cannot read the session file").With("sessionFile", st.path)
	}
	s := &State{}
	if err := json.Unmarshal(b, s); err != nil || s.Version > StateVersion {
		// A corrupt or future file is replaced rather than trusted.
		return &State{Version: StateVersion, Name: st.name}, nil
	}
	if s.Name == "" {
		s.Name = st.name
	}
	return s, nil
}

// save writes the state atomically: a temp file in the same directory, mode
// 0600, renamed over the session file (readers see the old or the new file,
// never a part). It is not fsynced: the session is disposable state, and a
// corrupt file is replaced on load. Callers hold the lock.
func (st *store) save(s *State) error {
	dir := filepath.Dir(st.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return output.Wrap("io-error", err, "cannot create the state directory")
	}
	s.Version = StateVersion
	s.Name = st.name
	s.UpdatedAt = time.Now().UTC()
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return output.Wrap("io-error", err, "cannot encode the session")
	}
	f, err := os.CreateTemp(dir, "."+st.name+".*.tmp")
	if err != nil {
		return output.Wrap("io-error", err, "cannot write the session file")
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return output.Wrap("io-error", err, "cannot write the session file").With("sessionFile", st.path)
	}
	if err := f.Chmod(0o600); err != nil {
		return fail(err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(tmp, st.path); err != nil {
		os.Remove(tmp)
		return output.Wrap("io-error", err, "cannot write the session file").With("sessionFile", st.path)
	}
	return nil
}

// lockWaitMax bounds the wait for the session lock of work that has no
// deadline of its own (what a command records after its --timeout passed):
// a holder that is stopped (SIGSTOP) or hung never hangs another dtb.
const lockWaitMax = 5 * time.Second

// withLock runs fn holding the session's exclusive lock.
func (st *store) withLock(ctx context.Context, fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(st.lock), 0o700); err != nil {
		return output.Wrap("io-error", err, "cannot create the state directory")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, lockWaitMax)
		defer cancel()
	}
	fl := flock.New(st.lock, flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, 3*time.Millisecond)
	if err != nil {
		if ctx.Err() != nil {
			return output.Wrap("timeout", ctx.Err(), "waiting for the session lock").With("sessionFile", st.path)
		}
		return output.Wrap("io-error", err, "cannot lock the session").With("sessionFile", st.path)
	}
	if !ok {
		return output.Errorf("timeout", "waiting for the session lock").With("sessionFile", st.path)
	}
	defer fl.Unlock()
	return fn()
}

// update is a locked read-modify-write of the session file. fn sees the newest
// state; the file is written only when fn returns nil.
func (st *store) update(ctx context.Context, fn func(*State) error) (*State, error) {
	var out *State
	err := st.withLock(ctx, func() error {
		s, err := st.load()
		if err != nil {
			return err
		}
		before, _ := json.Marshal(s)
		s.Sweep(time.Now())
		if err := fn(s); err != nil {
			return err
		}
		out = s
		if after, _ := json.Marshal(s); bytes.Equal(before, after) {
			return nil // nothing changed: no write
		}
		return st.save(s)
	})
	return out, err
}
