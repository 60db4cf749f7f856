package commands

import (
	"context"

	"github.com/urfave/cli/v2"

	"github.com/dtb-cli/dtb/internal/cdp"
	"github.com/dtb-cli/dtb/internal/output"
	"github.com/dtb-cli/dtb/internal/session"
)

func init() {
	register(&cli.Command{
		Name:     "dialog",
		Category: catBrowser,
		Usage:    "show the tab's JavaScript dialog, or answer it: accept or dismiss",
		UsageText: `dtb dialog [ANSWER] [--text T]

Without ANSWER: whether the tab has a dialog open (its type, message and default
prompt), whether the page is blocked, and an armed answer. ANSWER is accept (a
prompt with --text T, else its default text) or dismiss (cancel).

An alert, confirm, prompt or beforeunload dialog blocks the page until it is
answered. A page command that opens one never hangs: with --dialog accept|dismiss
(DTB_DIALOG) it answers the dialog and goes on; without, it returns at once and
reports the dialog ("dialog": {type, message, defaultPrompt, open}), and the dialog
stays open: a later page command on the tab fails dialog-open, exit 6, naming it,
until dtb dialog answers it. Through the session host (the default) this holds in
every browser, and for a dialog the page opens after its command ended (from a
timer, say) too: the host watches every tab it has used. Attached directly
(DTB_HOST=off), the headless shell dismisses the dialog when the command ends, and
says so.

With no dialog open, accept and dismiss arm the answer: the next dialog the tab
opens is answered so, once (during a dtb command, or between commands through the
session host). Arm it before the action that opens the dialog. Attached directly,
a dialog the browser keeps open after its command ended cannot be answered by a
later connection (the browser lets only the one that saw it open answer it):
accept and dismiss then fail dialog-stale; reload or close the tab.

Examples:
  dtb dialog accept --text 'Ada' && dtb click '#rename'
  dtb click '#delete' --dialog accept --jq .dialog
  dtb dialog --jq .open`,
		Flags: withBrowserFlags(
			&cli.StringFlag{Name: "text", Usage: "accept a prompt with `TEXT` (default: the prompt's default text)"},
		),
		Action: action(runDialog),
	})
}

// dialogFlag is the dialog policy of page commands.
func dialogFlag() cli.Flag {
	return &cli.StringFlag{Name: "dialog", Usage: "answer JavaScript dialogs (alert, confirm, prompt, beforeunload) the page opens: `ANSWER` accept or dismiss (default: leave the dialog open and report it)", EnvVars: []string{"DTB_DIALOG"}, Category: catBrowserFlags}
}

// pageFlags are the command's own flags, the dialog policy and the browser
// flags: the flags of a command that works in a page.
func pageFlags(own ...cli.Flag) []cli.Flag {
	return withBrowserFlags(append(own, dialogFlag())...)
}

func runDialog(c *cli.Context, inv *invocation) (any, error) {
	verb := c.Args().First()
	if c.NArg() > 1 {
		return nil, output.Usage("dialog takes accept or dismiss, got %d arguments", c.NArg())
	}
	answer := ""
	if verb != "" {
		a, err := cdp.ParseDialogAnswer(verb)
		if err != nil {
			return nil, output.Usage("dialog takes accept or dismiss, not %q", verb)
		}
		answer = a
	}
	if c.IsSet("text") && answer != "accept" {
		return nil, output.Usage("--text goes with dialog accept")
	}
	return withTab(c, inv, func(ctx context.Context, sess *session.Session, p *cdp.Page) (any, error) {
		return sess.AnswerTabDialog(ctx, p, answer, c.String("text"))
	})
}

// guardDialogs starts the dialog guard of a page command on p, with the
// command's --dialog policy (see session.Session.GuardDialogs).
func guardDialogs(ctx context.Context, c *cli.Context, sess *session.Session, p *cdp.Page, readDefault, by string) (*session.DialogGuard, error) {
	answer, err := cdp.ParseDialogAnswer(c.String("dialog"))
	if err != nil {
		return nil, err
	}
	return sess.GuardDialogs(ctx, p, answer, readDefault, by)
}
