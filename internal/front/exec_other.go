//go:build !unix

package front

import (
	"errors"
	"os"
	"os/exec"
)

// execEngine runs the engine with args and the same streams, with extra
// ("K=V", or "") added to the environment, and returns its exit code.
func execEngine(engine string, args []string, extra string) int {
	cmd := exec.Command(engine, args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if extra != "" {
		cmd.Env = append(cmd.Env, extra)
	}
	err := cmd.Run()
	var xe *exec.ExitError
	if errors.As(err, &xe) {
		return xe.ExitCode()
	}
	if err != nil {
		return failNoEngine("cannot start dtb's engine " + engine + ": " + err.Error())
	}
	return 0
}
