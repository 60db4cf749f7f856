package interact

import (
	"embed"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
)

//go:embed js/*.js
var jsFiles embed.FS

// libJS is the page-side library: the files of js/ joined, in a fixed order,
// into the body of one function `function (req, node, LIB) { … }`, which Go calls with
// Runtime.callFunctionOn and req as a JSON argument (node: an element some
// ops take as a second argument; LIB: the library function itself when the
// document keeps it, where it keeps what one call leaves the next). Only these constant files
// make up the code; page and user text travel as arguments.
// Built on first use: commands that never act on the page skip the work at start-up.
var libJS = sync.OnceValue(func() string {
	return buildLib("core.js", "locate.js", "actions.js", "inspect.js", "annotate.js", "wait.js", "keyguard.js", "main.js")
})

func buildLib(names ...string) string {
	var b strings.Builder
	b.WriteString("function (req, node, LIB) {\n'use strict';\n")
	for _, n := range names {
		src, err := jsFiles.ReadFile("js/" + n)
		if err != nil {
			panic("interact: missing embedded " + n)
		}
		b.Write(src)
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.String()
}

// libCall is the declaration Runtime.callFunctionOn gets in the tab: the
// whole library, which leaves itself on the document as it runs (full), or
// a call of the library left there (short), which returns libMissed when
// there is none (a new document, another dtb build). The property is
// non-enumerable and read-only, on the document object of the world the
// library runs in (the main world, or dtb's isolated world for in-process
// frames). Its name (libKeyFor) is a hash of the library, the tab's target
// id and the document's execution context, none of which the page's scripts
// can know before it is there: they see it once it is, but a new document's
// is another.
//
// What this does not change: in the main world a page's scripts could
// always make the library lie (they can replace any built-in it calls), and
// a proxy on the document's prototype chain can answer the short call under
// any name; the cache gives such a page nothing it did not have, and the
// isolated world of an in-process frame stays out of its reach.
func libCall(key string, full bool) string {
	k, _ := json.Marshal(key)
	if full {
		return "function (req, node) {\nconst lib = (" + libJS() + ");\n" +
			"try { Object.defineProperty(document, " + string(k) + ", { value: lib }); } catch (e) {}\n" +
			"return lib.call(this, req, node, lib);\n}"
	}
	missed, _ := json.Marshal(libMissed)
	return "function (req, node) { const lib = document[" + string(k) + "]; " +
		"return typeof lib === 'function' ? lib.call(this, req, node, lib) : " + string(missed) + "; }"
}

// libHash is a hash of the library.
var libHash = sync.OnceValue(func() uint64 {
	h := fnv.New64a()
	h.Write([]byte(libJS()))
	return h.Sum64()
})

// libKeyFor is the property name of the library in the document whose
// object is docObj (a Runtime object id, "<isolate>.<context>.<n>": the
// part before the last dot names the execution context, stable across
// connections, new with each document) in tab tabID.
func libKeyFor(tabID, docObj string) string {
	return docKey(fmt.Sprintf("%x", libHash()), tabID, docObj)
}

// refsKeyFor is the property name under which the document keeps the
// elements of its last inspect (see keepRefs in inspect.js). It leaves the
// library out, so that a ref outlives a library of another dtb build.
func refsKeyFor(tabID, docObj string) string {
	return docKey("refs", tabID, docObj)
}

// docKey is a property name private to kind, the tab and the document's
// execution context.
func docKey(kind, tabID, docObj string) string {
	scope := ""
	if i := strings.LastIndexByte(docObj, '.'); i > 0 {
		scope = docObj[:i]
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%s", kind, tabID, scope)
	return fmt.Sprintf("__dtb_%016x", h.Sum64())
}

// libMissed is what the short call returns when the document has no library.
const libMissed = "\x00dtb: library missing"

// libMissing reports whether a short call found no library.
func libMissing(r *remote) bool {
	if r.Type != "string" {
		return false
	}
	v := r.Value
	if len(v) == 0 && r.DeepSerializedValue != nil {
		v = r.DeepSerializedValue.Value
	}
	var s string
	return json.Unmarshal(v, &s) == nil && s == libMissed
}
