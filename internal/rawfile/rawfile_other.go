//go:build !unix

// Package rawfile reads small files (os.ReadFile off unix).
package rawfile

import "os"

// Read returns the contents of the file at path.
func Read(path string) ([]byte, error) { return os.ReadFile(path) }
