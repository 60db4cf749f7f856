//go:build !unix

package interact

import "os"

// openNoFollow opens p for reading. Without openat, the component walk of
// lstatNoLinks (just before) and the fstat comparison after are the guard.
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }
