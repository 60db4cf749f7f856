package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/interact"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "upload",
		Category: catBrowser,
		Usage:    "set local files on a file input (hidden ones too) or behind a file-chooser button",
		UsageText: `dtb upload [@eN] FILE… [locator flags]

Targets a file input (hidden or not), the input of a label, or a styled button that
opens a file chooser (dtb intercepts the chooser: no native dialog opens) and checks
input.files afterwards. The element is given with the locator flags or a leading
@eN; a CSS selector goes in --css.

The path guard: at most 20 files (too-many-files, exit 2); each absolute, with no
symlink in any component, a readable regular file (no folder, FIFO or device); any
path with a component like .ssh, .gnupg, keyrings, cookies, id_rsa, .env, *.pem,
*.key, .bash_history, .config/gh, logins.json, Login Data, /etc/shadow, secret or
token is refused (path-refused, exit 6, naming the component). The browser gets a
private copy of the bytes checked (removed by 'dtb browser stop'). Only names and
sizes are printed, never content.

Examples:
  dtb upload --css 'input[type=file]' /home/me/report.pdf
  dtb upload --role button --name 'Choose files' /tmp/a.png /tmp/b.png`,
		Flags: interactFlags(),
		Action: action(func(c *cli.Context, inv *invocation) (any, error) {
			ref, args := leadingRef(positionals(c))
			if len(args) == 0 {
				return nil, output.Usage("upload wants one or more absolute file paths")
			}
			if _, err := interact.CheckUploadPaths(args); err != nil {
				return nil, err
			}
			loc, err := elementFrom(c, ref, true)
			if err != nil {
				return nil, err
			}
			return withInteract(c, inv, func(ctx context.Context, sess *session.Session, pg *interact.Page) (any, error) {
				pg.UploadDir = sess.UploadDir()
				return pg.Upload(ctx, loc, args, settleFrom(c))
			})
		}),
	})
}
