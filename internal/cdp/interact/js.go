package interact

import (
	"embed"
	"strings"
	"sync"
)

//go:embed js/*.js
var jsFiles embed.FS

// libJS is the page-side library: the files of js/ joined, in a fixed order,
// into the body of one function `function (req, node) { … }`, which Go calls with
// Runtime.callFunctionOn and req as a JSON argument (node: an element some
// ops take as a second argument). Only these constant files
// make up the code; page and user text travel as arguments.
// Built on first use: commands that never act on the page skip the work at start-up.
var libJS = sync.OnceValue(func() string {
	return buildLib("core.js", "locate.js", "actions.js", "inspect.js", "wait.js", "main.js")
})

func buildLib(names ...string) string {
	var b strings.Builder
	b.WriteString("function (req, node) {\n'use strict';\n")
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
