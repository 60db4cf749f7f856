// Command dtb-engine runs every dtb command itself; the dtb front (cmd/dtb)
// hands it what the session host does not take. Run directly, it is the
// whole of dtb.
package main

import (
	"os"

	"github.com/dtb-cli/dtb/commands"
)

func main() {
	os.Exit(commands.Main(os.Args, commands.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}
