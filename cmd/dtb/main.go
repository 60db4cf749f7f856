// Command dtb: see and drive a web app through its dev toolbar and the
// browser. This is the front: it relays browser commands to the session host
// and hands everything else to dtb-engine (internal/front).
package main

import (
	"os"

	"github.com/dtb-cli/dtb/internal/front"
)

func main() { os.Exit(front.Main(os.Args)) }
