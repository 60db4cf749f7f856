package commands

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/toolbar"
)

// cdpSessionReachable reports whether the session's browser is up (no launch).
func cdpSessionReachable(c *cli.Context) bool { return false }

func cdpToolbar(c *cli.Context, timeout time.Duration) (toolbar.Transport, error) {
	return nil, output.Errorf("no-browser", "the toolbar over CDP needs a browser session")
}
