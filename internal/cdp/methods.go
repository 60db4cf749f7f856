package cdp

// The one list of protocol methods spelled by hand: every call and event of
// dtb goes through cdproto's typed commands and events (typed.go), and a
// method cdproto lacks is named here, with the reason, and nowhere else.
//
// Methods cdproto lacks: none today (cdproto v0.159 has every method dtb
// calls and every event it reads).
//
// Commands whose cdproto types differ from what dtb must send or read are
// declared next to their one use as a proto.Command with cdproto's method
// name (never a string) and a local params or result type:
//
//   - page.GetLayoutMetrics (screenshot.go, getLayoutMetrics): the answer's
//     device-pixel visualViewport, deprecated and left out by cdproto, gives
//     the device pixel ratio of a capture.
//   - page.HandleJavaScriptDialog (dialog.go, handleDialog): promptText must
//     be sent even when empty; an absent one accepts a prompt with its
//     default text.
//   - network.SetCookie (pagedata/cookies.go, setCookie): the answer's
//     deprecated success flag, which cdproto leaves out.
//   - log.EntryAdded (pagedata/console.go, logEntryAdded): an entry's line
//     number 0 told from none.
//   - runtime.CallFunctionOn, runtime.Evaluate, dom.ResolveNode
//     (interact/page.go): cdproto's params; the answer read into interact's
//     view of a remote object (plain string ids, as the action code passes
//     them around).
//   - network.GetResponseBody (pagedata/recorder.go, getResponseBody): the
//     body is text unless base64Encoded says otherwise; cdproto's []byte
//     field would decode every body as base64.
