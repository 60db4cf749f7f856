package interact

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"

	"github.com/dtb-cli/dtb/internal/cdp"
)

// Download is a file an action made the page download, saved by dtb.
type Download struct {
	Path              string `json:"path,omitempty"` // the saved file (mode 0600); none when it failed
	SuggestedFilename string `json:"suggestedFilename"`
	URL               string `json:"url"`
	Bytes             int64  `json:"bytes"`
	Mime              string `json:"mime,omitempty"`
	// State: completed, canceled (the page or the server cut it short), or
	// unfinished (still running at the command's deadline).
	State string `json:"state"`
}

// downloadWatch saves the downloads an action starts: the tab's downloads go
// to dir under their GUIDs (Browser.setDownloadBehavior on the tab's session:
// no browser connection needed), and what the events say is collected.
type downloadWatch struct {
	dir   string
	stop  func()
	mu    sync.Mutex
	began map[string]*Download // by GUID
	order []string
	state map[string]string // by GUID: the last progress state
	paths map[string]string
	done  chan struct{} // signalled on every progress event
}

// watchDownloads arms the tab's download capture into dir (created 0700).
// The request is posted, not awaited: the tab handles it before the input
// that follows.
func (p *Page) watchDownloads(ctx context.Context, dir string) *downloadWatch {
	if dir == "" || os.MkdirAll(dir, 0o700) != nil {
		return nil
	}
	w := &downloadWatch{dir: dir, began: map[string]*Download{}, state: map[string]string{}, paths: map[string]string{}, done: make(chan struct{}, 1)}
	begin, stopBegin := cdp.On(p.tab, cdpbrowser.DownloadWillBegin)
	progress, stopProgress := cdp.On(p.tab, cdpbrowser.DownloadProgress)
	var once sync.Once
	w.stop = func() { once.Do(func() { stopBegin(); stopProgress() }) }
	go func() {
		for ev := range begin {
			if e, ok := cdp.Decode(cdpbrowser.DownloadWillBegin, ev); ok {
				w.mu.Lock()
				w.began[e.GUID] = &Download{SuggestedFilename: e.SuggestedFilename, URL: e.URL, State: "unfinished"}
				w.order = append(w.order, e.GUID)
				w.mu.Unlock()
				w.signal()
			}
		}
	}()
	go func() {
		for ev := range progress {
			if e, ok := cdp.Decode(cdpbrowser.DownloadProgress, ev); ok {
				w.mu.Lock()
				w.state[e.GUID] = string(e.State)
				if d := w.began[e.GUID]; d != nil {
					d.Bytes = int64(e.ReceivedBytes)
				}
				if e.FilePath != "" {
					w.paths[e.GUID] = e.FilePath
				}
				w.mu.Unlock()
				w.signal()
			}
		}
	}()
	cdp.Post(ctx, p.tab, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: new(true)})
	return w
}

func (w *downloadWatch) signal() {
	select {
	case w.done <- struct{}{}:
	default:
	}
}

// collect waits, within ctx, for the download the action started (the first
// one, when several) to end, and saves it under its suggested name; nil when
// no download began. A download that begins within grace of the action's
// end still counts (the response that turns a navigation into a download
// can come after the page went quiet).
func (w *downloadWatch) collect(ctx context.Context, grace time.Duration) *Download {
	if w == nil {
		return nil
	}
	defer w.stop()
	graceEnd := time.After(grace)
	for {
		w.mu.Lock()
		var guid string
		if len(w.order) > 0 {
			guid = w.order[0]
		}
		st := w.state[guid]
		w.mu.Unlock()
		if guid != "" && (st == string(cdpbrowser.DownloadProgressStateCompleted) || st == string(cdpbrowser.DownloadProgressStateCanceled)) {
			return w.save(guid, st)
		}
		select {
		case <-w.done:
		case <-graceEnd:
			graceEnd = nil
			if guid == "" {
				w.mu.Lock()
				none := len(w.order) == 0
				w.mu.Unlock()
				if none {
					return nil
				}
			}
		case <-ctx.Done():
			if guid == "" {
				return nil
			}
			w.mu.Lock()
			d := *w.began[guid]
			w.mu.Unlock()
			return &d
		}
	}
}

// save moves a completed download from its GUID name to its suggested name
// (made unique) in the same folder, mode 0600.
func (w *downloadWatch) save(guid, state string) *Download {
	w.mu.Lock()
	d := *w.began[guid]
	src := w.paths[guid]
	w.mu.Unlock()
	d.State = state
	if state != string(cdpbrowser.DownloadProgressStateCompleted) {
		return &d
	}
	if src == "" {
		src = filepath.Join(w.dir, guid)
	}
	name := filepath.Base(d.SuggestedFilename)
	if name == "" || name == "." || name == "/" {
		name = "download"
	}
	dst := filepath.Join(w.dir, name)
	ext := filepath.Ext(name)
	for i := 1; ; i++ {
		if _, err := os.Lstat(dst); os.IsNotExist(err) {
			break
		}
		dst = filepath.Join(w.dir, fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(name, ext), i, ext))
	}
	if err := os.Rename(src, dst); err != nil {
		dst = src
	}
	os.Chmod(dst, 0o600)
	d.Path = dst
	if st, err := os.Stat(dst); err == nil {
		d.Bytes = st.Size()
	}
	d.Mime = mime.TypeByExtension(ext)
	if d.Mime == "" {
		if f, err := os.Open(dst); err == nil {
			head := make([]byte, 512)
			n, _ := f.Read(head)
			f.Close()
			d.Mime = http.DetectContentType(head[:n])
		}
	}
	return &d
}
