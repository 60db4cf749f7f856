// Command dtb: see and drive a web app through its dev toolbar and the browser.
package main

import (
	"os"

	"github.com/dtb-cli/dtb/commands"
)

func main() {
	os.Exit(commands.Main(os.Args, commands.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}))
}
