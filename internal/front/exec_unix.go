//go:build unix

package front

import (
	"os"
	"syscall"
)

// execEngine replaces this process with the engine running args (argv[0]
// kept), with extra ("K=V", or "") added to the environment. It returns only
// when the exec fails.
func execEngine(engine string, args []string, extra string) int {
	env := os.Environ()
	if extra != "" {
		env = append(env, extra)
	}
	err := syscall.Exec(engine, args, env)
	return failNoEngine("cannot start dtb's engine " + engine + ": " + err.Error())
}
