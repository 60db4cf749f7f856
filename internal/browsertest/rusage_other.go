//go:build !unix

package browsertest

import "os"

func maxRSS(*os.ProcessState) int64 { return 0 }
