// Package interact gives dtb hands: locators (CSS, text, role and accessible
// name, label, placeholder, refs, coordinates; through open shadow roots and
// every frame, out-of-process ones included), real mouse and keyboard input
// through the protocol, select/check/scroll/upload, inspect with refs, and
// waits. Locating and the page-side half of each action run in one
// Runtime.callFunctionOn of the embedded library (js/*.js) per document.
package interact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	goruntime "runtime"
	"strings"
	"sync"
	"time"

	proto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
)

// Page drives one tab. It is not safe for concurrent use.
type Page struct {
	tab   *cdp.Page
	tabID string
	top   *frame
	// The out-of-process frames attached so far, by frame (= target) id, and
	// the auto-attach of each session that has it on.
	oopifs   map[string]oopif
	attaches map[*cdp.Page]*cdp.OOPIFAttach
	mu       sync.Mutex
	// Refs are the refs of the session (set by the caller; see LoadRefs).
	Refs *RefSet
	// UploadDir is where Upload keeps the private copies it hands the browser
	// (the session's uploads folder, which browser stop removes); "" for a
	// folder in the system temp folder.
	UploadDir string
}

// oopif is an out-of-process frame and the session whose auto-attach
// attached it.
type oopif struct {
	cdp.OOPIF
	parent *cdp.Page
}

// lib is the library's declaration for frame f (see libCall).
func (p *Page) lib(f *frame, full bool) string {
	if f.libDecl[0] == "" {
		key := libKeyFor(p.tabID, f.docObj)
		f.libDecl = [2]string{libCall(key, false), ""}
	}
	if full {
		if f.libDecl[1] == "" {
			f.libDecl[1] = libCall(libKeyFor(p.tabID, f.docObj), true)
		}
		return f.libDecl[1]
	}
	return f.libDecl[0]
}

// New wraps a connected tab; tabID is its target id (its main frame id).
func New(tab *cdp.Page, tabID string) *Page {
	return &Page{tab: tab, tabID: tabID, oopifs: map[string]oopif{}, attaches: map[*cdp.Page]*cdp.OOPIFAttach{}}
}

// Close stops the event subscriptions the page made (it never closes the tab).
func (p *Page) Close() {
	for _, a := range p.attaches {
		a.Close()
	}
	p.attaches = map[*cdp.Page]*cdp.OOPIFAttach{}
}

// frame is one document dtb searches: the tab's main document or a frame's.
type frame struct {
	sess   *cdp.Page // the tab, or an OOPIF's session
	id     string    // CDP frame id
	docObj string    // objectId of the document in its main world, or
	ctxID  int64     // an isolated world of an in-process child frame
	parent *frame
	owner  int64      // backendNodeId of the frame element in parent
	box    [4]float64 // viewport box of the frame in the parent's viewport
	// local: the frame's viewport in the frame element's untransformed
	// border box: [x, y] offset and the box's [width, height].
	local [4]float64
	url   string
	// sentLib: this process sent the whole library to the frame's document;
	// libUnkept: the document did not keep it, so every call sends it.
	sentLib, libUnkept bool
	// libDecl: the short and the full declaration of the library (see lib).
	libDecl [2]string
	// memo: docObj is what an earlier command on the kept connection found
	// (topFrame); a call that finds it gone forgets it.
	memo bool
}

// offset is where the frame's viewport starts in the tab's viewport.
func (f *frame) offset() (float64, float64) {
	var x, y float64
	for g := f; g != nil && g.parent != nil; g = g.parent {
		x += g.box[0]
		y += g.box[1]
	}
	return x, y
}

func (f *frame) chain() []string {
	var ids []string
	for g := f; g != nil && g.parent != nil; g = g.parent {
		ids = append([]string{g.id}, ids...)
	}
	return ids
}

// remote is the part of a Runtime.RemoteObject dtb reads.
type remote struct {
	Type                string          `json:"type"`
	Subtype             string          `json:"subtype"`
	ObjectID            string          `json:"objectId"`
	Value               json.RawMessage `json:"value"`
	Description         string          `json:"description"`
	DeepSerializedValue *deepValue      `json:"deepSerializedValue"`
}

type deepValue struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// nodeRef is a node as deep serialization describes it.
type nodeRef struct {
	BackendNodeID int64  `json:"backendNodeId"`
	LoaderID      string `json:"loaderId"`
	FrameID       string `json:"frameId"`
	LocalName     string `json:"localName"`
}

// callFunctionOn, evaluate and resolveNode are cdproto's commands with their
// answers read into dtb's view of a remote object (remote: plain string ids,
// as the action code passes them around).
var (
	callFunctionOn = proto.Command[runtime.CallFunctionOnParams, callResult]{Method: runtime.CallFunctionOn.Method}
	evaluate       = proto.Command[runtime.EvaluateParams, callResult]{Method: runtime.Evaluate.Method}
	resolveNode    = proto.Command[dom.ResolveNodeParams, resolved]{Method: dom.ResolveNode.Method}
)

type resolved struct {
	Object remote `json:"object"`
}

type callResult struct {
	Result           remote `json:"result"`
	ExceptionDetails *struct {
		Text      string  `json:"text"`
		Exception *remote `json:"exception"`
	} `json:"exceptionDetails"`
}

type returnMode int

const (
	byValue returnMode = iota
	byObject
	deep
)

// errGone marks a call whose document or object no longer exists (the frame
// navigated or was removed); callers re-resolve and retry.
var errGone = errors.New("document gone")

func isGone(err error) bool {
	if errors.Is(err, errGone) {
		return true
	}
	var pe *cdp.ProtocolError
	if errors.As(err, &pe) {
		m := pe.Message
		return strings.Contains(m, "Cannot find context") || strings.Contains(m, "Could not find object") ||
			strings.Contains(m, "Execution context was destroyed") || strings.Contains(m, "Inspected target navigated") ||
			strings.Contains(m, "No frame") || strings.Contains(m, "Frame with the given id") || strings.Contains(m, "Cannot find default execution context") ||
			strings.Contains(m, "No node with given id") || strings.Contains(m, "Node with given id does not belong")
	}
	return false
}

// call runs the library with req in frame f, on object this (an element) or
// on the frame's document.
func (p *Page) call(ctx context.Context, f *frame, this string, req any, mode returnMode) (*remote, error) {
	return p.callOn(ctx, f, this, req, "", mode)
}

// callOn is call with node (an objectId in the same context) as the
// library's second argument.
func (p *Page) callOn(ctx context.Context, f *frame, this string, req any, node string, mode returnMode) (*remote, error) {
	// The library travels once per document and world: the first call
	// leaves it on the document, later ones (of this process or the next)
	// call it there, and send it again only when it is missing (a new
	// document, another dtb build); see libCall.
	full := f.libUnkept
	params, err := p.libParams(ctx, f, this, req, node, full)
	if err != nil {
		return nil, wrapCDP(ctx, err)
	}
	params.AwaitPromise = new(true)
	switch mode {
	case byValue:
		params.ReturnByValue = new(true)
	case deep:
		params.SerializationOptions = &runtime.SerializationOptions{Serialization: runtime.SerializationOptionsSerializationDeep, MaxDepth: new(int64(1))}
	}
	var res callResult
	for {
		if res, err = proto.Call(ctx, f.sess, callFunctionOn, params); err != nil {
			return nil, p.callFailed(ctx, f, err)
		}
		if full || !libMissing(&res.Result) {
			break
		}
		if f.sentLib {
			f.libUnkept = true // sent, and missing again: the document does not keep it
		}
		full = true
		params.FunctionDeclaration = p.lib(f, true)
		f.sentLib = true
	}
	return libAnswer(&res)
}

// pendingCall is a by-value library call sent ahead of the input whose
// effect it reads (beginCall): the page-side library holds it until that
// input has reached the page.
type pendingCall struct {
	done chan callAnswer
}

type callAnswer struct {
	missed bool // the document had no library (another document): nothing ran
	err    error
}

// beginCall sends req to the library the document keeps in f (on its
// document), and decodes the answer into out when it comes.
func (p *Page) beginCall(ctx context.Context, f *frame, req map[string]any, out any) (*pendingCall, error) {
	params, err := p.libParams(ctx, f, "", req, "", false)
	if err != nil {
		return nil, wrapCDP(ctx, err)
	}
	params.AwaitPromise = new(true)
	params.ReturnByValue = new(true)
	answer, err := cdp.Begin(ctx, f.sess, callFunctionOn, params)
	if err != nil {
		return nil, p.callFailed(ctx, f, err)
	}
	c := &pendingCall{done: make(chan callAnswer, 1)}
	go func() {
		res, err := answer()
		switch {
		case err != nil:
			c.done <- callAnswer{err: p.callFailed(ctx, f, err)}
		case libMissing(&res.Result):
			c.done <- callAnswer{missed: true}
		default:
			r, err := libAnswer(&res)
			if err == nil {
				err = decodeValue(r, out)
			}
			c.done <- callAnswer{err: err}
		}
	}()
	return c, nil
}

// answer waits for the call's answer, asked once the input is answered: a
// call the page still holds then is let go by release (the input brought
// nothing it waits for: the page is read as it is).
func (c *pendingCall) answer(release func()) callAnswer {
	// An answer already read off the connection may still be decoding in
	// its goroutine (the host runs one at a time): let it finish first.
	goruntime.Gosched()
	select {
	case a := <-c.done:
		return a
	default:
	}
	release()
	return <-c.done
}

// callFailed is the error of a library call the protocol failed.
func (p *Page) callFailed(ctx context.Context, f *frame, err error) error {
	if isGone(err) {
		return p.gone(f, err)
	}
	return wrapCDP(ctx, err)
}

// libAnswer is the library's result in res, or the error it threw.
func libAnswer(res *callResult) (*remote, error) {
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg = d.Exception.Description
		}
		first, _, _ := strings.Cut(msg, "\n")
		if strings.Contains(first, "Execution context was destroyed") || strings.Contains(first, "Cannot find context") {
			return nil, fmt.Errorf("%w: %s", errGone, first)
		}
		return nil, output.Errorf("threw", "page-side library failed: %s", first)
	}
	return &res.Result, nil
}

// libParams is the call of the library (whole, or the short call of the
// one the document keeps) in f on this with req and node as its arguments.
func (p *Page) libParams(ctx context.Context, f *frame, this string, req any, node string, full bool) (runtime.CallFunctionOnParams, error) {
	if m, ok := req.(map[string]any); ok {
		if dl, ok := ctx.Deadline(); ok {
			// The library's walks stop at the command's deadline (core.js).
			m["budget"] = max(time.Until(dl).Milliseconds(), 1)
		}
	}
	arg, err := cdp.Arg(req)
	if err != nil {
		return runtime.CallFunctionOnParams{}, err
	}
	args := []*runtime.CallArgument{arg}
	if node != "" {
		args = append(args, &runtime.CallArgument{ObjectID: runtime.RemoteObjectID(node)})
	}
	params := runtime.CallFunctionOnParams{FunctionDeclaration: p.lib(f, full), Arguments: args}
	f.aim(&params, this)
	return params, nil
}

// postLib sends a library call in f without waiting for its answer: one
// whose answer nobody reads, which a blocked page must not hold up (the tab
// runs its calls in order). A document that keeps no library has nothing
// such a call could reach, and gets none.
func (p *Page) postLib(ctx context.Context, f *frame, req map[string]any) {
	if f.libUnkept {
		return
	}
	if params, err := p.libParams(ctx, f, "", req, "", false); err == nil {
		cdp.Post(context.WithoutCancel(ctx), f.sess, runtime.CallFunctionOn, params)
	}
}

// callValue runs the library and decodes its by-value result into out.
func (p *Page) callValue(ctx context.Context, f *frame, this string, req any, out any) error {
	return p.callValueOn(ctx, f, this, "", req, out)
}

// callValueOn is callValue with node (an objectId) as the library's second
// argument.
func (p *Page) callValueOn(ctx context.Context, f *frame, this, node string, req any, out any) error {
	r, err := p.callOn(ctx, f, this, req, node, byValue)
	if err != nil {
		return err
	}
	return decodeValue(r, out)
}

// decodeValue decodes the by-value result r of the library into out.
func decodeValue(r *remote, out any) error {
	if err := usageOf(r.Value); err != nil {
		return err
	}
	if out == nil || len(r.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Value, out); err != nil {
		return output.Errorf("cdp-error", "bad answer of the page-side library: %v", err)
	}
	return nil
}

// callDeep runs an op that returns [JSON string, node…] and decodes both.
func (p *Page) callDeep(ctx context.Context, f *frame, this string, req any, out any) ([]nodeRef, error) {
	r, err := p.call(ctx, f, this, req, deep)
	if err != nil {
		return nil, err
	}
	if r.DeepSerializedValue == nil {
		return nil, output.Errorf("cdp-error", "the browser did not serialize the result (deep serialization needs Chrome 117 or newer)")
	}
	dv := r.DeepSerializedValue
	if dv.Type == "object" {
		// An error object from the library ({error, message}).
		return nil, usageOf(deepObject(dv.Value))
	}
	var items []deepValue
	if err := json.Unmarshal(dv.Value, &items); err != nil || len(items) == 0 {
		return nil, output.Errorf("cdp-error", "bad answer of the page-side library")
	}
	var head string
	if err := json.Unmarshal(items[0].Value, &head); err != nil {
		return nil, output.Errorf("cdp-error", "bad answer of the page-side library")
	}
	if err := usageOf(json.RawMessage(head)); err != nil {
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal([]byte(head), out); err != nil {
			return nil, output.Errorf("cdp-error", "bad answer of the page-side library: %v", err)
		}
	}
	nodes := make([]nodeRef, 0, len(items)-1)
	for _, it := range items[1:] {
		var n nodeRef
		json.Unmarshal(it.Value, &n)
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// deepObject turns a deep-serialized object of primitives back into JSON.
func deepObject(raw json.RawMessage) json.RawMessage {
	var pairs [][2]json.RawMessage
	if json.Unmarshal(raw, &pairs) != nil {
		return nil
	}
	m := map[string]any{}
	for _, kv := range pairs {
		var k string
		var v deepValue
		json.Unmarshal(kv[0], &k)
		json.Unmarshal(kv[1], &v)
		var x any
		json.Unmarshal(v.Value, &x)
		m[k] = x
	}
	b, _ := json.Marshal(m)
	return b
}

// usageOf maps the library's {error:"usage"} answer to a usage error.
func usageOf(v json.RawMessage) error {
	if len(v) == 0 || v[0] != '{' {
		return nil
	}
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(v, &e) == nil {
		switch e.Error {
		case "usage":
			return output.Usage("%s", e.Message)
		case "timeout":
			return output.Errorf("timeout", "%s (--timeout)", e.Message)
		}
	}
	return nil
}

func wrapCDP(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var oe *output.Error
	if errors.As(err, &oe) {
		return err
	}
	if ctx.Err() != nil {
		return output.Wrap("timeout", ctx.Err(), "the command's --timeout passed")
	}
	return output.Wrap("cdp-error", err, "")
}

// topFrame is the tab's main document (resolved once per Page, again after a
// navigation).
func (p *Page) topFrame(ctx context.Context) (*frame, error) {
	if p.top != nil {
		return p.top, nil
	}
	f := &frame{sess: p.tab, id: p.tabID}
	if obj, ok := p.tab.Memo(topDocMemo); ok {
		f.docObj, f.memo = obj, true
		p.top = f
		return f, nil
	}
	gen := p.tab.MemoGen()
	if err := p.resolveDoc(ctx, f); err != nil {
		return nil, err
	}
	p.tab.SetMemo(topDocMemo, f.docObj, gen)
	p.top = f
	return f, nil
}

// aim points a call at object this, or (this "") at f's document: its
// object, or for an in-process child frame dtb's isolated world.
func (f *frame) aim(params *runtime.CallFunctionOnParams, this string) {
	if this == "" {
		this = f.docObj
	}
	if this != "" {
		params.ObjectID = runtime.RemoteObjectID(this)
	} else {
		params.ExecutionContextID = runtime.ExecutionContextID(f.ctxID)
	}
}

// gone is the error of a call that found f's document gone (errGone); a
// document remembered from an earlier command is forgotten.
func (p *Page) gone(f *frame, err error) error {
	if f.memo {
		p.tab.ForgetMemo(topDocMemo)
		f.memo = false
	}
	return fmt.Errorf("%w: %v", errGone, err)
}

// topDocMemo names the tab's document object among a kept connection's
// memos: the next command on the connection skips asking for it.
const topDocMemo = "topDoc"

// resolveDoc finds the document object of a frame: the main world's document
// for the tab and OOPIFs, an isolated world for in-process child frames.
func (p *Page) resolveDoc(ctx context.Context, f *frame) error {
	f.docObj, f.ctxID = "", 0
	f.libDecl, f.sentLib, f.libUnkept = [2]string{}, false, false
	if f.parent == nil || f.sess != f.parent.sess {
		var res callResult
		var err error
		for attempt := 0; ; attempt++ {
			res, err = proto.Call(ctx, f.sess, evaluate, runtime.EvaluateParams{Expression: "document"})
			if err == nil || attempt >= 40 || !isGone(err) {
				break
			}
			if !sleep(ctx, 25*time.Millisecond) {
				break
			}
		}
		if err != nil {
			return wrapCDP(ctx, err)
		}
		f.docObj = res.Result.ObjectID
		return nil
	}
	world, err := f.sess.IsolatedWorld(ctx, f.id, "dtb")
	if err != nil {
		if isGone(err) {
			return fmt.Errorf("%w: %v", errGone, err)
		}
		return wrapCDP(ctx, err)
	}
	f.ctxID = world
	return nil
}

// child resolves the frame a frame element (by its child frame id) shows:
// an in-process frame of the parent's session, or an out-of-process one
// through the parent session's auto-attach.
func (p *Page) child(ctx context.Context, parent *frame, frameID string, owner int64, box [4]float64) (*frame, error) {
	f := &frame{sess: parent.sess, id: frameID, parent: parent, owner: owner, box: box}
	if o, ok := p.oopif(frameID); ok {
		f.sess = o.Session
		return f, p.resolveDoc(ctx, f)
	}
	err := p.resolveDoc(ctx, f)
	if err == nil {
		return f, nil
	}
	// Not a frame of the parent's process: an OOPIF.
	s, aerr := p.attachOOPIF(ctx, parent.sess, frameID)
	if aerr != nil {
		return nil, aerr
	}
	f.sess = s
	return f, p.resolveDoc(ctx, f)
}

func (p *Page) oopif(frameID string) (oopif, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.oopifs[frameID]
	return o, ok
}

// attachOOPIF turns on auto-attach on session s (once) and waits for the
// out-of-process frame frameID to be attached, returning its session. With
// frameID "" it only collects the frames attached so far.
func (p *Page) attachOOPIF(ctx context.Context, s *cdp.Page, frameID string) (*cdp.Page, error) {
	a := p.attaches[s]
	if a == nil {
		a = s.AttachOOPIFs(ctx)
		if err := a.Started(); err != nil {
			a.Close()
			return nil, wrapCDP(ctx, err)
		}
		p.attaches[s] = a
	}
	// Chrome reports the existing frames before it answers setAutoAttach; a
	// frame that is still starting may take longer.
	wait := 2 * time.Second
	if frameID == "" {
		wait = 30 * time.Millisecond
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		if frameID != "" {
			if o, ok := p.oopif(frameID); ok {
				return o.Session, nil
			}
		}
		o, err := a.Next(ctx, timer.C)
		switch {
		case errors.Is(err, cdp.ErrConnClosed):
			return nil, output.Errorf("torn-down", "the tab went away")
		case err != nil:
			return nil, output.Wrap("timeout", ctx.Err(), "attaching to a frame")
		case o == nil:
			if frameID == "" {
				return nil, nil
			}
			return nil, fmt.Errorf("%w: frame %s is neither in the page's process nor an attachable target", errGone, frameID)
		}
		p.mu.Lock()
		p.oopifs[o.FrameID] = oopif{OOPIF: *o, parent: s}
		p.mu.Unlock()
		if frameID == "" {
			timer.Reset(wait)
		}
	}
}

// frameByID resolves a frame of the tab by its CDP frame id (for refs and
// --frame): the chain of owners is walked from the top.
func (p *Page) frameByChain(ctx context.Context, chain []string) (*frame, error) {
	f, err := p.topFrame(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range chain {
		owner, err := f.sess.FrameOwner(ctx, id)
		if err != nil {
			if isGone(err) || isProtocol(err) {
				return nil, fmt.Errorf("%w: frame %s: %v", errGone, id, err)
			}
			return nil, wrapCDP(ctx, err)
		}
		obj, err := p.resolveNode(ctx, f, owner)
		if err != nil {
			return nil, err
		}
		var fb frameBoxRes
		if err := p.callValue(ctx, f, obj, map[string]any{"op": "frameBox"}, &fb); err != nil {
			return nil, err
		}
		c, err := p.child(ctx, f, id, owner, fb.Box)
		if err != nil {
			return nil, err
		}
		c.local = fb.Local
		f = c
	}
	return f, nil
}

func isProtocol(err error) bool {
	var pe *cdp.ProtocolError
	return errors.As(err, &pe)
}

// resolveNode gives an objectId for a backend node id in frame f's session
// (in the frame's isolated world when it has one).
func (p *Page) resolveNode(ctx context.Context, f *frame, backendID int64) (string, error) {
	// A frame without its own world (ctxID 0) resolves in the main world.
	res, err := proto.Call(ctx, f.sess, resolveNode, dom.ResolveNodeParams{BackendNodeID: proto.BackendNodeID(backendID), ExecutionContextID: runtime.ExecutionContextID(f.ctxID)})
	if err != nil {
		if isGone(err) || isProtocol(err) {
			return "", fmt.Errorf("%w: %v", errGone, err)
		}
		return "", wrapCDP(ctx, err)
	}
	return res.Object.ObjectID, nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// TabID is the target id of the tab.
func (p *Page) TabID() string { return p.tabID }
