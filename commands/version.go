package commands

import (
	"runtime"

	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "version",
		Category:  catSetup,
		Usage:     "print dtb's version",
		UsageText: "dtb version\n\nExample:\n  dtb version -r --jq .version",
		Action: action(noArgs(func(c *cli.Context, inv *invocation) (any, error) {
			return map[string]string{"version": versionString(), "go": runtime.Version(), "os": runtime.GOOS, "arch": runtime.GOARCH}, nil
		})),
	})
}
