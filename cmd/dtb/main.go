// Command dtb: see and drive a web app through its dev toolbar and the
// browser. This is the front: it relays browser commands to the session host
// and hands everything else to dtb-engine (internal/front).
package main

import (
	"os"
	"runtime"

	"github.com/dtb-cli/dtb/internal/front"
)

func main() {
	// One P: the front runs one goroutine at a time, and with idle Ps every
	// goroutine it starts wakes another thread (0.6 ms of a hosted eval here).
	runtime.GOMAXPROCS(1)
	os.Exit(front.Main(os.Args))
}
