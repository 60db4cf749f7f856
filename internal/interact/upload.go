package interact

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/output"
)

// Upload sets files on a file input: the located input (hidden or not), the
// input of a located label, or, for a styled button that opens a file chooser,
// the input behind the chooser (intercepted: no native dialog opens). The
// paths pass the guard and are copied into a private folder (StageUploads):
// the browser gets the copies, exactly the bytes checked. Success is verified
// on input.files; after a failure the copies are removed at once.
func (p *Page) Upload(ctx context.Context, loc Locator, paths []string, settle Settle) (res *Result, err error) {
	start := time.Now()
	staged, err := StageUploads(paths, p.UploadDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			staged.Remove()
		}
	}()
	files := staged.Files
	canon := make([]string, len(files))
	for i, f := range files {
		canon[i] = f.Path
	}
	w := p.watch(ctx)
	defer w.stop()
	if err := w.ready(ctx); err != nil {
		return nil, err
	}
	out, err := p.act(ctx, loc, needAny, action{"kind": "fileinfo"})
	if err != nil {
		return nil, err
	}
	var info struct {
		FileInput bool `json:"fileInput"`
		Multiple  bool `json:"multiple"`
		Disabled  bool `json:"disabled"`
	}
	json.Unmarshal(out.act, &info)
	res = &Result{Action: "upload", Element: out.Element}
	var inputObj string
	sess := p.tab
	if info.FileInput {
		if info.Disabled {
			return nil, output.Errorf("not-interactable", "the file input of %s is disabled", describeEl(out.Element)).With("element", out.Element)
		}
		if !info.Multiple && len(files) > 1 {
			return nil, output.Usage("%s takes one file (it has no multiple attribute), got %d", describeEl(out.Element), len(files))
		}
		sess = out.frame.sess
		if inputObj, err = p.inputObject(ctx, loc, out); err != nil {
			return nil, err
		}
		if _, err := proto.Call(ctx, sess, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: canon, ObjectID: runtime.RemoteObjectID(inputObj)}); err != nil {
			return nil, output.Wrap("upload-failed", err, "setting the files")
		}
		res.set("via", "input")
	} else {
		// A button that opens a file chooser: intercept it and answer it.
		cw := p.watchChooser(ctx)
		defer cw.stop(ctx)
		if err := cw.add(ctx, out.frame.sess); err != nil {
			return nil, err
		}
		click, err := p.Click(ctx, loc, ClickOptions{Settle: Settle{Quiet: 0, Cap: 1}, chooser: cw})
		if err != nil {
			return nil, err
		}
		res.Element = click.Element
		wait := 5 * time.Second
		if dl, ok := ctx.Deadline(); ok && time.Until(dl)-margin < wait {
			wait = time.Until(dl) - margin
		}
		timer := time.NewTimer(wait)
		defer timer.Stop()
		var op chooserOpened
		select {
		case op = <-cw.got:
		case <-timer.C:
			return nil, output.Errorf("upload-failed", "clicking %s opened no file chooser; locate the file input itself (e.g. --css 'input[type=file]')", describeEl(click.Element)).With("element", click.Element)
		case <-ctx.Done():
			return nil, output.Wrap("timeout", ctx.Err(), "waiting for the file chooser")
		}
		if op.Mode == "selectSingle" && len(files) > 1 {
			return nil, output.Usage("the file chooser of %s takes one file, got %d", describeEl(click.Element), len(files))
		}
		sess = op.sess
		if _, err := proto.Call(ctx, sess, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: canon, BackendNodeID: op.BackendNodeID}); err != nil {
			return nil, output.Wrap("upload-failed", err, "setting the files")
		}
		r, err := proto.Call(ctx, sess, resolveNode, dom.ResolveNodeParams{BackendNodeID: op.BackendNodeID})
		if err != nil {
			return nil, wrapCDP(ctx, err)
		}
		inputObj = r.Object.ObjectID
		res.set("via", "chooser")
	}
	// Verify: the input must hold exactly these files now.
	var v struct {
		Act struct {
			Count int `json:"count"`
			Files []struct {
				Name string `json:"name"`
				Size int64  `json:"size"`
			} `json:"files"`
		} `json:"act"`
	}
	f := &frame{sess: sess}
	if err := p.callValue(ctx, f, inputObj, map[string]any{"op": "ref", "act": map[string]any{"kind": "files"}}, &v); err != nil {
		return nil, err
	}
	if v.Act.Count != len(files) {
		return nil, output.Errorf("upload-failed", "the input holds %d file(s) after setting %d", v.Act.Count, len(files)).With("element", res.Element)
	}
	res.set("files", files)
	res.set("count", len(files))
	res.After = w.settle(ctx, settle, start)
	return res, nil
}

// inputObject is the objectId of the file input an outcome acted on (the
// located element, or the input of a located label).
func (p *Page) inputObject(ctx context.Context, loc Locator, out *outcome) (string, error) {
	obj, err := p.outcomeObject(ctx, loc, out, true)
	if errors.Is(err, errGone) {
		return "", output.Errorf("upload-failed", "the file input moved while uploading; try again")
	}
	return obj, err
}
