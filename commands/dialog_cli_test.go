package commands

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dtb-cli/dtb/internal/browsertest"
)

// pageLog is the fixture's own record of what its dialogs returned.
func pageLog(t *testing.T, e *browsertest.CLI, extra ...string) string {
	t.Helper()
	r := e.Run(t, append([]string{"eval", "window.log.join(' ')", "-r"}, extra...)...)
	r.Exit(t, 0)
	return strings.TrimSpace(r.Stdout)
}

// uploadAnswersChooser: after clicks that opened the file chooser of
// dialogs.html's #avatar, the page has seen no file, the upload on the same
// locator gives it one, and a click that opens no chooser reports none.
func uploadAnswersChooser(t *testing.T, e *browsertest.CLI) {
	t.Helper()
	if got := pageLog(t, e); got != "" {
		t.Fatalf("the page saw files after clicks only: %q", got)
	}
	f := filepath.Join(t.TempDir(), "avatar.png")
	os.WriteFile(f, []byte("png"), 0o644)
	e.Run(t, "upload", "--css", "#avatar", f).Exit(t, 0)
	if got := pageLog(t, e); got != "files:1" {
		t.Fatalf("after the upload the page logged %q", got)
	}
	if r := e.Run(t, "click", "#alert", "--dialog", "accept"); strings.Contains(r.Stdout, "fileChooser") {
		t.Fatalf("a click without a chooser: %s", r)
	}
}

type dialogDoc struct {
	Dialog *struct {
		Type, Message, DefaultPrompt, Answer, By, Text string
		Open                                           bool
	}
	After *struct{ URL string }
}

// TestDialogsCLI: an action that opens alert, confirm, prompt or beforeunload
// returns at once and reports the dialog; --dialog and an armed dtb dialog
// answer it; eval that meets a dialog fails dialog-open. The headless shell
// dismisses a dialog left open when the command detaches.
func TestDialogsCLI(t *testing.T) {
	browsertest.Need(t, browsertest.Find().Preferred(), "Chromium")
	e := newCLI(t)
	// Direct attach: what the browser does with a dialog when dtb detaches
	// (with the session host it stays open: TestHostDialogAcrossCommands).
	e.Env = append(e.Env, "DTB_HOST=off")
	srv := interactServer(t, e)
	e.Run(t, "open", srv.URL+"/dialogs.html").Exit(t, 0)

	t.Run("left open", func(t *testing.T) {
		var doc dialogDoc
		r := e.Run(t, "click", "#confirm")
		r.Exit(t, 0)
		r.Decode(t, &doc)
		if doc.Dialog == nil || doc.Dialog.Type != "confirm" || doc.Dialog.Message != "Delete the file?" {
			t.Fatalf("click that opens confirm: %s", r.Stdout)
		}
		// The shell has no dialog of its own: it dismissed it when dtb detached.
		if doc.Dialog.Open || doc.Dialog.Answer != "dismiss" || doc.Dialog.By != "browser" {
			t.Fatalf("the headless shell's dialog: %+v", *doc.Dialog)
		}
		if got := pageLog(t, e); got != "confirm:false" {
			t.Fatalf("page log %q", got)
		}
	})
	t.Run("policy", func(t *testing.T) {
		e.Run(t, "eval", "window.log = []").Exit(t, 0)
		var doc dialogDoc
		r := e.Run(t, "click", "#confirm", "--dialog", "accept")
		r.Decode(t, &doc)
		if doc.Dialog == nil || doc.Dialog.Answer != "accept" || doc.Dialog.By != "policy" || doc.Dialog.Open {
			t.Fatalf("--dialog accept: %s", r)
		}
		r = e.RunWith(t, []string{"DTB_DIALOG=accept"}, "", "click", "#prompt")
		r.Decode(t, &doc)
		if doc.Dialog == nil || doc.Dialog.Type != "prompt" || doc.Dialog.DefaultPrompt != "Grace" || doc.Dialog.Text != "Grace" {
			t.Fatalf("DTB_DIALOG=accept on a prompt: %s", r)
		}
		e.Run(t, "click", "#alert", "--dialog", "dismiss").Exit(t, 0)
		e.Run(t, "press", "Enter", "--css", "#field", "--dialog", "dismiss").Exit(t, 0)
		if got := pageLog(t, e); got != "confirm:true prompt:Grace alert:done confirm:false" {
			t.Fatalf("page log %q", got)
		}
		e.Run(t, "click", "#confirm", "--dialog", "maybe").Fails(t, 2, "usage")
	})
	t.Run("armed", func(t *testing.T) {
		e.Run(t, "eval", "window.log = []").Exit(t, 0)
		r := e.Run(t, "dialog", "accept", "--text", "Ada")
		var st struct {
			Open  bool
			Armed *struct{ Answer, Text string }
		}
		r.Decode(t, &st)
		if st.Open || st.Armed == nil || st.Armed.Answer != "accept" || st.Armed.Text != "Ada" {
			t.Fatalf("dialog accept with none open: %s", r)
		}
		var doc dialogDoc
		r = e.Run(t, "click", "#prompt")
		r.Decode(t, &doc)
		if doc.Dialog == nil || doc.Dialog.By != "armed" || doc.Dialog.Text != "Ada" {
			t.Fatalf("armed answer: %s", r)
		}
		// Spent: the next dialog is left open (and dismissed by the shell).
		e.Run(t, "click", "#confirm").Exit(t, 0)
		if got := pageLog(t, e); got != "prompt:Ada confirm:false" {
			t.Fatalf("page log %q", got)
		}
		r = e.Run(t, "dialog")
		r.Decode(t, &st)
		if st.Open || st.Armed != nil {
			t.Fatalf("dialog after the armed answer was spent: %s", r)
		}
		e.Run(t, "dialog", "maybe").Fails(t, 2, "usage")
		e.Run(t, "dialog", "dismiss", "--text", "x").Fails(t, 2, "usage")
	})
	t.Run("eval meets a dialog", func(t *testing.T) {
		e.Run(t, "eval", "window.log = []").Exit(t, 0)
		f := e.Run(t, "eval", "log.push('eval:' + confirm('From eval')), 1").Fails(t, 6, "dialog-open")
		if d, _ := f["dialog"].(map[string]any); d == nil || d["message"] != "From eval" || d["type"] != "confirm" {
			t.Fatalf("dialog-open names the dialog: %v", f)
		}
		if got := pageLog(t, e); got != "eval:false" {
			t.Fatalf("page log %q", got)
		}
		r := e.Run(t, "eval", "confirm('again')", "--dialog", "accept")
		if strings.TrimSpace(r.Stdout) != "true" {
			t.Fatalf("eval --dialog accept: %s", r)
		}
	})
	t.Run("beforeunload", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/dialogs.html#guard").Exit(t, 0)
		var doc dialogDoc
		r := e.Run(t, "click", "#leave", "--dialog", "dismiss")
		r.Decode(t, &doc)
		if doc.Dialog == nil || doc.Dialog.Type != "beforeunload" || doc.Dialog.Answer != "dismiss" {
			t.Fatalf("beforeunload dismissed: %s", r)
		}
		if got := pageLog(t, e); got != "" {
			t.Fatalf("the page stayed: log %q", got)
		}
		r = e.Run(t, "click", "#leave", "--dialog", "accept")
		r.Decode(t, &doc)
		if doc.Dialog == nil || doc.Dialog.Type != "beforeunload" || doc.Dialog.Answer != "accept" {
			t.Fatalf("beforeunload accepted: %s", r)
		}
		r = e.Run(t, "eval", "location.pathname", "-r")
		if strings.TrimSpace(r.Stdout) != "/next.html" {
			t.Fatalf("after accepting beforeunload the tab is at %s", r.Stdout)
		}
	})
	// A click that opens a file chooser says so and names the upload that
	// answers it; that upload then works.
	t.Run("file chooser", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/dialogs.html").Exit(t, 0)
		r := e.Run(t, "click", "#avatar")
		var doc struct {
			FileChooser *struct {
				Multiple bool
				Accept   string
			}
			Hint string
		}
		r.Decode(t, &doc)
		if doc.FileChooser == nil || doc.FileChooser.Multiple || doc.FileChooser.Accept != "image/png,image/jpeg" || !strings.Contains(doc.Hint, `dtb upload --css "#avatar"`) {
			t.Fatalf("click that opens a chooser: %s", r)
		}
		uploadAnswersChooser(t, e)
	})
	// open: a page that asks while loading does not hold the load wait.
	t.Run("open", func(t *testing.T) {
		for _, c := range []struct {
			args       []string
			answer, by string
			log        string
		}{
			{nil, "dismiss", "browser", "confirm:false"},
			{[]string{"--dialog", "accept"}, "accept", "policy", "confirm:true"},
		} {
			var doc dialogDoc
			r := e.Run(t, append([]string{"open", srv.URL + "/dialog-onload.html"}, c.args...)...)
			r.Exit(t, 0)
			r.Decode(t, &doc)
			if doc.Dialog == nil || doc.Dialog.Message != "Stay signed in?" || doc.Dialog.Answer != c.answer || doc.Dialog.By != c.by {
				t.Fatalf("open %v: %s", c.args, r)
			}
			if got := pageLog(t, e); got != c.log {
				t.Fatalf("open %v: page log %q", c.args, got)
			}
		}
	})
	// A main thread blocked by a script is named as such, not a bare deadline.
	t.Run("unresponsive", func(t *testing.T) {
		e.Run(t, "open", srv.URL+"/dialogs.html").Exit(t, 0)
		// The loop starts right after eval answers, before the click connects.
		e.Run(t, "eval", "setTimeout(() => { const t = Date.now(); while (Date.now() - t < 6000) {} }, 0), 1").Exit(t, 0)
		e.Run(t, "click", "#alert", "--timeout", "2s").Fails(t, 4, "page-unresponsive")
	})
}

// TestDialogsKeptOpenCLI: a browser that keeps a dialog open after the command
// ends (Chromium): a later page command fails dialog-open at once, naming it,
// and dtb dialog shows it.
func TestDialogsKeptOpenCLI(t *testing.T) {
	full := browsertest.Find().Chromium
	browsertest.Need(t, full, "Chromium")
	e := newCLI(t)
	e.Env = append(e.Env, "DTB_CHROME="+full, "DTB_SESSION=kept", "DTB_HOST=off") // dialog-stale is the direct attach's answer; the host keeps the dialog answerable
	srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("..", "testdata", "interact"))))
	t.Cleanup(srv.Close)
	t.Cleanup(func() {
		st, _ := readSessionNamed(e, "kept")
		e.Run(t, "browser", "stop")
		browsertest.Kill(st.Browser.PID)
	})
	e.Run(t, "open", srv.URL+"/dialogs.html").Exit(t, 0)
	var doc dialogDoc
	r := e.Run(t, "click", "#later")
	r.Exit(t, 0)
	r.Decode(t, &doc)
	if doc.Dialog == nil || doc.Dialog.Type != "confirm" || doc.Dialog.Message != "Later?" || !doc.Dialog.Open {
		t.Fatalf("click whose handler opens confirm a moment later: %s", r)
	}
	f := e.Run(t, "eval", "1").Fails(t, 6, "dialog-open")
	if d, _ := f["dialog"].(map[string]any); d == nil || d["message"] != "Later?" {
		t.Fatalf("dialog-open names the dialog: %v", f)
	}
	e.Run(t, "click", "#alert").Fails(t, 6, "dialog-open")
	var st struct {
		Open, Blocked bool
		Dialog        *struct{ Type, Message string }
	}
	r = e.Run(t, "dialog")
	r.Decode(t, &st)
	if !st.Open || !st.Blocked || st.Dialog == nil || st.Dialog.Message != "Later?" {
		t.Fatalf("dtb dialog: %s", r)
	}
	e.Run(t, "dialog", "accept").Fails(t, 1, "dialog-stale")
	// The way out: close the tab (the dialog's record goes with it).
	e.Run(t, "close").Exit(t, 0)
	e.Run(t, "open", srv.URL+"/dialogs.html").Exit(t, 0)
	e.Run(t, "click", "#confirm", "--dialog", "accept").Exit(t, 0)
	if got := pageLog(t, e); got != "confirm:true" {
		t.Fatalf("page log %q", got)
	}
}
